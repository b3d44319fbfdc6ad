"""The generated bad-input matrix (tests/input_matrix.py): every option of every command gets the bad values of
its declared type; each must be refused before any work with exit status 2 and one line naming it."""

from __future__ import annotations

import time
from pathlib import Path

import input_matrix as im
import pytest


@pytest.fixture
def values(bad_input_values: tuple[Path, dict[str, str]]) -> tuple[Path, dict[str, str]]:
    return bad_input_values


@pytest.mark.parametrize("command", sorted(im.COMMANDS))
def test_valid_command_line_reaches_the_work(command: str, values: tuple[Path, dict[str, str]]) -> None:
    """The matrix's valid command lines pass every check: a refusal in the matrix is the bad value's."""
    root, vals = values
    code, output = im.run(command, im.fill(im.COMMANDS[command], vals))
    assert code == "work", output


def test_every_bad_input_is_refused_before_any_work(values: tuple[Path, dict[str, str]],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root, vals = values
    monkeypatch.chdir(vals["work"])
    cases = im.all_cases(vals)
    start = time.perf_counter()
    results = [im.check(case, vals, root) for case in cases]
    wall = time.perf_counter() - start
    failed = [r for r in results if r["problems"]]
    commands = sorted({c.command for c in cases})
    print(f"\nbad-input matrix: {len(results) - len(failed)} of {len(results)} bad inputs refused before any work "
          f"({len({(c.command, c.option) for c in cases})} options of {len(commands)} commands) in {wall:.1f} s")
    assert len(results) > 200
    assert not failed, "\n".join(f"simdist {r['command']} {r['option']} {r['value']} ({r['kind']}): "
                                 f"{', '.join(r['problems'])}: {r['message'][:200]}" for r in failed)
