"""Bounded requests (simdist.resources, simdist.arguments): counts with upper limits, seeds in range, the memory
check before any work, and the Go2 protocol's batches of ``--envs`` for large trial counts."""

from __future__ import annotations

import argparse
from pathlib import Path

import generated_inputs as gi
import input_matrix as im
import numpy as np
import pytest
from reliability_cases import build_fixtures

from simdist.arguments import INT_LIMIT, FloatRange, IntList, int_range, seed_int
from simdist.resources import MAX_SCHEDULE_MINUTES, available_memory, check_memory


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(build_fixtures(tmp_path_factory.mktemp("resources")).model)


def refusal(command: str, argv: list[str]) -> str:
    """The one line ``simdist COMMAND ARGV`` refuses with (exit status 2, no traceback, before the work)."""
    code, output = gi.run(command, argv)
    lines = [ln for ln in output.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in output, (code, output)
    return lines[0]


def test_number_types_check_their_ranges() -> None:
    assert int_range(1, 8)("8") == 8 and IntList(1, 8)("1, 8") == [1, 8] and FloatRange(0, 2)("2") == 2.0
    assert seed_int("0") == 0 and seed_int(str(INT_LIMIT)) == INT_LIMIT
    for kind, text in ((int_range(1, 8), "9"), (int_range(1, 8), "1.5"), (IntList(1, 8), "1,,2"),
                       (IntList(1, 8), "0"), (FloatRange(0, 2), "0"), (FloatRange(0, 2), "nan"), (seed_int, "-1"),
                       (seed_int, str(2**70))):
        with pytest.raises(argparse.ArgumentTypeError, match="got"):
            kind(text)


def test_the_issues_probes_are_refused_with_one_line(model: str, tmp_path: Path) -> None:
    go2 = ["--task", "go2", "--agent", "simdist/go2-slope", "--speeds", "0.3", "--max-steps", "28"]
    assert "--trials: must be an integer in [1, 100000]" in refusal("evaluate", [*go2, "--trials", "100000000"])
    assert "--envs: each item must be an integer in [1, 4096], got '0'" in refusal("bench", ["--envs", "0"])
    assert "--threads: each item must be an integer in [1, 1024], got '0'" in refusal("bench", ["--threads", "0"])
    adapt = ["--task", "toy-reach", "--agent", model, "--real", "real", "--out", str(tmp_path / "run")]
    line = refusal("adapt", [*adapt, "--schedule", "0,1e9"])
    assert "schedule: at most 100 stages and 10080 minutes" in line
    for seed in ("-1", str(2**70)):
        assert "--seed" in refusal("evaluate", ["--task", "toy-reach", "--agent", "expert", "--seed", seed])
        assert "--seed" in refusal("generate", ["--task", "toy-reach", "--out", str(tmp_path / "gen"), "--envs", "2",
                                                "--transitions", "50", "--seed", seed])
        assert "seed must be an integer in [0, 2147483647]" in refusal("adapt", [*adapt, "--schedule", "0,1",
                                                                                 "--seed", seed])
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # adapt left no --out, generate none


def test_limits_are_stated_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    from simdist.cli import main

    for command in ("adapt", "evaluate"):
        with pytest.raises(SystemExit):
            main([command, "--task", "toy-reach", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert f"at most 100 stages and {MAX_SCHEDULE_MINUTES} minutes" in shown  # adapt's schedule
    assert "trials per condition of the protocol (1 to 100000)" in shown and "(0 to 2**31 - 1)" in shown


def test_memory_check_refuses_what_this_machine_cannot_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    have = available_memory()
    assert have is not None and have > 0
    check_memory("--envs", 8, 1 << 20, "parallel envs")
    with pytest.raises(ValueError, match=r"--envs 2: 2 parallel envs need about .* MiB .* use at most 1$"):
        check_memory("--envs", 2, have, "parallel envs")
    from simdist.tasks import task_class

    monkeypatch.setattr(task_class("toy-reach"), "env_memory", have)  # a task whose envs are as large as the room
    out = tmp_path / "gen"
    code, output = im.run("generate", ["--task", "toy-reach", "--out", str(out), "--envs", "2", "--transitions", "50"])
    assert code == 2 and "--envs 2: 2 parallel envs need about" in output and not out.exists()
    code, output = im.run("evaluate", ["--task", "toy-reach", "--agent", "expert", "--trials", "2", "--envs", "4"])
    assert code == 2 and "--trials 2: 2 parallel envs" in output  # the batch is the trials here
    for command, option, argv in (("demos", "--num-envs", ["--agent", "expert", "--episodes", "2"]),
                                  ("demo", "--envs", [])):
        code, output = im.run(command, ["--task", "toy-reach", "--out", str(tmp_path / command), *argv, option, "2"])
        assert code == 2 and f"{option} 2: 2 parallel envs need about" in output
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_go2_protocol_runs_large_trial_counts_in_batches() -> None:
    from simdist.components.tasks.go2.protocol import protocol_batches, run_protocol
    from simdist.tasks import task_class

    assert protocol_batches(5, None, 7) == protocol_batches(5, 5, 7) == [(5, 7)]
    batches = protocol_batches(5, 2, 7)
    assert [n for n, _ in batches] == [2, 2, 1] and batches[0][1] == 7
    assert len({s for _, s in batches}) == 3 and all(0 <= s <= INT_LIMIT for _, s in batches)
    task = task_class("go2")(profile="ptfe-slope-5.7deg")
    assert task.evaluation_batch(256, 8) == 256 and task.evaluation_batch(257, 8) == 8

    def stand(obs: dict[str, np.ndarray]) -> np.ndarray:
        return np.zeros((len(obs["proprio"]), 12), np.float32)

    course = task.course(0)
    kwargs = {"speeds": (0.3,), "seed": 3, "max_steps": 12, "reset_steps": 4}
    whole = run_protocol(stand, course, trials=2, **kwargs).speeds[0]
    batched = run_protocol(stand, course, trials=3, batch=2, **kwargs).speeds[0]
    assert len(batched.progress) == len(batched.success) == len(batched.walk_time) == 3
    assert batched.progress[:2] == whole.progress and batched.terminated[:2] == whole.terminated
