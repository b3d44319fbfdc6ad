"""Bad inputs generated from the definitions (tests/generated_inputs.py): every option with a declared domain of
every ``simdist`` tool command, AdaptConfig's fields and the reality-profile schemas, drawn by Hypothesis. Each must
be refused with exit status 2 and one line naming the option (or the file and the key), without a traceback,
before any work and without changing a file."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import generated_inputs as gi
import input_matrix as im
import pytest
from hypothesis import given, settings

#: drawn bad values per option (deterministic: the same draws on every run); adapt builds its parser from a
#: dataclass per call (0.1 s), so it draws fewer
EXAMPLES = 6
ADAPT_EXAMPLES = 3
#: drawn corrupt profiles per task
PROFILES = 40


@pytest.fixture
def values(bad_input_values: tuple[Path, dict[str, str]]) -> tuple[Path, dict[str, str]]:
    return bad_input_values


def test_every_command_has_generated_inputs(values: tuple[Path, dict[str, str]]) -> None:
    """Every tool command with a parser is walked (the others take no typed option), and each walked command has
    options with a domain."""
    from simdist.cli import TOOLS

    walked = {gi.split(c)[0] for c in gi.COMMANDS}
    assert set(TOOLS) - walked == set(gi.UNTYPED), "a command is neither walked nor listed in UNTYPED"
    root, vals = values
    for command in gi.COMMANDS:
        assert gi.targets(command, gi.capture_parser(command, vals)), f"simdist {command}: no option with a domain"


def test_every_upper_limit_is_stated_in_help(values: tuple[Path, dict[str, str]]) -> None:
    root, vals = values
    limits = gi.bounded_options(vals)
    assert {("evaluate", "--trials"), ("evaluate", "--envs"), ("bench", "--threads"), ("bench", "--envs"),
            ("adapt", "--num_envs")} <= {(r["command"], r["option"]) for r in limits}
    silent = [f"simdist {r['command']} {r['option']} {r['range']}" for r in limits if not r["help_states_it"]]
    assert not silent, f"--help does not state the limit of {silent}"


def refuses_every_draw(command: str, target: gi.Target, base: list[str], root: Path) -> int:
    """Draw bad values of ``target`` and run each; AssertionError (shrunk to the simplest value) for one the
    command does not refuse as it should. Returns the number drawn."""
    drawn = 0

    @settings(gi.SETTINGS, max_examples=ADAPT_EXAMPLES if command == "adapt" else EXAMPLES)
    @given(target.values)
    def refused(value: str) -> None:
        nonlocal drawn
        drawn += 1
        got = gi.attempt(command, target, base, root, value)
        assert not got["problems"], f"simdist {command} {got['option']}={value!r}: {got['problems']}\n{got['output']}"

    refused()
    return drawn


@pytest.mark.parametrize("command", sorted(gi.COMMANDS))
def test_generated_bad_options_are_refused(command: str, values: tuple[Path, dict[str, str]]) -> None:
    root, vals = values
    base = im.fill(gi.COMMANDS[command], vals)
    start = time.perf_counter()
    drawn = sum(refuses_every_draw(command, target, base, root)
                for target in gi.targets(command, gi.capture_parser(command, vals)))
    print(f"\nsimdist {command}: {drawn} generated bad inputs refused in {time.perf_counter() - start:.1f} s")


@pytest.mark.parametrize("task", sorted(gi.PROFILE_COMMANDS))
def test_generated_profile_corruptions_are_refused(task: str, values: tuple[Path, dict[str, str]],
                                                   tmp_path: Path) -> None:
    root, vals = values
    command, argv = gi.PROFILE_COMMANDS[task]
    counter = itertools.count()

    @settings(gi.SETTINGS, max_examples=PROFILES)
    @given(gi.profile_corruptions(task))
    def refused(case: tuple[str, object]) -> None:
        key, document = case
        path = gi.write_profile(tmp_path, document, next(counter))  # type: ignore[arg-type]
        before = im.digest(root)
        code, output = im.run(command, im.fill(argv, {**vals, "profile": str(path)}))
        problems = im.contract(code, output, [key])
        if path.name not in output:
            problems.append("names not the file")
        if im.digest(root) != before:
            problems.append("changed a file")
        assert not problems, f"{task} profile {document!r}: {problems}\n{output}"

    refused()
