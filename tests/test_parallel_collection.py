"""The adaptation loop's real-data chunks over worker processes (``simdist adapt --collection.workers N``): the same
episodes, ids and arrays as one process; a killed run resumes to the same data; the settings that cannot hold are
refused naming the option."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simdist.tasks import make_task
from simdist.workflows.adaptation import AdaptationLoop, AdaptConfig
from simdist.workflows.loop_parts import CollectionConfig

#: minutes of toy data (10 Hz, 60-step episodes): 4 episodes
MINUTES = 0.4


def _config(workers: int, num_envs: int, seed: int = 3) -> AdaptConfig:
    return AdaptConfig(schedule=[0.0, MINUTES], num_envs=num_envs, heldout_episodes=1, seed=seed,
                       planner_overrides={"num_samples": 16, "iterations": 1},
                       collection=CollectionConfig(workers=workers))


def _collect(folder: str, out: Path, workers: int, num_envs: int, lines: list[str] | None = None,
             seed: int = 3) -> AdaptationLoop:
    warnings.filterwarnings("ignore", ".*(eval mode|does not have many workers|__len__).*")
    loop = AdaptationLoop(folder, make_task("toy-reach"), out, _config(workers, num_envs, seed),
                          log=(lines.append if lines is not None else lambda m: None))
    loop.collect_until(MINUTES, loop.base, stage=1)
    return loop


def _logged(loop: AdaptationLoop) -> list[Any]:
    return loop.episodes(loop.data_dir)


def _assert_same(a: list[Any], b: list[Any]) -> None:
    assert [e.episode_id for e in a] == [e.episode_id for e in b]
    for x, y in zip(a, b):
        assert x.meta == y.meta, x.episode_id
        for name in ("actions", "commands", "rewards", "values", "expert"):
            np.testing.assert_array_equal(getattr(x, name), getattr(y, name), err_msg=name)
        for group in x.obs:
            np.testing.assert_array_equal(x.obs[group], y.obs[group], err_msg=group)


@pytest.fixture
def toy_folder(tiny_world_model: Any, tmp_path: Path) -> str:
    """The tiny world model as a toy-reach agent folder."""
    return str(tiny_world_model.save_pretrained(tmp_path / "tiny"))


@pytest.mark.parametrize(("num_envs", "seed"), [(1, 3), (2, 1)])
def test_two_workers_log_the_one_process_episodes(toy_folder: str, tmp_path: Path, single_thread: None,
                                                  num_envs: int, seed: int) -> None:
    """Chunks of ``num_envs`` episodes in 2 processes: the same episodes (ids, arrays, meta) and index as in one
    process, written as the same shards; progress lines with the ETA. With 2 envs and seed 1 the first chunk logs
    ids 0 and 2 (an env's second, unlogged episode took id 1), so the chunk guessed to start at id 2 is not used."""
    one = _collect(toy_folder, tmp_path / "one", 1, num_envs, seed=seed)
    lines: list[str] = []
    two = _collect(toy_folder, tmp_path / "two", 2, num_envs, lines, seed=seed)
    _assert_same(_logged(one), _logged(two))
    index = [json.loads((loop.data_dir / "dataset.json").read_text()) for loop in (one, two)]
    assert [sh["episode_ids"] for sh in index[0]["shards"]] == [sh["episode_ids"] for sh in index[1]["shards"]]
    assert index[0]["num_steps"] == index[1]["num_steps"] >= MINUTES * 600
    assert json.loads((one.state_path).read_text())["labels"] == json.loads(two.state_path.read_text())["labels"]
    assert any("in 2 worker processes" in line for line in lines)
    assert any("ETA" in line and "logged (" in line for line in lines)
    missed = [line for line in lines if "not used" in line]
    assert (missed[:1] == ["[collect] stage 1: the chunk from episode 0 used ids up to 2; the next chunk starts "
                           "there (speculative chunks from 2 not used)"]) == (num_envs == 2), missed


@pytest.mark.slow  # a killed run and its rerun, 4 worker starts: about 25 s on 2 idle cores, 80 s on a loaded one
def test_a_killed_parallel_collection_resumes_to_the_one_process_data(toy_folder: str, tmp_path: Path,
                                                                      single_thread: None) -> None:
    """SIGKILL of a 2-worker collection once its first chunk is on disk: what it left is a prefix of the one-process
    data, and the rerun (2 workers) completes it to the same episodes."""
    reference = _logged(_collect(toy_folder, tmp_path / "one", 1, 1))
    out = tmp_path / "killed"
    tests = str(Path(__file__).parent)
    script = (f"import sys; sys.path.insert(0, {tests!r}); import test_parallel_collection as t; "
              f"t._collect({toy_folder!r}, t.Path({str(out)!r}), 2, 1)")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    process = subprocess.Popen([sys.executable, "-c", script], env=env, start_new_session=True)
    deadline = time.monotonic() + 120
    while _episodes_on_disk(out) == 0 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    killed = process.poll() is None
    os.killpg(process.pid, signal.SIGKILL)  # the run and its workers, as a killed job
    process.wait()
    assert killed, "the collection finished before the kill"
    loop = AdaptationLoop(toy_folder, make_task("toy-reach"), out, _config(2, 1), log=lambda m: None)
    partial = _logged(loop)
    assert 0 < len(partial) < len(reference)
    _assert_same(partial, reference[: len(partial)])
    loop.collect_until(MINUTES, loop.base, stage=1)
    _assert_same(_logged(loop), reference)


def test_a_worker_that_dies_stops_the_collection_naming_the_option(toy_folder: str, tmp_path: Path,
                                                                   single_thread: None) -> None:
    """A worker killed mid-collection: the run stops with an error naming ``--collection.workers`` and the exit
    code, every worker is gone, and what was written is a prefix of the one-process data."""
    import multiprocessing

    killed: list[int] = []

    def log(line: str) -> None:
        if "logged (" in line and not killed:  # the first chunk written: one worker idle, one collecting
            victim = multiprocessing.active_children()[0]
            killed.append(victim.pid)
            os.kill(victim.pid, signal.SIGKILL)
            victim.join()

    loop = AdaptationLoop(toy_folder, make_task("toy-reach"), tmp_path / "two", _config(2, 1), log=log)
    with pytest.raises(RuntimeError, match=r"collection worker \d \(--collection.workers\) exited with code -9"):
        loop.collect_until(MINUTES, loop.base, stage=1)
    assert killed and not multiprocessing.active_children()
    assert not (tmp_path / "two" / "collection-agent").exists()
    reference = _logged(_collect(toy_folder, tmp_path / "one", 1, 1))
    written = _logged(loop)
    _assert_same(written, reference[: len(written)])


def test_settings_that_cannot_hold_are_refused_naming_the_option(toy_folder: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """More than one worker with ``update_every`` (the agent changes between episodes) or out of [1, 256]: one
    line naming ``collection.workers``; the count is not recorded as a setting of the stages."""
    from simdist.cli import main

    with pytest.raises(ValueError, match=r"^collection.workers 2: .*update_every is set.*; use 1$"):
        AdaptConfig(update_every=1, collection=CollectionConfig(workers=2))
    with pytest.raises(ValueError, match=r"collection.workers must be an integer in \[1, 256\], got 0"):
        AdaptConfig(collection={"workers": 0})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="collection.passes is not a setting of the collection"):
        AdaptConfig(collection={"passes": 2})  # type: ignore[arg-type]
    assert "collection_workers" not in AdaptConfig().recorded()
    assert AdaptConfig(collection={"workers": 3}).recorded()["collection_workers"] == 3  # type: ignore[arg-type]
    settings = [AdaptationLoop.stage_settings(_Stub(AdaptConfig(collection=CollectionConfig(workers=w))), 1)
                for w in (1, 2)]
    assert settings[0] == settings[1]
    common = ["adapt", "--task", "toy-reach", "--agent", toy_folder, "--real", "real", "--schedule", "0,1",
              "--out", str(tmp_path / "run")]
    for given, message in ((["--collection.workers", "2", "--update_every", "1"], "collection.workers 2: "),
                           (["--collection.workers", "0"], "collection.workers must be an integer in [1, 256]")):
        with pytest.raises(SystemExit) as exit_info:
            main([*common, *given])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert message in err and len([x for x in err.splitlines() if "error:" in x]) == 1
    assert not (tmp_path / "run").exists()


def _episodes_on_disk(out: Path) -> int:
    """The episodes the index of ``out``'s real data lists (0 while there is none)."""
    try:
        return int(json.loads((out / "real-data" / "dataset.json").read_text()).get("num_episodes", 0))
    except (FileNotFoundError, json.JSONDecodeError):
        return 0


class _Stub:
    def __init__(self, cfg: AdaptConfig) -> None:
        self.cfg, self.task = cfg, make_task("toy-reach")
