"""Training windows of Diffusion Policy in the frozen encoder's feature space.

Every episode is encoded once (:func:`~simdist.components.agents.latent.transitions.episode_features`: the latent of
o_{t-H..t}, a_{t-H..t-1} at every step, the episode front-padded by the history as the controller's buffer
starts). A window at current step ``t`` pairs the condition [latents of t-T_o+1..t, command at t] with the chunk
a_{t-T_o+1} .. a_{t-T_o+T_p}, with the official sampler's episode-boundary padding (BASELINES.md 5.4): steps
before the start repeat the first one (pad_before = T_o - 1) and actions past the end repeat the last one
(pad_after = T_a - 1), so ``t`` runs over 0 .. L + T_o + T_a - 2 - T_p.

With ``expert_only`` (co-training on simulation data, BASELINES.md 5.5) a window counts only when the T_a actions
it would execute (a_t .. a_{t+T_a-1}; past the end, the last action) are all expert-flagged (expert and not
perturbed), and the loss is masked to the chunk positions that are, so no injected noise is ever a target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

__all__ = ["BatchStream", "Windows", "encode_windows", "window_times"]

Folders = str | Path | Sequence[str | Path]


def window_times(length: int, obs_steps: int, horizon: int, action_steps: int) -> np.ndarray:
    """The current steps ``t`` of an episode of ``length`` steps that start a training window."""
    return np.arange(0, max(length + obs_steps + action_steps - 1 - horizon, 0), dtype=np.int64)


@dataclass
class Windows:
    """Per-step arrays of the encoded episodes (concatenated) and the windows over them."""

    latents: Tensor  # (N, latent) frozen-encoder latent at every step
    commands: Tensor  # (N, C) normalised command
    actions: Tensor  # (N, A) applied actions (environment units until :meth:`normalized`)
    expert: Tensor  # (N,) bool
    offset: Tensor  # (W,) first step of each window's episode
    length: Tensor  # (W,) that episode's length
    time: Tensor  # (W,) the window's current step t in its episode
    expert_only: bool
    obs_steps: int
    horizon: int

    def __len__(self) -> int:
        return int(self.time.shape[0])

    def target_actions(self) -> Tensor:
        """The actions that can be targets (the expert-flagged ones with ``expert_only``), for the action range."""
        return self.actions[self.expert] if self.expert_only else self.actions

    def normalized(self, normalize: Any) -> Windows:
        """A copy whose actions are ``normalize(actions)`` clipped to [-1, 1] (they already lie there when the
        range was fitted on these data; finetuning data may exceed it)."""
        return replace(self, actions=normalize(self.actions).clamp(-1.0, 1.0))

    def _steps(self, rows: Tensor, count: int) -> Tensor:
        """(B, count) indices of the steps t-T_o+1 .. t-T_o+count of the windows ``rows``, clamped to their episode
        (the boundary padding)."""
        off, last, t = self.offset[rows, None], self.length[rows, None] - 1, self.time[rows, None]
        return off + torch.clamp(t - self.obs_steps + 1 + torch.arange(count), torch.zeros_like(last), last)

    def batch(self, rows: Tensor) -> dict[str, Tensor]:
        """The windows ``rows``: ``cond`` (B, T_o * latent + C), ``actions`` (B, T_p, A), ``mask`` (B, T_p)."""
        cond_idx, chunk_idx = self._steps(rows, self.obs_steps), self._steps(rows, self.horizon)
        current = self.offset[rows] + self.time[rows]
        cond = torch.cat([self.latents[cond_idx].flatten(1), self.commands[current]], dim=-1)
        mask = self.expert[chunk_idx].float() if self.expert_only else torch.ones(chunk_idx.shape)
        return {"cond": cond, "actions": self.actions[chunk_idx], "mask": mask}

    def steps_used(self) -> int:
        """Distinct episode steps that are a target of some window (counted where the mask is on)."""
        used = torch.zeros(len(self.actions), dtype=torch.bool)
        for lo in range(0, len(self), 4096):
            rows = torch.arange(lo, min(lo + 4096, len(self)))
            idx = self._steps(rows, self.horizon)
            keep = self.expert[idx] if self.expert_only else torch.ones(idx.shape, dtype=torch.bool)
            used[idx[keep]] = True
        return int(used.sum())


def _episodes(folders: Folders) -> Any:
    from simdist.components.agents.latent.replay import dataset_folders
    from simdist.data import iter_episodes

    for root in dataset_folders(folders):
        yield from iter_episodes(str(root), shuffle_shards=False, split_by_node=False, split_by_worker=False)


@torch.no_grad()
def encode_windows(backbone: Any, folders: Folders, *, obs_steps: int, horizon: int, action_steps: int,
                   expert_only: bool = False) -> Windows | None:
    """The windows of the dataset folder(s) ``folders`` in ``backbone``'s feature space (a
    :class:`~simdist.components.agents.latent.BCPolicy`, in eval mode); None when there are none."""
    from simdist.components.agents.latent.transitions import episode_features

    latent_dim = int(backbone.config.latent_dim)
    parts: dict[str, list[Tensor]] = {k: [] for k in ("latents", "commands", "actions", "expert", "offset", "length",
                                                      "time")}
    steps = 0
    for ep in _episodes(folders):
        n = len(ep)
        times = window_times(n, obs_steps, horizon, action_steps)
        expert = np.asarray(ep.expert, bool)
        if expert_only and len(times):
            executed = np.minimum(times[:, None] + np.arange(action_steps), n - 1)  # past the end: the last step
            times = times[expert[executed].all(axis=1)]
        if not len(times):
            continue
        feats = episode_features(backbone, ep)
        parts["latents"].append(feats[:, :latent_dim])
        parts["commands"].append(feats[:, latent_dim:])
        parts["actions"].append(torch.from_numpy(np.asarray(ep.actions, np.float32)))
        parts["expert"].append(torch.from_numpy(expert))
        parts["offset"].append(torch.full((len(times),), steps, dtype=torch.int64))
        parts["length"].append(torch.full((len(times),), n, dtype=torch.int64))
        parts["time"].append(torch.from_numpy(times))
        steps += n
    if not parts["time"]:
        return None
    return Windows(**{k: torch.cat(v) for k, v in parts.items()}, expert_only=expert_only, obs_steps=obs_steps,
                   horizon=horizon)


class BatchStream(torch.utils.data.Dataset):
    """``steps`` training batches, item ``i`` drawn uniformly with replacement by a generator seeded from
    (``seed``, ``i``): ``batch_size - n_prior`` windows of ``demos`` and ``n_prior = round(batch_size *
    prior_fraction)`` of ``prior`` (all from ``demos`` without a prior)."""

    def __init__(self, demos: Windows, prior: Windows | None, *, steps: int, batch_size: int, prior_fraction: float,
                 seed: int) -> None:
        self.demos, self.prior = demos, prior
        self.steps, self.batch_size, self.seed = int(steps), int(batch_size), int(seed)
        self.n_prior = int(round(batch_size * prior_fraction)) if prior is not None and len(prior) else 0

    def __len__(self) -> int:
        return self.steps

    def __getitem__(self, i: int) -> dict[str, Tensor]:
        g = torch.Generator().manual_seed(int(np.random.SeedSequence([self.seed, int(i)]).generate_state(1)[0]))
        parts = []
        if self.batch_size - self.n_prior:
            parts.append(self.demos.batch(torch.randint(len(self.demos), (self.batch_size - self.n_prior,),
                                                        generator=g)))
        if self.n_prior:
            assert self.prior is not None
            parts.append(self.prior.batch(torch.randint(len(self.prior), (self.n_prior,), generator=g)))
        return {k: torch.cat([p[k] for p in parts]) for k in parts[0]}
