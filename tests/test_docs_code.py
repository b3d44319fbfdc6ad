"""Every ```python block of README.md and docs/**/*.md runs, offline on the CPU, as a user would paste it.

Each block runs with ``exec`` in a fresh namespace, in an empty working folder that links the repository's
``hub/`` and ``recipes/`` (the paths the docs name), with the registry restored afterwards (blocks that show
how to register a plug-in register it). An HTML comment on the line before a block's fence says how it runs:

* ``<!-- continues -->``: in the namespace the previous block of the same file left (one test for the chain);
* ``<!-- slow: WHY -->``: only in the slow run (``pytest -m slow``);
* ``<!-- no-run: WHY -->``: never; the reason is shown as the skip reason (only where running is impossible).
"""

from __future__ import annotations

import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
LINKED = ("hub", "recipes")
_FENCE = re.compile(r"^```(\w*)\s*$")
_MARKER = re.compile(r"^<!--\s*(continues|slow|no-run)\s*(?::\s*(.*?))?\s*-->\s*$")


@dataclass
class Block:
    """One ```python block: where it starts (the fence's line) and its code."""

    path: Path
    line: int
    code: str
    marker: str | None = None
    reason: str = ""


@dataclass
class Chain:
    """A block and the ``continues`` blocks after it: they run in order in one namespace."""

    blocks: list[Block] = field(default_factory=list)

    @property
    def id(self) -> str:
        head = self.blocks[0]
        return f"{head.path.relative_to(REPO)}:{head.line}"


def python_blocks(path: Path) -> list[Block]:
    """The ```python blocks of a Markdown file, each with the marker comment right above its fence."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    inside: Block | None = None
    body: list[str] = []
    for number, line in enumerate(lines, start=1):
        fence = _FENCE.match(line)
        if inside is None and fence and fence.group(1):
            if fence.group(1) == "python":
                marker = _MARKER.match(lines[number - 2]) if number > 1 else None
                inside = Block(path, number, "", *(marker.groups("") if marker else (None, "")))
                body = []
            else:
                inside = Block(path, number, "", "other")  # another language: skipped to its closing fence
        elif inside is not None and fence and not fence.group(1):
            if inside.marker != "other":
                inside.code = "\n".join(body) + "\n"
                blocks.append(inside)
            inside = None
        elif inside is not None:
            body.append(line)
    return blocks


def chains(paths: list[Path] = DOCS) -> list[Chain]:
    found: list[Chain] = []
    for path in paths:
        for block in python_blocks(path):
            if block.marker == "continues" and found and found[-1].blocks[0].path == path:
                found[-1].blocks.append(block)
            else:
                found.append(Chain([block]))
    return found


def _param(chain: Chain) -> object:
    markers = {b.marker: b.reason for b in chain.blocks if b.marker not in (None, "continues")}
    marks = []
    if "no-run" in markers:
        marks.append(pytest.mark.skip(reason=f"no-run: {markers['no-run']}"))
    elif "slow" in markers:
        marks.append(pytest.mark.slow)
    return pytest.param(chain, id=chain.id, marks=marks)


@pytest.fixture
def doc_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder with the repository's ``hub/`` and ``recipes/`` linked in; the registry as it was
    afterwards."""
    from simdist import registry

    registry.load_builtins()  # registered before the snapshot: a block that looks one up does not re-register it
    registry.load_plugins()
    for name in LINKED:
        (tmp_path / name).symlink_to(REPO / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    saved = {kind: dict(table) for kind, table in registry._REGISTRY.items()}
    yield tmp_path
    for kind, table in saved.items():
        registry._REGISTRY[kind].clear()
        registry._REGISTRY[kind].update(table)


@pytest.mark.parametrize("chain", [_param(c) for c in chains()])
def test_doc_code_runs(chain: Chain, doc_folder: Path, single_thread: None, monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("simdist_doc_block")  # a real module: dataclasses and pickling look it up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    for block in chain.blocks:
        where = f"{block.path.relative_to(REPO)}:{block.line}"
        code = compile("\n" * block.line + block.code, str(block.path), "exec")  # tracebacks name the doc's lines
        try:
            exec(code, namespace)
        except Exception as err:  # noqa: BLE001 - re-raised with the block named
            raise AssertionError(f"the python block at {where} fails: {type(err).__name__}: {err}") from err


# ------------------------------------------------------------------------------------------ the extractor itself
def test_every_doc_block_is_collected() -> None:
    """Each ```python fence of the docs is one block; markers attach to the block below them."""
    counted = sum(1 for path in DOCS for line in path.read_text(encoding="utf-8").splitlines()
                  if line.strip() == "```python")
    assert counted and sum(len(c.blocks) for c in chains()) == counted


def test_markers_and_chains(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("text\n```python\na = 1\n```\n<!-- continues -->\n```python\nb = a\n```\n"
                   "```bash\necho no\n```\n<!-- no-run: needs a robot -->\n```python\nrobot()\n```\n")
    found = chains([doc])
    assert [[b.line for b in c.blocks] for c in found] == [[2, 6], [13]]
    assert found[0].blocks[1].code == "b = a\n"
    assert (found[1].blocks[0].marker, found[1].blocks[0].reason) == ("no-run", "needs a robot")


# ------------------------------------------------------------------------------------------ the public API
PUBLIC = ("load_agent", "build_controller", "make_task", "Task", "Agent", "EvaluationResult", "WorldModel", "create",
          "list_components", "build_planner", "register")


def test_public_api_is_exported() -> None:
    """What users call is a top-level name of ``simdist``, listed in ``__all__``, and is the job module's object."""
    import simdist
    from simdist.agents import Agent, build_controller, load_agent
    from simdist.evaluation import EvaluationResult
    from simdist.planning.base import build_planner
    from simdist.tasks import Task, make_task

    assert set(PUBLIC) <= set(simdist.__all__)
    assert (simdist.load_agent, simdist.build_controller, simdist.make_task, simdist.Task, simdist.Agent,
            simdist.EvaluationResult, simdist.build_planner) == (load_agent, build_controller, make_task, Task, Agent,
                                                                 EvaluationResult, build_planner)
    assert all(getattr(simdist, name) is not None for name in simdist.__all__)
    with pytest.raises(AttributeError, match="no attribute 'load_agents'"):
        simdist.load_agents  # noqa: B018


def test_architecture_names_every_task_and_agent() -> None:
    """docs/architecture.md's layout names every task and agent folder and its tables every registered name (a task
    family's tasks, built on demand as ``PREFIX:ID``, by the family's ``PREFIX:ID``)."""
    from simdist import list_components
    from simdist.registry import list_families

    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    folders = [f"components/{kind}/{p.name}/" for kind in ("tasks", "agents")
               for p in sorted((REPO / "components" / kind).iterdir()) if (p / "__init__.py").is_file()]
    families = {kind: list_families(kind) for kind in ("task", "agent")}
    names = [f"`{n}`" for kind in ("task", "agent") for n in list_components(kind)
             if n.partition(":")[0] not in families[kind]]
    names += [f"`{p}:ID`" for kind in ("task", "agent") for p in families[kind]]
    missing = [x for x in folders + names if x not in text]
    assert not missing, f"docs/architecture.md does not name {missing}"
