"""``python -m results verify``: a step reruns in a scratch checkout of HEAD of a real git repository (a small one in
a tmp folder, with a real script as its step), and its regenerated outputs are compared with the committed ones:
reproduced, changed (JSON numbers and keys, text lines), not written, a committed file outside the outputs changed,
a need a clean checkout lacks, a failing step; the ledger keeps one entry a step and docs/reproducibility.md shows
the committed ledger's table."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from results.lab import ledger
from results.lab.compare import compare, json_diff
from results.lab.spec import Experiment, Step, step
from results.lab.verify import braces, committed_outputs, plan, run_step, scratch, verify

REPO = Path(__file__).resolve().parents[1]

#: the tmp repository's one script: writes each ``PATH=TEXT`` argument's text into PATH
WRITE = """import sys
from pathlib import Path
for arg in sys.argv[1:]:
    path, text = arg.split("=", 1)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text)
"""
A = '{"mean": 1.5, "ci": [1.0, 2.0], "name": "x", "seconds": 3.0}\n'
TABLE = "| row | value |\n|---|---|\n| a | 1.50 |\n"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a script, two committed results, a committed note and an ignored ``outputs/``."""
    root = tmp_path / "repo"
    (root / "res").mkdir(parents=True)
    (root / "write.py").write_text(WRITE)
    (root / "res" / "a.json").write_text(A)
    (root / "res" / "table.md").write_text(TABLE)
    (root / "note.md").write_text("kept\n")
    (root / ".gitignore").write_text("/outputs/\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "results")
    return root


def _check(repo: Path, *writes: str, outputs: tuple[str, ...] = ("res/",), **kw: object) -> dict:
    s = step("s", "python write.py " + " ".join(f"'{w}'" for w in writes), *outputs, minutes=0.1, **kw)  # type: ignore[arg-type]
    return verify(plan(Experiment("e", "q?", "d.md", "S", (s,)), s, False, None, root=repo), root=repo)


def test_a_step_that_reproduces_its_outputs_is_identical(repo: Path) -> None:
    again = A.replace('"seconds": 3.0', '"seconds": 9.25')  # a clock field: ignored
    entry = _check(repo, f"res/a.json={again}", f"res/table.md={TABLE}")
    assert entry["verdict"] == "identical", entry
    assert entry["files"] == 2 and entry["commit"] == _git(repo, "rev-parse", "HEAD").strip()
    assert "seconds" in entry["note"] and entry["cpu_s"] >= 0
    assert _git(repo, "worktree", "list").count("\n") == 1, "the scratch checkout is removed"
    assert _git(repo, "status", "--porcelain") == "" and (repo / "res" / "a.json").read_text() == A


def test_a_changed_output_differs(repo: Path) -> None:
    changed = A.replace("1.5", "1.75").replace('"x"', '"y"')
    entry = _check(repo, f"res/a.json={changed}", f"res/table.md={TABLE.replace('1.50', '1.75')}")
    assert entry["verdict"] == "differs"
    by_file = {d["file"]: d for d in entry["differences"]}
    assert by_file["res/a.json"]["max_abs"] == pytest.approx(0.25)
    assert by_file["res/a.json"]["keys"] == ["mean", "name"]
    assert by_file["res/table.md"]["lines"] == ["-| a | 1.50 |", "+| a | 1.75 |"]
    assert "2 keys, max abs 0.25" in ledger.summary(entry)


def test_an_output_not_written_and_a_file_outside_the_outputs_differ(repo: Path) -> None:
    entry = _check(repo, f"res/a.json={A}", "note.md=changed\n", "res/new.json={}")
    assert entry["verdict"] == "differs"
    assert {"file": "res/table.md", "kind": "missing"} in entry["differences"]
    assert [d for d in entry["differences"] if d["file"] == "note.md"][0]["outside"] is True
    assert "res/new.json" in entry["note"]


def test_needs_and_failures(repo: Path) -> None:
    assert _check(repo, "res/a.json=x", needs=("outputs/model/config.json",))["verdict"] == "needs"
    s = step("read", "python write.py --runs outputs/runs", "res/")
    assert plan(Experiment("e", "q?", "d.md", "S", (s,)), s, True, None, root=repo).note == "needs outputs/runs"
    s = step("read", "python write.py --runs outputs/runs", "res/", needs=("outputs/runs/config.json",))
    assert plan(Experiment("e", "q?", "d.md", "S", (s,)), s, True, None, root=repo).note == \
        "needs outputs/runs/config.json"
    bad = step("bad", "python -c 'raise SystemExit(3)'", "res/a.json", minutes=0.1)
    entry = verify(plan(Experiment("e", "q?", "d.md", "S", (bad,)), bad, False, None, root=repo), root=repo)
    assert entry["verdict"] == "failed" and entry["note"].startswith("exit 3")
    assert _git(repo, "worktree", "list").count("\n") == 1


def test_cost_decides_what_runs(repo: Path) -> None:
    e = Experiment("e", "q?", "d.md", "S", ())
    unknown = Step("u", ("python", "write.py"), ("res/a.json",))
    assert plan(e, unknown, False, None, root=repo).action == "skipped"
    assert plan(e, unknown, True, None, root=repo).action == "run"
    costly = Step("c", ("python", "write.py"), ("res/a.json",), minutes=30)
    assert plan(e, costly, True, 5, root=repo).note == "costs ~30 min, over --max-minutes 5"
    assert plan(e, costly, False, 60, root=repo).action == "run"
    printed = Step("p", ("python", "write.py"), ("printed", "outputs/x/"), minutes=1)
    assert plan(e, printed, True, None, root=repo).action == "skipped"


def test_outputs_expand_braces_globs_and_folders() -> None:
    assert braces("r/{a,b}_{x,y}.json") == ["r/a_x.json", "r/a_y.json", "r/b_x.json", "r/b_y.json"]
    assert braces("r/adapt-{profile}-{tag}/") == ["r/adapt-*-*/"]
    tracked = ["r/a_x.json", "r/c.json", "r/sub/d.md", "r/sub2/e.json", "s/f.json"]
    assert committed_outputs(Step("s", ("x",), ("r/{a,b}_x.json", "r/sub/")), tracked) == ["r/a_x.json", "r/sub/d.md"]
    assert committed_outputs(Step("s", ("x",), ("r/sub*/",)), tracked) == ["r/sub/d.md", "r/sub2/e.json"]


def test_json_diff(tmp_path: Path) -> None:
    worst, keys, skipped = json_diff({"a": [1, 2.0], "b": {"c": 1, "date": "x"}, "d": 1},
                                     {"a": [1, 2.5], "b": {"c": 1, "date": "y"}, "e": True})
    assert worst == 0.5 and keys == ["a[1]", "d (gone)", "e (new)"] and skipped == {"date"}
    assert json_diff([1, 2], [1, 2, 3])[1] == ["$ (length 2 -> 3)"]
    assert json_diff({"x": True}, {"x": 1})[1] == ["x"]
    old, new = tmp_path / "a.json", tmp_path / "b.json"
    old.write_text(json.dumps({"v": 1.0, "samples_per_s": 3}))
    new.write_text(json.dumps({"v": 1.0, "samples_per_s": 4}, indent=2))
    assert compare(old, new) == {"kind": "same", "ignored": ["samples_per_s"]}
    new.write_bytes(b"\x89PNG\x00")
    assert compare(old, new) is not None


def test_ledger_keeps_one_entry_a_step_and_a_skip_does_not_replace_a_check(tmp_path: Path) -> None:
    path = tmp_path / "verified.json"
    order = [("e", "a"), ("e", "b")]
    base = {"experiment": "e", "commit": "0123456789", "note": "", "cpu_s": 1.0, "files": 1, "differences": []}
    assert ledger.record({**base, "step": "b", "verdict": "identical"}, order, path)
    assert ledger.record({**base, "step": "a", "verdict": "needs", "note": "needs outputs/x"}, order, path)
    assert not ledger.record({**base, "step": "b", "verdict": "skipped"}, order, path)
    assert [(e["step"], e["verdict"]) for e in ledger.load(path)] == [("a", "needs"), ("b", "identical")]
    assert "| `e` | `b` | identical | 1 | 1 | `0123456` |  |" in ledger.table(ledger.load(path))
    assert "needs outputs/x" not in ledger.table(ledger.load(path))
    assert "| `e` | `a` | needs |  |  | `0123456` | needs outputs/x |" in ledger.table(ledger.load(path), True)


def test_the_scratch_checkout_runs_its_own_code(tmp_path: Path) -> None:
    """In the scratch checkout of this repository, ``simdist``, its plug-ins (``simdist.components``, installed from
    ``components/``) and ``results`` are imported from the checkout, not from the installed one."""
    code = "import simdist, simdist.components, results; print(simdist.__file__, simdist.components.__file__, " \
           "results.__file__)"
    with scratch(REPO) as tree:
        log = tmp_path / "log"
        assert run_step(Step("s", ("python", "-c", code), ("-",)), tree, log, 60)[0] == 0
        files = log.read_text().split()
        assert len(files) == 3 and all(Path(f).resolve().is_relative_to(tree.resolve()) for f in files), files
    assert str(tree) not in _git(REPO, "worktree", "list")


def test_the_docs_show_the_committed_ledger() -> None:
    """docs/reproducibility.md holds ``python -m results verify --table`` of the committed ledger."""
    entries = ledger.load()
    assert entries, "no ledger: run python -m results verify"
    assert ledger.table(entries) in (REPO / "docs" / "reproducibility.md").read_text(encoding="utf-8")
