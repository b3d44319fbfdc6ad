"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks:``).

* The API reference is generated from the public API: one page per package of :data:`API_PACKAGES`, one entry per
  name of its ``__all__``, rendered by mkdocstrings from the docstrings. A public name, or a public method or
  property of a public class, without a docstring is a warning, so ``mkdocs build --strict`` fails on it; so is a
  constant without its ``#:`` comment.
* Repository files outside ``docs/`` that a page links to (``../results/README.md``, figures under ``results/``)
  are copied into the site under ``repository/`` as they are, and the links point there. A link to a repository
  file that does not exist stays unresolved, so strict mode fails on it like on any broken link.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import posixpath
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel

log = logging.getLogger("mkdocs.hooks.simdist")

#: the public API (docs/architecture.md, "The Python API"): the packages whose ``__all__`` the reference documents,
#: with each page's title line
API_PACKAGES = {
    "simdist": "models, agents, tasks, evaluation, adaptation and the component registry",
    "simdist.data": "trajectory data: the episode schema, shards, statistics, windows and the DataModule",
    "simdist.planning": "the planner contract, presets, the observation history, temporal ensembling",
    "simdist.training": "the Lightning modules of pretraining and finetuning, and held-out evaluation",
    "simdist.diagnostics": "plan ranking against true returns and action information",
}
REPOSITORY = "repository"  # where linked repository files land in the site
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def api_page(package: str) -> str:
    """The Markdown of ``package``'s reference page: its docstring, then one mkdocstrings entry per public name
    (constants in a table with their ``#:`` comment)."""
    module = importlib.import_module(package)
    lines = [f"# `{package}`", "", f"{API_PACKAGES[package][0].upper()}{API_PACKAGES[package][1:]}.", "",
             f"::: {package}", "    options:", "      members: false", "      show_root_heading: false", ""]
    constants = []
    for name in module.__all__:
        target = resolve(module, name)
        if target is None:
            constants.append(name)
            continue
        check_documented(f"{package}.{name}", public_object(module, name))
        lines += [f"::: {target}", ""]
    if constants:
        lines += ["## Constants", "", "| name | value | meaning |", "|---|---|---|"]
        for name in constants:
            value, meaning = constant(module, name)
            lines.append(f"| `{package}.{name}` | `{value}` | {meaning} |")
        lines.append("")
    return "\n".join(lines)


def public_object(package: ModuleType, name: str) -> Any:
    """``package.name``, loading a lazily loaded name; where a submodule of the same name shadows it (it was
    imported), the name inside that submodule."""
    obj = getattr(package, name)
    return getattr(obj, name) if inspect.ismodule(obj) else obj


def resolve(package: ModuleType, name: str) -> str | None:
    """The defining module's path of a class or function of ``package.__all__`` (``module.name``); None for a
    constant."""
    obj = public_object(package, name)
    if not (inspect.isclass(obj) or inspect.isfunction(obj)):
        return None
    return f"{obj.__module__}.{obj.__name__}"


def check_documented(public: str, obj: Any) -> None:
    """Warn (a failure under ``--strict``) for a public object, or a public method or property of a public class,
    without its own docstring: mkdocstrings would render it empty."""
    if not (obj.__doc__ or "").strip():
        log.warning("API reference: %s has no docstring", public)
    if not inspect.isclass(obj):
        return
    for key, member in vars(obj).items():
        if key.startswith("_"):
            continue
        func = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
        if (inspect.isfunction(func) or isinstance(member, property)) and not (func.__doc__ or "").strip():
            log.warning("API reference: %s.%s has no docstring", public, key)


def constant(package: ModuleType, name: str) -> tuple[str, str]:
    """A constant's value and its ``#:`` comment in the module that assigns it (a warning without one)."""
    value = getattr(package, name)
    if name == "__version__":
        return value, "the installed simdist's version"
    for module in _modules_of(package):
        source = Path(inspect.getfile(module)).read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(source):
            if re.match(rf"{re.escape(name)}\s*(:[^=]*)?=", line):
                comment = []
                while i > 0 and source[i - 1].lstrip().startswith("#:"):
                    i -= 1
                    comment.insert(0, source[i].lstrip()[2:].strip())
                if comment:
                    return _short(value), " ".join(comment).replace("|", "\\|")
    log.warning("API reference: %s.%s has no #: comment where it is assigned", package.__name__, name)
    return _short(value), ""


def _modules_of(package: ModuleType) -> list[ModuleType]:
    """``package`` and its loaded submodules (where a re-exported constant may be assigned)."""
    prefix = package.__name__ + "."
    return [package, *(m for n, m in sorted(sys.modules.items()) if n.startswith(prefix) and m is not None)]


def _short(value: Any) -> str:
    text = repr(value).replace("|", "\\|")
    return text if len(text) <= 80 else text[:77] + "..."


def repository_links(docs_dir: Path, src_uri: str) -> set[str]:
    """The targets (relative to ``docs_dir``, starting ``../``) of the page's links that leave ``docs/``."""
    text = (docs_dir / src_uri).read_text(encoding="utf-8")
    found = set()
    for url in _LINK.findall(text):
        path = url.split("#", 1)[0]
        if not path or "://" in path or path.startswith(("/", "mailto:")):
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), path))
        if target.startswith("../"):
            found.add(target)
    return found


class RepositoryFile(File):
    """A repository file outside ``docs/`` that a page links to: copied into the site as it is, never rendered."""

    def is_documentation_page(self) -> bool:
        return False

    def is_static_page(self) -> bool:
        return False


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated API pages and the linked repository files."""
    for package in API_PACKAGES:
        files.append(File.generated(config, f"api/{package}.md", content=api_page(package)))
    docs_dir = Path(config["docs_dir"])
    repo = docs_dir.parent.resolve()
    targets: set[str] = set()
    for file in list(files):
        if file.is_documentation_page() and file.abs_src_path and Path(file.abs_src_path).is_file():
            targets |= repository_links(docs_dir, file.src_uri)
    for target in sorted(targets):
        path = (docs_dir / target).resolve()
        if path.is_file() and repo in path.parents:  # anything else stays a broken link
            rel = path.relative_to(repo).as_posix()
            files.append(RepositoryFile(target, str(docs_dir), config["site_dir"], config["use_directory_urls"],
                                        dest_uri=f"{REPOSITORY}/{rel}", inclusion=InclusionLevel.INCLUDED))
    return files
