"""SimDist's learned reward model R_θ as the reward of logged transitions: the paper's legged-robot baselines all
learn from it ("so that only the adaptation strategy differs", BASELINES.md 1.3)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import torch

from simdist.data.schema import Episode, front_pad
from simdist.data.windows import gather_windows

__all__ = ["model_rewards"]


def _end_pad(ep: Episode, n: int) -> Episode:
    """``n`` steps appended: the last observation and command repeated, zero actions and labels (only so that
    every step of the episode starts a full window; the padded steps are never labelled)."""
    def rep(a: np.ndarray) -> np.ndarray:
        return np.concatenate([a, np.repeat(a[-1:], n, axis=0)])

    def zeros(a: np.ndarray) -> np.ndarray:
        return np.concatenate([a, np.zeros((n, *a.shape[1:]), a.dtype)])

    return replace(ep, obs={g: rep(v) for g, v in ep.obs.items()}, actions=zeros(ep.actions),
                   commands=rep(ep.commands), rewards=zeros(ep.rewards), values=zeros(ep.values),
                   expert=zeros(ep.expert))


@torch.no_grad()
def model_rewards(world_model: Any, ep: Episode, chunk: int = 1024) -> np.ndarray:
    """R_θ(z_t, a_t, c_t) at every step of ``ep`` (environment units, (L,)): the reward head's first prediction of
    the window at ``t`` imagined with the logged actions (the episode front-padded by the history, as the
    controller's buffer starts)."""
    from simdist.training.evaluate import tensors_to_device

    cfg = world_model.config
    h, t = cfg.history, cfg.horizon
    padded = _end_pad(front_pad(ep, h), t + 1)
    was_training = world_model.training
    world_model.eval()
    out = []
    try:
        for lo in range(0, len(ep), chunk):
            starts = np.arange(lo, min(lo + chunk, len(ep)), dtype=np.int64)
            batch = tensors_to_device(gather_windows(padded, starts, h, t, value_offset=cfg.value_offset),
                                      world_model.device)
            pred = world_model.predict(batch, heads=True)
            first = pred.rewards[:, :1].unsqueeze(-1)  # (N, 1, 1): r̂ at the window's current step
            out.append(world_model.normalizer.denormalize("rewards", first).reshape(-1).cpu().numpy())
    finally:
        world_model.train(was_training)
    return np.concatenate(out).astype(np.float32)
