"""The cheap rows of docs/reliability.md, in-process: each bad input gets its message (no traceback) and
neither its inputs nor any output folder are touched. The table itself comes from
``docs/reliability_table.py``, which runs the same cases (tests/reliability_cases.py) as subprocesses."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

import pytest
from reliability_cases import CASES, Case, Fixtures, build_fixtures, message_of, tree_digest

from simdist.cli import main as simdist_main

QUICK = [pytest.param(c, id=c.key, marks=[pytest.mark.xfail(strict=True, reason=c.open)] if c.open else [])
         for c in CASES if c.quick]


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Fixtures:
    return build_fixtures(tmp_path_factory.mktemp("reliability"))


def _run(case: Case, values: dict[str, str]) -> tuple[int, str]:
    """Run ``case`` in this process; returns (exit status, stderr + stdout)."""
    argv = case.command(values)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            if case.python:
                saved = sys.argv
                sys.argv = ["-c", *argv[2:]]
                try:
                    exec(compile(argv[1], "<case>", "exec"), {"__name__": "__main__"})
                finally:
                    sys.argv = saved
                code = 0
            else:
                code = simdist_main(argv)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        except Exception as exc:  # an API case: the exception is the message
            if not case.python:
                raise
            err.write(f"{type(exc).__name__}: {exc}")
            code = 1
    return code, err.getvalue() + out.getvalue()


@pytest.mark.parametrize("case", QUICK)
def test_bad_input_is_refused_with_its_message(case: Case, fixtures: Fixtures, tmp_path: Path) -> None:
    values = {"root": str(fixtures.root), "model": str(fixtures.model), "data": str(fixtures.data),
              "out": str(tmp_path / "out")}
    values.update(case.prepare(fixtures, tmp_path))
    before = tree_digest(fixtures.root)
    code, output = _run(case, values)
    assert code != 0, output
    assert case.expect in message_of(output), output  # in the error the user reads, not the usage above it
    assert "Traceback" not in output
    assert tree_digest(fixtures.root) == before  # the inputs are untouched
    out = Path(values["out"])
    assert not out.exists() or not any(p.suffix == ".tar" for p in out.rglob("*")), "no data may be written"


DATA_CASES = [c for c in CASES if not c.quick and "{data}" in c.argv and "--ckpt_path" not in c.argv]


@pytest.mark.parametrize("case", DATA_CASES, ids=[c.key for c in DATA_CASES])
def test_bad_data_is_refused_by_the_reader(case: Case, fixtures: Fixtures, tmp_path: Path) -> None:
    """The training-data rows (the table runs them through ``simdist fit``): the DataModule gives the message
    (its statistics are read first, as the training module does)."""
    from simdist.data import DataError, TrajectoryDataModule

    folder = case.prepare(fixtures, tmp_path)["data"]
    with pytest.raises(DataError, match=re.escape(case.expect)):
        dm = TrajectoryDataModule(folder, history=8, horizon=8, batch_size=4, windows_per_epoch=16,
                                  heldout_fraction=0.0)
        dm.setup("fit")
        dm.stats  # noqa: B018 (the normaliser's statistics, as training reads them first)
        next(iter(dm.train_dataloader()))
