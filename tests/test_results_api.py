"""The scripts of ``results/`` and ``benchmarks/`` use simdist's public API and its command line only.

The public API is ``simdist.__all__`` plus the ``__all__`` of the documented public subpackages in
:data:`PUBLIC_MODULES` (docs/architecture.md, "The Python API"): the one place that says what a script may import.
Every script is parsed with ``ast``; every import counts, at module level or inside a function, and so do
``importlib.import_module("simdist...")`` with a literal name and the attributes ``simdist.NAME`` of a plain
``import simdist``. The checks:

* a simdist name is imported from a public module and is in its ``__all__`` (plug-ins are reached by registered
  name, ``simdist.get("agent", "bc")``, or through the public objects that return them, ``make_task(...)``); the one
  exception is research on one robot's own internals: a script under ``results/AREA/`` may import the task plug-in
  of the same name, ``simdist.components.tasks.AREA`` (e.g. ``results/ur5e/label_gate.py`` studies the UR5e
  plug-in's value labels), never another plug-in and never the core's inside;
* no name starting with ``_`` is imported from another package;
* no script edits ``sys.path`` or sets ``PYTHONPATH`` for a child: the runners run as modules from the repository
  root (``python -m results run EXPERIMENT``, ``python -m results.go2.analysis.walk_ci``), and simdist is installed.
  The one exception is :data:`PINS_CHECKOUT`: the regeneration check runs another checkout's code (a scratch copy
  of ``HEAD``) with this environment's installed packages, so it puts that checkout first on its children's path.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = ("results", "benchmarks")
#: The subpackages whose ``__all__`` is public API besides ``simdist``'s own (each documented in docs/architecture.md).
PUBLIC_MODULES = ("simdist.data", "simdist.diagnostics", "simdist.planning", "simdist.training")

#: scripts that set ``PYTHONPATH`` for a child to run a scratch checkout's own code (``python -m results verify``)
PINS_CHECKOUT = frozenset({"results/lab/verify.py"})

Api = Mapping[str, frozenset[str]]


def public_api() -> dict[str, frozenset[str]]:
    """Public module -> the names it exports (``__all__``)."""
    return {name: frozenset(importlib.import_module(name).__all__) for name in ("simdist", *PUBLIC_MODULES)}


# ------------------------------------------------------------------------------------------ the checker
def _is_simdist(module: str) -> bool:
    return module == "simdist" or module.startswith("simdist.")


def studied_plugin(path: Path, root: Path, folder: str) -> str | None:
    """``simdist.components.tasks.AREA`` for a script under ``results/AREA/`` when ``components/tasks/AREA`` is a
    task plug-in: the one plug-in that script may reach below the public API."""
    parts = path.relative_to(root / folder).parts
    if folder != "results" or len(parts) < 2 or not (REPO / "components" / "tasks" / parts[0]).is_dir():
        return None
    return f"simdist.components.tasks.{parts[0]}"


def _studies(module: str, plugin: str | None) -> bool:
    return plugin is not None and (module == plugin or module.startswith(plugin + "."))


def _module_problem(module: str, api: Api, plugin: str | None = None) -> str | None:
    if _is_simdist(module) and module not in api and not _studies(module, plugin):
        return f"{module} is not a public module"
    return None


def _name_problem(module: str, name: str, api: Api, plugin: str | None = None) -> str | None:
    if not _is_simdist(module) or _studies(module, plugin) or _studies(f"{module}.{name}", plugin):
        return None
    if module not in api:
        return f"{module} is not a public module"
    if name not in api[module] and f"{module}.{name}" not in api:
        return f"{name} is not in {module}.__all__"
    return None


def _own(module: str, path: Path, folder: str) -> bool:
    """Whether ``module`` belongs to the script's own package: its folder's package or a module beside it."""
    root = module.split(".")[0]
    return root == folder or (path.parent / f"{root}.py").is_file() or (path.parent / root).is_dir()


def _literal_import(node: ast.Call) -> str | None:
    """The module name of ``importlib.import_module("...")`` / ``__import__("...")`` with a literal name."""
    func = node.func
    dynamic = (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id in ("import_module", "__import__"))
    if dynamic and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def _problems(path: Path, folder: str, api: Api, plugin: str | None = None) -> Iterator[tuple[int, str]]:
    """``(line, what)`` for each broken rule in one script (``plugin``: the task plug-in it may study)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    aliases = {a.asname or "simdist" for node in ast.walk(tree) if isinstance(node, ast.Import)
               for a in node.names if a.name == "simdist" or (a.asname is None and _is_simdist(a.name))}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) \
                and node.value.id == "sys":
            yield line, "sys.path edited"
        elif isinstance(node, ast.Constant) and node.value == "PYTHONPATH":
            yield line, "PYTHONPATH set"
        elif isinstance(node, ast.Import):
            for a in node.names:
                problem = _module_problem(a.name, api, plugin)
                if problem:
                    yield line, f"import {a.name}: {problem}"
                if any(part.startswith("_") for part in a.name.split(".")) and not _own(a.name, path, folder):
                    yield line, f"import {a.name}: a private name of another package"
        elif isinstance(node, ast.ImportFrom) and not node.level:
            module = node.module or ""
            for a in node.names:
                problem = _name_problem(module, a.name, api, plugin)
                if problem:
                    yield line, f"from {module} import {a.name}: {problem}"
                if a.name.startswith("_") and not _own(module, path, folder):
                    yield line, f"from {module} import {a.name}: a private name of another package"
        elif isinstance(node, ast.Call) and (target := _literal_import(node)) is not None:
            problem = _module_problem(target, api, plugin)
            if problem:
                yield line, f"import_module({target!r}): {problem}"
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            problem = _name_problem("simdist", node.attr, api)
            if problem:
                yield line, f"{node.value.id}.{node.attr}: {problem}"


def script_violations(root: Path = REPO, folders: tuple[str, ...] = SCRIPTS, api: Api | None = None) -> list[str]:
    """``file:line: what`` for every broken rule in the scripts under ``folders`` (see the module docstring)."""
    api = public_api() if api is None else api
    found = {(str(path.relative_to(root)), line, what) for folder in folders
             for path in (root / folder).rglob("*.py")
             for line, what in _problems(path, folder, api, studied_plugin(path, root, folder))
             if not (what == "PYTHONPATH set" and str(path.relative_to(root)) in PINS_CHECKOUT)}
    return [f"{file}:{line}: {what}" for file, line, what in sorted(found)]


# ------------------------------------------------------------------------------------------ the checks
def test_scripts_use_only_the_public_api() -> None:
    found = script_violations()
    assert not found, ("results/ and benchmarks/ reach below simdist's public API (export what users need from "
                       "simdist, reach plug-ins by registered name, keep experiment plumbing in results/runner.py, "
                       "or run the command line):\n" + "\n".join(found))


def test_public_modules_are_documented() -> None:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in text for name in PUBLIC_MODULES), PUBLIC_MODULES


def test_checker_finds_each_rule(tmp_path: Path) -> None:
    api = {"simdist": frozenset({"make_task", "get"}), "simdist.data": frozenset({"iter_episodes"})}
    scripts = {
        "a.py": "import sys\nsys.path.insert(0, 'x')\nfrom simdist.m import _private, ok\n",
        "b.py": "import os\nenv = {**os.environ, 'PYTHONPATH': '.'}\n",
        "c.py": "def f():\n    from simdist.components.tasks.go2.protocol import run_protocol\n"
                "    from simdist.data import iter_episodes, read_dataset_info\n",
        "d.py": "import simdist\nimport simdist.fsutil\nsimdist.make_task('go2')\nsimdist.WorldModel\n",
        "e.py": "import importlib\nimportlib.import_module('simdist.tasks')\nfrom helper import _local\n"
                "from results.runner import _plumbing\nfrom numpy import _private\n",
        "helper.py": "",
        "ok.py": "from simdist import get, make_task\nfrom simdist.data import iter_episodes\nimport simdist.data\n"
                 "import importlib\nimportlib.import_module('json')\n",
        # a script of results/ur5e/ studies the UR5e plug-in, and that one only
        "ur5e/study.py": "from simdist.components.tasks.ur5e.value import run_prefix\n"
                         "import simdist.components.tasks.ur5e.expert\n"
                         "from simdist.components.tasks.go2 import protocol\nfrom simdist.rows import take_rows\n",
    }
    for name, text in scripts.items():
        (tmp_path / "results" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "results" / name).write_text(text)
    assert script_violations(tmp_path, ("results",), api) == [
        "results/a.py:2: sys.path edited",
        "results/a.py:3: from simdist.m import _private: a private name of another package",
        "results/a.py:3: from simdist.m import _private: simdist.m is not a public module",
        "results/a.py:3: from simdist.m import ok: simdist.m is not a public module",
        "results/b.py:2: PYTHONPATH set",
        "results/c.py:2: from simdist.components.tasks.go2.protocol import run_protocol: "
        "simdist.components.tasks.go2.protocol is not a public module",
        "results/c.py:3: from simdist.data import read_dataset_info: read_dataset_info is not in simdist.data.__all__",
        "results/d.py:2: import simdist.fsutil: simdist.fsutil is not a public module",
        "results/d.py:4: simdist.WorldModel: WorldModel is not in simdist.__all__",
        "results/e.py:2: import_module('simdist.tasks'): simdist.tasks is not a public module",
        "results/e.py:5: from numpy import _private: a private name of another package",
        "results/ur5e/study.py:3: from simdist.components.tasks.go2 import protocol: simdist.components.tasks.go2 is "
        "not a public module",
        "results/ur5e/study.py:4: from simdist.rows import take_rows: simdist.rows is not a public module",
    ]
