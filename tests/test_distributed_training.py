"""Multi-process training on CPU (gloo): each rank reads a disjoint share, the shares cover the data, and the
weights agree after a step; with forked and with spawned processes and DataLoader workers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader

from simdist.data.datamodule import TrajectoryDataModule, WindowDataset
from tests.fault_harness import run, simdist_command


@pytest.fixture(scope="module")
def toy_data(tmp_path_factory) -> Path:
    from simdist.components.tasks.toy_reach import generate_toy_dataset

    out = tmp_path_factory.mktemp("ddp") / "data"
    torch.set_num_threads(1)
    generate_toy_dataset(str(out), num_envs=4, transitions=3000, seed=0, values="mc")
    return out


def _fit(data: Path, root: Path, strategy: str, context: str) -> list[dict]:
    audit = root / "audit"
    cmd = simdist_command(
        "fit", "--config", "recipes/toy/base.yaml", "--config", "recipes/toy/pretrain.yaml",
        "--data.train", str(data), "--data.batch_size", "16", "--data.num_workers", "1",
        "--data.multiprocessing_context", context, "--trainer.strategy", strategy, "--trainer.devices", "2",
        "--trainer.accelerator", "cpu", "--trainer.max_steps", "2", "--trainer.logger", "false",
        "--trainer.default_root_dir", str(root / "run"),
        "--trainer.callbacks+=simdist.training.audit.ShardAudit", "--trainer.callbacks.out_dir", str(audit))
    run(cmd, root / "fit.log", timeout=300).check()
    return [json.loads((audit / f"rank-{r}.json").read_text()) for r in (0, 1)]


@pytest.mark.parametrize("strategy,context", [("ddp_fork", "fork"), ("ddp_spawn", "spawn"), ("ddp", "spawn")])
def test_two_ranks_read_disjoint_shares_and_agree(toy_data: Path, tmp_path: Path, strategy: str, context: str) -> None:
    ranks = _fit(toy_data, tmp_path, strategy, context)
    assert [r["global_rank"] for r in ranks] == [0, 1] and {r["world_size"] for r in ranks} == {2}
    assert {r["multiprocessing_context"] for r in ranks} == {context}
    shares = [set(r["episode_ids"]) for r in ranks]
    assert shares[0] and shares[1] and not shares[0] & shares[1]  # disjoint, neither empty
    assert shares[0] | shares[1] == TrajectoryDataModule(str(toy_data), heldout_fraction=0.05).train_episode_ids()
    assert ranks[0]["global_step"] == ranks[1]["global_step"] == 2
    assert ranks[0]["weights_sha256"] == ranks[1]["weights_sha256"]


def _ids(dataset: WindowDataset, context: str) -> set[int]:
    loader = DataLoader(dataset, batch_size=64, num_workers=2, multiprocessing_context=context)
    return {int(i) for batch in loader for i in batch["episode_id"].tolist()}


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_explicit_rank_reaches_spawned_workers(toy_data: Path, monkeypatch: pytest.MonkeyPatch, context: str) -> None:
    """The reported failure: with WORLD_SIZE set but no RANK (as Lightning leaves workers), a spawned worker
    used to take itself for rank 0. The rank given to the dataset travels with it."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.delenv("RANK", raising=False)
    dm = TrajectoryDataModule(str(toy_data), heldout_fraction=0.0, batch_size=8)
    urls = dm.train_urls

    def share(rank: int) -> set[int]:
        return _ids(WindowDataset(urls, dm.spec, history=8, horizon=8, shuffle=False, rank=rank, world_size=2,
                                  return_ids=True), context)

    a, b = share(0), share(1)
    assert a and b and not a & b and a | b == dm.train_episode_ids()


def test_multi_process_epoch_is_sized(toy_data: Path) -> None:
    """Without windows_per_epoch every rank gets the same number of batches (one pass, from the index)."""
    dm = TrajectoryDataModule(str(toy_data), heldout_fraction=0.05, batch_size=16, history=8, horizon=8)
    exact = sum(len(ep) - (8 + 8 + 5 + 5) for ep in dm._train_episodes() if len(ep) > 26)
    estimate = dm.one_pass_windows()
    assert abs(estimate - exact) <= 0.1 * exact
    assert dm._windows_per_epoch(world=1) is None and dm._windows_per_epoch(world=2) == estimate
    with pytest.raises(Exception, match="windows_per_epoch"):
        TrajectoryDataModule(str(toy_data), batch_size=100_000)._windows_per_epoch(world=2)


def test_rank_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="rank must be in"):
        WindowDataset([], None, rank=2, world_size=2)
    with pytest.raises(ValueError, match="both rank and world_size"):
        WindowDataset([], None, rank=0)
    with pytest.raises(ValueError, match="multiprocessing_context"):
        TrajectoryDataModule("x", multiprocessing_context="threads")
