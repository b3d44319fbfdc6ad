"""Chunks of consecutive windows: one episode slice per ``K`` windows, its steps encoded once.

A chunk starting at ``s`` holds the episode steps ``s .. s+K+H+T-1`` (every array, ``K + H + T`` rows): the
windows starting at ``s .. s+K-1`` (:mod:`simdist.data.windows`) read only these rows. Neighbouring windows
share all but one of their consistency targets E(o_{t+1..t+T}), so :func:`expand_chunks` turns a batch of
chunks into the ordinary window batch plus ``fut_steps``: the ``K + T - 1`` future observations of each
chunk once, and per window the rows of its ``T`` targets. ``WorldModel.consistency_targets`` encodes those
steps once and gathers the rows, the same values as encoding ``fut_obs`` window by window.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import default_collate

from simdist.data.schema import Episode

_STEP_KEYS = ("actions", "commands", "rewards", "values", "expert")


def chunk_length(windows: int, history: int, horizon: int) -> int:
    """Steps a chunk of ``windows`` windows covers: ``K + H + T``."""
    return windows + history + horizon


def chunk_starts(window_starts: np.ndarray, windows: int) -> np.ndarray:
    """The starts of the whole chunks of ``windows`` consecutive windows among an episode's ``window_starts``
    (the ``len % windows`` last windows, which fill no chunk, are left out)."""
    n = len(window_starts) - len(window_starts) % windows
    return window_starts[:n:windows]


def chunk_at(ep: Episode, start: int, windows: int, history: int, horizon: int) -> dict[str, Any]:
    """The rows ``start .. start+K+H+T-1`` of every episode array (views, no copy)."""
    s, n = int(start), chunk_length(windows, history, horizon)
    if s + n > len(ep):
        raise ValueError(f"episode {ep.episode_id}: a chunk of {windows} windows at {s} needs {s + n} steps, "
                         f"the episode has {len(ep)}")
    out: dict[str, Any] = {"obs": {g: v[s : s + n] for g, v in ep.obs.items()}}
    out.update({k: getattr(ep, k)[s : s + n] for k in _STEP_KEYS})
    return out


def expand_chunks(chunks: dict[str, Any], windows: int, history: int, horizon: int,
                  value_offset: int = 0) -> dict[str, Any]:
    """A batch of C chunks (arrays (C, K+H+T, ...)) as the batch of its C·K windows, in chunk order, with
    the keys of :func:`~simdist.data.windows.gather_windows` and ``fut_steps``: ``obs`` (C·(K+T-1), ...)
    the future observations of each chunk once, ``index`` (C·K, T) the rows of each window's ``fut_obs``."""
    k, h, t = windows, history, horizon
    obs, length = chunks["obs"], chunk_length(k, h, t)
    c = chunks["actions"].shape[0]
    if chunks["actions"].shape[1] != length:
        raise ValueError(f"chunks have {chunks['actions'].shape[1]} steps, {k} windows of history {h} and "
                         f"horizon {t} need {length}")
    w = torch.arange(k)[:, None]
    fut = w + h + torch.arange(t)

    def rows(x: Tensor, idx: Tensor) -> Tensor:  # (C, L, ...) at (K, n) -> (C·K, n, ...)
        return x[:, idx].flatten(0, 1)

    first = h + 1  # the first step any window reads as a future observation
    steps = k + t - 1
    index = (torch.arange(c)[:, None, None] * steps + (fut + 1 - first)).flatten(0, 1)
    return {
        "obs_hist": {g: rows(v, w + torch.arange(h + 1)) for g, v in obs.items()},
        "act_hist": rows(chunks["actions"], w + torch.arange(h)),
        "fut_acts": rows(chunks["actions"], fut),
        "fut_cmds": rows(chunks["commands"], w + h + torch.arange(t + 1)),
        "fut_obs": {g: rows(v, fut + 1) for g, v in obs.items()},
        "rewards": rows(chunks["rewards"], fut),
        "values": rows(chunks["values"], fut + value_offset),
        "expert": rows(chunks["expert"], fut),
        "fut_steps": {"obs": {g: v[:, first:].flatten(0, 1) for g, v in obs.items()}, "index": index},
    }


class ChunkCollate:
    """DataLoader ``collate_fn``: stacks chunk samples and expands them (:func:`expand_chunks`); picklable."""

    def __init__(self, windows: int, history: int, horizon: int, value_offset: int = 0) -> None:
        self.windows, self.history, self.horizon, self.value_offset = windows, history, horizon, value_offset

    def __call__(self, samples: list[dict[str, Any]]) -> dict[str, Any]:
        batch = default_collate(samples)
        out = expand_chunks(batch, self.windows, self.history, self.horizon, self.value_offset)
        for key in ("episode_id", "start"):  # audits: per window, as the window path reports them
            if key in batch:
                offset = torch.arange(self.windows) if key == "start" else torch.zeros(self.windows, dtype=torch.long)
                out[key] = (batch[key][:, None] + offset).flatten()
        return out
