"""One writer per output folder: a second ``simdist generate`` / ``demos`` / ``adapt`` / ``export`` / ``demo`` given the
``--out`` another process is writing is refused before any work, naming the option and the holder; the workers
of one distributed generation share the folder (their lock is shared); a killed holder leaves no lock behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from simdist.cli import main as simdist_main
from simdist.fsutil import OutputLockedError, lock_path, output_lock
from tests.fault_harness import child_env, duplicate_or_missing_ids, leftover_temporaries, simdist_command

HOLD = ("import sys, time; from simdist.fsutil import output_lock\n"
        "with output_lock(sys.argv[1], shared=sys.argv[2] == 'shared'):\n"
        "    print('held', flush=True); time.sleep(120)")


def _holder(out: Path, shared: bool = False) -> subprocess.Popen:
    """Another process holding the lock of ``out`` (until killed)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(out), "shared" if shared else "exclusive"],
                            stdout=subprocess.PIPE, text=True, env=child_env(), start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen]]:
    out = tmp_path / "out"
    proc = _holder(out)
    yield out, proc
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


COMMANDS = {
    "generate": ["generate", "--task", "toy-reach", "--envs", "2", "--transitions", "200", "--no-progress"],
    "demos": ["demos", "--task", "toy-reach", "--agent", "expert", "--episodes", "1", "--no-progress"],
    "adapt": ["adapt", "--task", "toy-reach", "--agent", "{root}/no-model-needed", "--real", "real",
              "--schedule", "0,1"],
    "export": ["export", "--ckpt", "{root}/no-checkpoint-needed.ckpt"],
    "demo": ["demo", "--task", "toy-reach", "--quick", "--no-progress"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_second_writer_is_refused_before_any_work(command: str, holder: tuple[Path, subprocess.Popen],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out, proc = holder
    argv = [a.format(root=out.parent) for a in COMMANDS[command]] + ["--out", str(out)]
    assert simdist_main(argv) == 2
    err = capsys.readouterr().err
    assert f"simdist {command}: error: --out {out}: the folder is being written by pid {proc.pid}" in err, err
    assert "Traceback" not in err and not out.exists()


def test_workers_of_one_run_share_the_lock_and_exclude_a_lone_writer(tmp_path: Path) -> None:
    out = tmp_path / "out"
    worker = _holder(out, shared=True)
    try:
        with output_lock(out, shared=True):  # a second worker of the same run
            pass
        with pytest.raises(OutputLockedError, match=f"--out {out}: the folder is being written by pid "):
            with output_lock(out):
                pass
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
    with output_lock(out):  # the killed holder's lock went with its process
        with pytest.raises(OutputLockedError, match="--out"):
            with output_lock(out, shared=True):
                pass
    assert lock_path(out) == tmp_path / ".out.lock" and not out.exists()  # never inside the folder


@pytest.mark.slow
def test_two_generate_runs_on_one_folder(tmp_path: Path) -> None:
    """Two real ``simdist generate`` processes on one ``--out``: the second is refused while the first writes,
    the first finishes a clean dataset, and a rerun after it resumes (nothing to do)."""
    out = tmp_path / "data"
    cmd = simdist_command("generate", "--task", "toy-reach", "--envs", "8", "--transitions", "20000",
                          "--no-progress", "--out", str(out))
    first = subprocess.Popen(cmd, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while not lock_path(out).is_file() or not lock_path(out).read_text():
        assert first.poll() is None and time.monotonic() < deadline, "the first run never took the lock"
        time.sleep(0.05)
    second = subprocess.run(cmd, env=child_env(), capture_output=True, text=True, timeout=300)
    assert first.poll() is None, "the first run ended before the second was refused: make it longer"
    assert second.returncode == 2 and "Traceback" not in second.stderr
    assert f"--out {out}: the folder is being written by pid {first.pid}" in second.stderr
    assert first.wait(timeout=600) == 0, first.stdout.read() if first.stdout else ""
    assert not duplicate_or_missing_ids(out) and not leftover_temporaries(out)
    again = subprocess.run(cmd, env=child_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr


def test_a_running_demo_holds_its_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``simdist demo`` writes its ``--out`` alone: a second demo given the same folder while the first runs is
    refused before any work (two runs of one command into one folder each removed the other's loop files)."""
    out = tmp_path / "demo"
    first = subprocess.Popen(simdist_command("demo", "--task", "toy-reach", "--quick", "--no-progress", "--out",
                                             str(out)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=child_env(), start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (out / "sim-data").exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert first.poll() is None, "the first demo ended before the check"
        assert simdist_main(["demo", "--task", "toy-reach", "--quick", "--no-progress", "--overwrite", "--out",
                             str(out)]) == 2
        err = capsys.readouterr().err
        assert f"--out {out}: the folder is being written by pid {first.pid}" in err, err
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
