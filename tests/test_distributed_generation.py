"""Data generation by independent workers: torchrun ranks share the parts of one run; the merged dataset is
exactly the sum of the parts, with unique episode ids and seeds, and equals the one-process run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from simdist.data.parts import first_episode_id, part_budgets, worker_share
from simdist.data.shards import iter_episodes, read_dataset_info
from tests.fault_harness import run

ARGS = ["generate", "--task", "toy-reach", "--envs", "4", "--transitions", "4000", "--parts", "4", "--seed", "5",
        "--no-progress"]


def _episodes(folder: Path) -> dict[int, dict[str, np.ndarray]]:
    out: dict[int, dict[str, np.ndarray]] = {}
    for ep in iter_episodes(folder, shuffle_shards=False):
        assert ep.episode_id not in out, f"duplicate episode id {ep.episode_id}"
        out[ep.episode_id] = ep.arrays()
    return out


@pytest.fixture(scope="module")
def one_process(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "solo"
    run([sys.executable, "-m", "simdist.cli", *ARGS, "--out", str(out)], out.parent / "solo.log", timeout=300).check()
    return out


def test_torchrun_workers_merge_to_the_sum_of_parts(one_process: Path, tmp_path: Path) -> None:
    out = tmp_path / "two"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           "-m", "simdist.cli", *ARGS, "--out", str(out)]
    log = run(cmd, tmp_path / "torchrun.log", timeout=300).check().log
    for k in range(4):  # each worker ran its share: the parts k with k % 2 == its rank
        assert f"[part-{k:04d}] worker {k % 2}/2" in log
    state = json.loads((out / "generate.json").read_text())
    assert sorted(state["parts"]) == [f"part-{k:04d}" for k in range(4)]
    index = read_dataset_info(out)
    parts = [read_dataset_info(out / name) for name in sorted(state["parts"])]
    assert index["num_episodes"] == sum(p["num_episodes"] for p in parts)
    assert index["num_steps"] == sum(p["num_steps"] for p in parts)
    episodes = _episodes(out)  # raises on a duplicate id
    assert len(episodes) == index["num_episodes"] and sum(len(e["rewards"]) for e in episodes.values()) == index[
        "num_steps"]
    seeds = [p["metadata"]["generator"]["seed"] for p in parts]
    assert len(set(seeds)) == 4  # every part its own seed
    # each worker wrote its share (k % 2 == rank) and the result is the one-process run's, episode by episode
    solo = _episodes(one_process)
    assert solo.keys() == episodes.keys()
    for eid, arrays in solo.items():
        for key, value in arrays.items():
            np.testing.assert_array_equal(episodes[eid][key], value, err_msg=f"episode {eid} {key}")
    assert index["stats"] == read_dataset_info(one_process)["stats"]


def test_budgets_and_episode_id_ranges() -> None:
    budgets = part_budgets(10, None, 3)
    assert budgets == [4, 3, 3] and sum(budgets) == 10
    assert [first_episode_id(budgets, k) for k in range(3)] == [0, 4, 7]
    assert [first_episode_id(budgets, k, num_envs=8) for k in range(3)] == [0, 11, 21]
    assert part_budgets(10, 4) == [4, 3, 3] and part_budgets(10, 0) == [10]
    with pytest.raises(ValueError, match="--parts"):
        part_budgets(10, None, 0)


def test_worker_share_from_launchers(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("RANK", "WORLD_SIZE", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"):
        monkeypatch.delenv(key, raising=False)
    assert worker_share() == (0, 1)
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "5")
    monkeypatch.setenv("SLURM_ARRAY_TASK_MIN", "4")
    monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "3")
    assert worker_share() == (1, 3)
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert worker_share() == (2, 4)  # torchrun's variables win
    assert worker_share(0, 2) == (0, 2)
    with pytest.raises(ValueError, match="--rank"):
        worker_share(2, 2)
    with pytest.raises(ValueError, match="both --rank and --world-size"):
        worker_share(1, None)


def test_fewer_parts_than_workers_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from simdist.tools import generate as generate_tool

    with pytest.raises(SystemExit):
        generate_tool.main(["--task", "toy-reach", "--envs", "4", "--transitions", "400", "--parts", "1",
                            "--rank", "0", "--world-size", "2", "--out", str(tmp_path / "x")])
    assert "--parts (1) must be at least the number of workers (2)" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
