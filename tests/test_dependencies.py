"""Every third-party package the library imports is declared in pyproject (core or a user-facing extra)."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
#: imported only when already installed, never required: triton (torch's compiler backend) is preloaded
#: before the first GL context when present (simdist.offscreen)
OPTIONAL = {"triton"}


def _imported_top_levels() -> dict[str, set[str]]:
    """Top-level module names imported anywhere in the package (module or function level) -> files."""
    found: dict[str, set[str]] = {}
    for base in ("simdist", "components"):
        for path in (ROOT / base).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    reqs += [r for extra, items in project["optional-dependencies"].items() if extra != "dev" for r in items]
    return {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower().replace("_", "-") for r in reqs}


def test_imports_are_declared() -> None:
    dists = packages_distributions()
    declared = _declared()
    missing = {}
    for module, files in _imported_top_levels().items():
        if module in sys.stdlib_module_names or module == "simdist" or module in OPTIONAL:
            continue
        names = {d.lower().replace("_", "-") for d in dists.get(module, [module])}
        if not names & declared:
            missing[module] = sorted(files)
    assert not missing, f"imported but not declared in pyproject (dependencies or an extra): {missing}"
