"""Chunks of consecutive windows: the same windows and the same loss as the window-by-window path."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from simdist import WorldModel
from simdist.data import Episode, iter_episodes
from simdist.data.chunks import ChunkCollate, chunk_at, chunk_starts
from simdist.data.datamodule import TrajectoryDataModule, WindowDataset
from simdist.data.windows import gather_windows, window_starts
from simdist.model.losses import WorldModelLoss
from tests.helpers import tiny_config, write_linear_dataset


def _episode(length: int, obs: dict[str, int], action: int = 2, command: int = 1, seed: int = 0) -> Episode:
    rng = np.random.default_rng(seed)
    return Episode(obs={g: rng.normal(size=(length, d)) for g, d in obs.items()},
                   actions=rng.normal(size=(length, action)), commands=rng.normal(size=(length, command)),
                   rewards=rng.normal(size=length), values=rng.normal(size=length),
                   expert=rng.random(length) > 0.3, episode_id=7)


def _chunk_batch(ep: Episode, starts: list[int], k: int, h: int, t: int, offset: int = 0) -> dict:
    from simdist.data.datamodule import _to_torch

    return ChunkCollate(k, h, t, offset)([_to_torch(chunk_at(ep, s, k, h, t)) for s in starts])


def _flat(batch: dict) -> dict:
    return {k: v for k, v in batch.items() if k != "fut_steps"}


@pytest.mark.parametrize("offset", [0, 1])
def test_expanded_chunks_are_the_windows(offset: int) -> None:
    h, t, k = 4, 3, 5
    ep = _episode(40, {"a": 3, "b": 2})
    starts = [5, 11, 20]
    batch = _chunk_batch(ep, starts, k, h, t, offset)
    ref = gather_windows(ep, np.concatenate([np.arange(s, s + k) for s in starts]), h, t, offset)
    for key, value in ref.items():
        if isinstance(value, dict):
            for g, v in value.items():
                np.testing.assert_array_equal(batch[key][g].numpy(), v)
        else:
            np.testing.assert_array_equal(batch[key].numpy(), value.astype(np.float32))
    steps = batch["fut_steps"]
    for g in ep.obs:  # each window's target rows are its fut_obs
        np.testing.assert_array_equal(steps["obs"][g][steps["index"]].numpy(), ref["fut_obs"][g])
        assert steps["obs"][g].shape[0] == len(starts) * (k + t - 1)


def test_chunk_starts_tile_whole_chunks() -> None:
    starts = window_starts(60, 4, 3)
    assert chunk_starts(starts, 5).tolist() == list(range(5, 5 + 5 * (len(starts) // 5), 5))
    assert chunk_starts(starts[:3], 5).size == 0
    with pytest.raises(ValueError, match="needs 42 steps"):
        chunk_at(_episode(40, {"a": 1}), 30, 5, 4, 3)


@pytest.mark.parametrize("preset", [pytest.param("go2", marks=pytest.mark.slow), None])
def test_chunked_loss_matches_window_loss(preset: str | None) -> None:
    """Same batch, same seed: the encode-once targets give the window path's loss and gradients."""
    torch.manual_seed(0)
    wm = WorldModel.from_preset(preset) if preset else WorldModel(tiny_config())
    cfg = wm.config
    h, t, k = cfg.history, cfg.horizon, 4
    ep = _episode(h + t + 3 * k + 10, {g: int(np.prod(s)) for g, s in cfg.obs_spec.items()}, cfg.action_dim,
                  cfg.command_dim)
    batch = _chunk_batch(ep, [0, k + 1, 2 * k + 3], k, h, t)
    loss_fn = WorldModelLoss()
    wm.train()
    results = []
    for b in (batch, _flat(batch)):
        wm.zero_grad()
        torch.manual_seed(1)  # the same dropout draws on both paths
        terms = loss_fn(wm, b)
        terms["loss"].backward()
        results.append((terms, {n: p.grad.clone() for n, p in wm.named_parameters() if p.grad is not None}))
    (chunked, grads_c), (windows, grads_w) = results
    for name in windows:
        torch.testing.assert_close(chunked[name], windows[name], rtol=1e-5, atol=1e-6)
    assert grads_c.keys() == grads_w.keys()
    for name in grads_w:
        torch.testing.assert_close(grads_c[name], grads_w[name], rtol=1e-4, atol=1e-6)


def test_window_dataset_chunks_hold_the_episode_windows(tmp_path) -> None:
    data = write_linear_dataset(tmp_path / "d", episodes=6, length=40)
    episodes = {ep.episode_id: ep for ep in iter_episodes(str(data), shuffle_shards=False, split_by_node=False,
                                                          split_by_worker=False)}
    h, t, k = 4, 3, 6
    ds = WindowDataset([str(p) for p in sorted(data.glob("*.tar"))], None, history=h, horizon=t, windows_per_chunk=k,
                       shuffle=True, shuffle_buffer=4, return_ids=True)
    loader = DataLoader(ds, batch_size=2, collate_fn=ChunkCollate(k, h, t))
    seen = 0
    for batch in loader:
        assert batch["act_hist"].shape[0] == 2 * k
        ids, starts = batch["episode_id"].tolist(), batch["start"].tolist()
        for i, (e, s) in enumerate(zip(ids, starts)):
            ref = gather_windows(episodes[e], np.array([s]), h, t)
            np.testing.assert_array_equal(batch["fut_obs"]["state"][i].numpy(), ref["fut_obs"]["state"][0])
            np.testing.assert_array_equal(batch["act_hist"][i].numpy(), ref["act_hist"][0])
        seen += len(ids)
    per_episode = len(chunk_starts(window_starts(40, h, t), k)) * k
    assert seen == 6 * per_episode


def test_datamodule_rejects_a_chunk_that_does_not_divide_the_batch(tmp_path) -> None:
    with pytest.raises(ValueError, match="data.windows_per_chunk"):
        TrajectoryDataModule(str(tmp_path), batch_size=10, windows_per_chunk=4)


@pytest.mark.slow
def test_fit_on_chunks(tmp_path) -> None:
    """A real Lightning fit reads chunked batches (encode-once targets) through the datamodule's loader."""
    import lightning as L

    from simdist.training import PretrainModule

    data = write_linear_dataset(tmp_path / "d", episodes=6, length=40)
    cfg = tiny_config()
    dm = TrajectoryDataModule(str(data), history=cfg.history, horizon=cfg.horizon, batch_size=8, windows_per_chunk=4,
                              windows_per_epoch=32, heldout_fraction=0.2)
    seen = []

    class Module(PretrainModule):
        def training_step(self, batch, batch_idx):
            seen.append((batch["act_hist"].shape[0], batch["fut_steps"]["index"].shape))
            return super().training_step(batch, batch_idx)

    module = Module(model=cfg.to_dict())
    trainer = L.Trainer(accelerator="cpu", max_epochs=1, logger=False, enable_progress_bar=False,
                        enable_checkpointing=False, enable_model_summary=False, limit_val_batches=2,
                        default_root_dir=str(tmp_path))
    trainer.fit(module, dm)
    assert seen and all(n == 8 and idx == (8, cfg.horizon) for n, idx in seen)
    assert torch.isfinite(trainer.callback_metrics["train/loss"]) and "val/loss" in trainer.callback_metrics
