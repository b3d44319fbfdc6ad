"""Tests never touch the user's folders: each runs in a temporary working folder that reads like the checkout
(tests/conftest.py's ``checkout_view``), so a user's earlier ``outputs/`` neither breaks nor receives anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, checkout_view

#: what ``simdist demo`` (the toy task) leaves in ``outputs/toy-demo/``: its results and the folders it fills
EARLIER_DEMO = ("results.json", "sim-data", "toy-sim")


def earlier_demo(checkout: Path) -> Path:
    """An earlier ``simdist demo`` run's ``outputs/toy-demo/`` in ``checkout`` (the README's first command)."""
    out = checkout / "outputs" / "toy-demo"
    for name in EARLIER_DEMO:
        if "." in name:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_text('{"zero_shot": 8.14, "adapted": 13.97}\n')
        else:
            (out / name).mkdir(parents=True, exist_ok=True)
    return out


def test_each_test_runs_in_a_temporary_folder_that_reads_like_the_checkout(_test_workdir: Path) -> None:
    here = Path.cwd()
    assert here == _test_workdir and REPO not in (here, *here.parents)
    assert (here / "recipes" / "toy" / "base.yaml").resolve() == REPO / "recipes" / "toy" / "base.yaml"
    assert (here / "hub").resolve() == REPO / "hub"
    assert not any((here / name).exists() for name in ("outputs", "data", "runs"))


def test_demo_dispatch_beside_an_earlier_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The suite's demo dispatch started from a checkout that holds the user's earlier demo: run there, the demo
    refuses (what the dispatch test met before it had its own folder); in the working folder a test gets, the
    dispatch passes, and the earlier run is left as it was."""
    import test_go2_demo

    from simdist import cli
    from simdist.workflows import demo_pipeline

    checkout = checkout_view(tmp_path / "checkout")
    out = earlier_demo(checkout)
    before = sorted((p.relative_to(out).as_posix(), p.stat().st_mtime_ns) for p in out.rglob("*"))
    monkeypatch.chdir(checkout)
    with monkeypatch.context() as patch:
        patch.setattr(demo_pipeline, "run_demo", lambda hook, args: pytest.fail("the demo started"))
        assert cli.main(["demo", "--task", "toy-reach", "--quick"]) == 2
    assert "--out outputs/toy-demo: holds an earlier toy-reach demo run" in capsys.readouterr().err
    with monkeypatch.context() as patch:  # what the autouse fixture does for every test
        patch.chdir(checkout_view(tmp_path / "test-folder"))
        test_go2_demo.test_demo_dispatch(patch)
    assert sorted((p.relative_to(out).as_posix(), p.stat().st_mtime_ns) for p in out.rglob("*")) == before


@pytest.mark.slow
def test_readme_tests_pass_in_a_checkout_holding_an_earlier_demo(tmp_path: Path) -> None:
    """The README's two commands in one checkout: ``simdist demo`` has written ``outputs/toy-demo/``, then pytest
    runs there (a separate process, 30 s on 2 busy cores); the suite's demo dispatch passes and the earlier run is
    left as it was."""
    checkout = checkout_view(tmp_path / "checkout")
    out = earlier_demo(checkout)
    before = sorted((p.relative_to(out).as_posix(), p.stat().st_mtime_ns) for p in out.rglob("*"))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/test_go2_demo.py::test_demo_dispatch"], cwd=checkout, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "1 passed" in proc.stdout
    assert sorted((p.relative_to(out).as_posix(), p.stat().st_mtime_ns) for p in out.rglob("*")) == before
    assert sorted(p.name for p in (checkout / "outputs").iterdir()) == ["toy-demo"]
