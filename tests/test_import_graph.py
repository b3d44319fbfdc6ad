"""No import cycles between simdist modules, and the layers hold (the core, the plug-ins, the command line).

Every module of the package (``simdist/`` and ``components/``, installed as ``simdist.components``) is parsed
with ``ast``; each ``import``/``from`` statement adds an edge, whether it runs at import time or inside a
function, and whether it runs at all: imports under ``if TYPE_CHECKING:`` count too (a circle of type-only imports
still ties the modules into one). Dynamic imports (``importlib.import_module``), which are how plug-ins and lazy
attributes load, are left out.

An import of ``a.b.c`` also runs the ``__init__`` of ``a`` and ``a.b``; those implicit edges count too, except
into a package the importing module belongs to (it is already being imported by then).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Package name -> source folder, as pyproject's package-dir maps them.
TREES = {"simdist": REPO / "simdist", "simdist.components": REPO / "components"}
#: The facade that only re-exports; code inside simdist imports from its job modules instead.
FACADES = ("simdist.hub",)


# ------------------------------------------------------------------------------------------ graph
def discover(trees: Mapping[str, Path] = TREES) -> dict[str, Path]:
    """Module name -> source file for every ``.py`` file under the trees."""
    modules: dict[str, Path] = {}
    for package, root in trees.items():
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join((package, *parts))
            modules[name] = path
    return modules


def _statements(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """All import statements of ``tree``, at any depth (``if TYPE_CHECKING:`` blocks included)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def imported_names(module: str, path: Path) -> list[tuple[str, str | None, int]]:
    """``(module, attribute or None, line)`` for each name ``module``'s import statements bring in."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[str, str | None, int]] = []
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None, node.lineno) for alias in node.names)
        else:
            target = _absolute(node, module, path.name == "__init__.py")
            found.extend((target, alias.name, node.lineno) for alias in node.names)
    return found


def _known(name: str, modules: Iterable[str]) -> str | None:
    """The longest prefix of ``name`` that is a known module."""
    known = set(modules)
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None


def build_graph(modules: Mapping[str, Path]) -> dict[str, dict[str, int]]:
    """Module -> {imported module: first line}, restricted to the known modules (see the module docstring)."""
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for module, path in modules.items():
        for target, attr, line in imported_names(module, path):
            named = f"{target}.{attr}" if f"{target}.{attr}" in modules else _known(target, modules)
            if named is None:
                continue
            parents = [".".join(named.split(".")[:i]) for i in range(1, named.count(".") + 1)]
            for dep in (named, *parents):
                implicit = dep != named
                if dep == module or (implicit and module.startswith(dep + ".")) or dep not in modules:
                    continue
                graph[module][dep] = min(line, graph[module].get(dep, line))
    return graph


def find_cycles(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """The strongly connected components with a cycle (Tarjan), each as a sorted list of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(root: str) -> None:
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    cycles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return cycles


def cycle_path(graph: Mapping[str, Mapping[str, int]], component: list[str]) -> list[str]:
    """One concrete cycle through ``component``: modules from its first member back to it (breadth first)."""
    start, members = component[0], set(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for dep in sorted(graph[node]):
                if dep == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if dep in members and dep not in previous:
                    previous[dep] = node
                    following.append(dep)
        frontier = following
    return [start]


def describe(graph: Mapping[str, Mapping[str, int]], modules: Mapping[str, Path], component: list[str]) -> str:
    path = cycle_path(graph, component)
    steps = [f"    {a} -> {b}  ({modules[a].relative_to(REPO) if modules[a].is_relative_to(REPO) else modules[a]}"
             f":{graph[a][b]})" for a, b in zip(path, path[1:])]
    return f"  cycle among {', '.join(component)}:\n" + "\n".join(steps)


# ------------------------------------------------------------------------------------------ the checks
def test_no_import_cycles() -> None:
    modules = discover()
    assert {"simdist.hub", "simdist.hub.load", "simdist.zoo", "simdist.model.world_model"} <= set(modules)
    graph = build_graph(modules)
    cycles = find_cycles(graph)
    assert not cycles, ("import cycles between simdist modules (function-level imports count; break them by "
                        "passing objects in or moving shared names to a module both can import):\n"
                        + "\n".join(describe(graph, modules, c) for c in cycles))


#: what the hub's modules may import besides each other (type-checking imports included): the package (its version),
#: lazy attributes, file helpers and errors, the zoo's index (the offline fallback) and the preset names (a hint for
#: a bare name), with their package ``simdist.model`` (a docstring only). Never a model or its config, an agent, a
#: planner or the command line.
HUB_MAY_IMPORT = {"simdist", "simdist.lazy", "simdist.fsutil", "simdist.errors", "simdist.zoo", "simdist.model",
                  "simdist.model.presets"}


def test_hub_layering() -> None:
    """The hub is plain I/O: it writes and reads a config dict, a state dict and extra files; the classes that save
    (``WorldModel`` through ``HubMixin``, the agents) sit above it. The zoo's index needs only the file names;
    publishing the zoo (``simdist.zoo.publish``) sits above the models and agents it checks."""
    graph = build_graph(discover())
    assert graph["simdist.hub.files"] == {} and set(graph["simdist.hub"]) == {"simdist.lazy"}  # loads lazily
    assert graph["simdist.lazy"] == {}
    assert graph["simdist.model"] == {}  # the hub may import the model package: it must stay empty
    assert {dep for dep in graph["simdist.zoo"] if dep.startswith("simdist.hub")} <= {"simdist.hub",
                                                                                       "simdist.hub.files"}
    hub_modules = [m for m in graph if m == "simdist.hub" or m.startswith("simdist.hub.")]
    assert {"simdist.hub.folder", "simdist.hub.load", "simdist.hub.mixin", "simdist.hub.push"} <= set(hub_modules)
    for module in hub_modules:
        outside = {dep for dep in graph[module] if not dep.startswith("simdist.hub")} - HUB_MAY_IMPORT
        assert not outside, f"{module} imports {sorted(outside)}"
    assert "simdist.hub.mixin" in graph["simdist.model.world_model"]
    assert {"simdist.agents", "simdist.model.world_model"} <= set(graph["simdist.zoo.publish"])


def test_internal_code_avoids_the_facades() -> None:
    """Inside simdist, ``from simdist.hub import X`` names the job module (``simdist.hub.load`` ...)."""
    modules = discover()
    offenders = []
    for module, path in modules.items():
        for target, attr, line in imported_names(module, path):
            facade = target if target in FACADES else f"{target}.{attr}" if f"{target}.{attr}" in FACADES else None
            if facade is None or (target == facade and attr is not None and f"{target}.{attr}" in modules):
                continue  # not the facade, or one of its job modules
            statement = f"import {target}" if attr is None else f"from {target} import {attr}"
            offenders.append(f"{path.relative_to(REPO)}:{line}: {statement}")
    assert not offenders, "import from the job modules of simdist.hub instead:\n" + "\n".join(offenders)


# ------------------------------------------------------------------------------------------ the layers
#: The layers, by module-name prefix: plug-ins (tasks, agents and the other components) and the command line.
PLUGINS, TASKS, AGENTS = "simdist.components", "simdist.components.tasks", "simdist.components.agents"
CLI = ("simdist.cli", "simdist.tools")
#: The agents' shared body: the one agent folder other agents may import.
SHARED = "latent"


def _in(module: str, prefixes: str | tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in ((prefixes,) if isinstance(prefixes, str)
                                                                    else prefixes))


def _agent_folder(module: str) -> str | None:
    """The agent folder ``module`` belongs to (``bc`` for ``simdist.components.agents.bc.policy``), or None."""
    parts = module.split(".")
    return parts[3] if _in(module, AGENTS) and len(parts) > 3 else None


def layer_violations(graph: Mapping[str, Mapping[str, int]], modules: Mapping[str, Path]) -> list[str]:
    """Edges that break a layer rule, as ``file:line: a -> b (rule)``:

    * the core (``simdist`` outside ``simdist.components``) imports no plug-in module; it reaches plug-ins by
      registry name only (``create``/``get``, which import them dynamically);
    * tasks and agents never import the command line (``simdist.cli``, ``simdist.tools``);
    * agents never import tasks;
    * an agent's folder imports no other agent's folder, only the shared body ``latent/``.
    """
    rules: tuple[tuple[Callable[[str, str], bool], str], ...] = (
        (lambda a, b: not _in(a, PLUGINS) and _in(b, PLUGINS), "the core imports a plug-in"),
        (lambda a, b: _in(a, (TASKS, AGENTS)) and _in(b, CLI), "a task or agent imports the command line"),
        (lambda a, b: _in(a, AGENTS) and _in(b, TASKS), "an agent imports a task"),
        (lambda a, b: _agent_folder(a) not in (None, _agent_folder(b)) and _agent_folder(b) not in (None, SHARED),
         "an agent imports another agent"),
    )
    found: dict[tuple[str, int, str], str] = {}  # one per statement and rule: its deepest module
    for a, deps in graph.items():
        for b, line in deps.items():
            for broken, rule in rules:
                if broken(a, b) and len(b) > len(found.get((a, line, rule), "")):
                    found[a, line, rule] = b
    return sorted(f"  {modules[a].relative_to(REPO) if modules[a].is_relative_to(REPO) else modules[a]}:{line}: "
                  f"{a} -> {b}  ({rule})" for (a, line, rule), b in found.items())


def test_layers() -> None:
    modules = discover()
    violations = layer_violations(build_graph(modules), modules)
    assert not violations, ("layer rules broken (move the shared code into the core, pass objects in, or look the "
                            "plug-in up by its registered name):\n" + "\n".join(violations))


def test_layer_checker_finds_each_rule(tmp_path: Path) -> None:
    _write(tmp_path / "simdist", {
        "__init__.py": "", "core.py": "from simdist.components.tasks.t import X\n", "cli.py": "",
        "tools/__init__.py": "", "tools/run.py": "from simdist.components.tasks import t\n",
        "lazy.py": "import importlib\nimportlib.import_module('simdist.components.tasks.t')\n",
    })
    _write(tmp_path / "components", {
        "__init__.py": "", "tasks/__init__.py": "", "tasks/t.py": "def f():\n    from simdist.cli import main\n",
        "agents/__init__.py": "", "agents/a.py": "from simdist.components.tasks.t import X\nfrom simdist import core\n",
        "agents/b/__init__.py": "from simdist.components.agents.latent import Body\n",
        "agents/c/__init__.py": "from simdist.components.agents.b import B\n", "agents/latent/__init__.py": "",
    })
    modules = discover({"simdist": tmp_path / "simdist", "simdist.components": tmp_path / "components"})
    found = layer_violations(build_graph(modules), modules)
    assert [line.split("  (")[1] for line in found] == [
        "an agent imports a task)", "an agent imports another agent)", "a task or agent imports the command line)",
        "the core imports a plug-in)", "the core imports a plug-in)"]
    assert any("simdist.components.agents.c -> simdist.components.agents.b" in line for line in found)
    assert any("simdist.tools.run -> simdist.components.tasks.t" in line for line in found)
    assert not any("simdist.lazy" in line for line in found)  # a dynamic import is a lookup by name


# ------------------------------------------------------------------------------------------ the checker itself
def _write(root: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.parametrize("files, cycle", [
    ({"__init__.py": "", "a.py": "from pkg import b\n", "b.py": "def f():\n    from pkg.a import x\n"},
     ["pkg.a", "pkg.b"]),  # a function-level import closes the loop
    ({"__init__.py": "", "a.py": "from .b import y\n", "b.py": "import pkg.c\n", "c.py": "from . import a\n"},
     ["pkg.a", "pkg.b", "pkg.c"]),  # relative imports
    ({"__init__.py": "", "z.py": "from pkg.sub.files import N\n", "sub/__init__.py": "from pkg.sub.r import f\n",
      "sub/files.py": "N = 1\n", "sub/r.py": "from pkg.z import g\n"},
     ["pkg.sub", "pkg.sub.r", "pkg.z"]),  # importing pkg.sub.files runs pkg.sub's __init__ first
    ({"__init__.py": "", "a.py": "from pkg.b import y\n",
      "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import X\n"},
     ["pkg.a", "pkg.b"]),  # an import for type checkers only still closes the loop
])
def test_checker_finds_cycles(tmp_path: Path, files: dict[str, str], cycle: list[str]) -> None:
    _write(tmp_path / "pkg", files)
    modules = discover({"pkg": tmp_path / "pkg"})
    graph = build_graph(modules)
    assert find_cycles(graph) == [cycle]
    path = cycle_path(graph, cycle)
    assert path[0] == path[-1] and set(path) == set(cycle)


def test_checker_accepts_layered_code(tmp_path: Path) -> None:
    _write(tmp_path / "pkg", {
        "__init__.py": "from pkg.core import run\n",  # a package importing its own modules is fine
        "core.py": "import os\nfrom pkg import util\nfrom pkg.util import helper\n",
        "util.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from collections.abc import Callable\n"
                   "def helper():\n    import json\n",
    })
    modules = discover({"pkg": tmp_path / "pkg"})
    graph = build_graph(modules)
    assert graph == {"pkg": {"pkg.core": 1}, "pkg.core": {"pkg.util": 2}, "pkg.util": {}}
    assert find_cycles(graph) == []

