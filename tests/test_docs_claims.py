"""docs/architecture.md's claims about where arguments are parsed and how plug-ins are found, held against the
code: every module that parses arguments outside the command line is named there, and every component folder finds
its modules without naming them."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARCHITECTURE = REPO / "docs" / "architecture.md"
#: the command line: parses argv for every ``simdist`` command
COMMAND_LINE = ("simdist/cli.py", "simdist/tools/")
#: the modules outside the command line that docs/architecture.md names as parsing arguments of their own
DOCUMENTED = {
    "simdist/tasks.py", "simdist/training/cli.py", "simdist/training/run_state.py", "simdist/fsutil.py",
    "simdist/arguments.py",
    "components/tasks/toy_reach/demo.py",
}
#: component folders whose ``__init__`` imports every module it holds (``registry.import_submodules``)
DISCOVERING = ("encoders", "dynamics", "heads", "planners")


def parses_arguments(path: Path) -> bool:
    """Whether ``path`` calls ``parse_args`` / ``parse_known_args`` or reads ``sys.argv``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("parse_args", "parse_known_args"):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "argv" and isinstance(node.value, ast.Name) and \
                node.value.id == "sys":
            return True
    return False


def test_argument_parsing_outside_the_command_line_is_documented() -> None:
    found = {p.relative_to(REPO).as_posix() for root in ("simdist", "components") for p in (REPO / root).rglob("*.py")
             if parses_arguments(p)}
    outside = {p for p in found if not p.startswith(COMMAND_LINE)}
    assert outside == DOCUMENTED, f"parse arguments but are not listed: {sorted(outside - DOCUMENTED)}; listed but " \
                                  f"do not: {sorted(DOCUMENTED - outside)}"
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert not [p for p in DOCUMENTED if f"`{p}`" not in text]
    assert "simdist/workflows/demo_pipeline.py" in text


def test_component_folders_name_no_component() -> None:
    """A new encoder, dynamics, head or planner is a new file: the folder's ``__init__`` imports whatever it
    holds and names none of them."""
    for folder in DISCOVERING:
        init = REPO / "components" / folder / "__init__.py"
        tree = ast.parse(init.read_text(encoding="utf-8"))
        imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
        assert [(n.module, [a.name for a in n.names]) for n in imports if isinstance(n, ast.ImportFrom)] == \
            [("simdist.registry", ["import_submodules"])], init
        assert not [n for n in imports if isinstance(n, ast.Import)], init
