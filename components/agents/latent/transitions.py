"""Transitions in a frozen encoder's feature space: what the model-free baselines learn from.

Every baseline reads the same frozen SimDist encoder (BASELINES.md 8.1), so an episode is encoded once: step
``t`` becomes ``(f_t, a_t, r_t, f_{t+1}, terminal_t)`` with ``f_t`` the encoder's latent of o_{t-H..t},
a_{t-H..t-1} (the episode front-padded by the history, as the controller's history buffer starts) ‖ the
normalised command, and ``a_t`` the applied action in normalised units.

Reward labels (``rewards``):

- ``"sparse"``: 1 on the last step of a successful episode (``meta["success"]``), else 0; success is terminal
  (the paper's manipulation RL baselines learn from sparse success rewards);
- ``"logged"``: the episode's own per-step rewards;
- ``"model"``: SimDist's learned reward model R_θ
  (:func:`~simdist.components.agents.latent.rewards.model_rewards`), the signal of
  the paper's legged-robot baselines.

Terminal steps (mask 0 in a TD target) are true ends only: a success under ``"sparse"`` or an episode whose
``meta["terminated"]`` is set (a fall); a time-out is not terminal (BASELINES.md 8.8). The last step of an
episode that was neither has no next observation and is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch
from torch import Tensor

from simdist.data.schema import DataError, Episode, front_pad

__all__ = ["REWARD_LABELS", "Transitions", "encode_transitions", "episode_features", "sparse_success"]

REWARD_LABELS = ("sparse", "logged", "model")


@dataclass
class Transitions:
    """Row-aligned tensors of N transitions (features ``F``, actions ``A``, normalised units)."""

    features: Tensor  # (N, F) f_t
    actions: Tensor  # (N, A) a_t, normalised
    rewards: Tensor  # (N,)
    next_features: Tensor  # (N, F) f_{t+1} (a copy of f_t on terminal steps; never read there)
    terminal: Tensor  # (N,) bool: a true end (mask 0)
    values: Tensor  # (N,) the data's value label V(s_{t+1}) (zero for logged real episodes)
    expert: Tensor  # (N,) bool: a_t from the expert without injected noise
    episode_ids: Tensor  # (N,) int64

    def __len__(self) -> int:
        return int(self.features.shape[0])

    def take(self, index: Tensor) -> dict[str, Tensor]:
        """The rows ``index`` as a batch dict (one key per field)."""
        return {f.name: getattr(self, f.name)[index] for f in fields(self)}

    @classmethod
    def concat(cls, parts: Sequence[Transitions]) -> Transitions:
        """Rows of ``parts`` in order (at least one part)."""
        if not parts:
            raise ValueError("concat needs at least one Transitions")
        return cls(**{f.name: torch.cat([getattr(p, f.name) for p in parts]) for f in fields(cls)})


def sparse_success(ep: Episode) -> bool:
    """The success label of a logged episode (``meta["success"]``); a DataError names the episode without one."""
    if "success" not in ep.meta:
        raise DataError(f"episode {ep.episode_id}: rewards='sparse' needs a success label (meta['success']); "
                        "episodes logged by the adaptation loop or the demo recorder carry one")
    return bool(ep.meta["success"])


@torch.no_grad()
def episode_features(policy: Any, ep: Episode, chunk: int = 4096) -> Tensor:
    """``policy.features`` (a :class:`~simdist.components.agents.latent.BCPolicy` or anything with its ``config``
    and ``features``) at every step of ``ep``: (L, F), the episode front-padded by the history."""
    history = int(policy.config.history)
    padded = front_pad(ep, history)
    dev = policy.device
    out = []
    for lo in range(0, len(ep), chunk):
        s = np.arange(lo, min(lo + chunk, len(ep)), dtype=np.int64)[:, None]
        obs_idx, act_idx = s + np.arange(history + 1), s + np.arange(history)
        obs = {g: torch.from_numpy(v[obs_idx]).to(dev) for g, v in padded.obs.items()}
        acts = torch.from_numpy(padded.actions[act_idx]).to(dev)
        cmd = torch.from_numpy(padded.commands[s[:, 0] + history]).to(dev) if policy.config.command_dim else None
        out.append(policy.features(obs, acts, cmd).float())
    return torch.cat(out).cpu()


def _episode_transitions(policy: Any, ep: Episode, rewards: str, reward_model: Any = None) -> Transitions | None:
    n = len(ep)
    if n == 0:
        return None
    feats = episode_features(policy, ep)
    success = sparse_success(ep) if rewards == "sparse" else False
    terminal_end = success or bool(ep.meta.get("terminated", False))
    keep = n if terminal_end else n - 1
    if keep <= 0:
        return None
    if rewards == "sparse":
        r = np.zeros(n, np.float32)
        r[-1] = float(success)
    elif rewards == "model":
        from simdist.components.agents.latent.rewards import model_rewards

        r = model_rewards(reward_model, ep)
    else:
        r = ep.rewards.astype(np.float32)
    terminal = np.zeros(n, bool)
    terminal[-1] = terminal_end
    nxt = torch.cat([feats[1:], feats[-1:]])
    actions = policy.normalizer.normalize("actions", torch.from_numpy(ep.actions).to(policy.device)).cpu()
    values = ep.values[:, 0] if ep.values.ndim == 2 else ep.values
    return Transitions(
        features=feats[:keep], actions=actions[:keep].float(), rewards=torch.from_numpy(r[:keep]),
        next_features=nxt[:keep], terminal=torch.from_numpy(terminal[:keep]),
        values=torch.from_numpy(np.asarray(values, np.float32)[:keep]),
        expert=torch.from_numpy(np.asarray(ep.expert, bool)[:keep]),
        episode_ids=torch.full((keep,), int(ep.episode_id), dtype=torch.int64))


def encode_transitions(policy: Any, episodes: Iterable[Episode], rewards: str = "sparse",
                       reward_model: Any = None) -> Transitions:
    """The transitions of ``episodes`` in ``policy``'s feature space (see the module docstring; ``reward_model``:
    the world model whose reward head labels them with ``rewards="model"``); a ValueError when ``rewards`` is
    not a label kind, lacks its model, or no episode yields a transition."""
    if rewards not in REWARD_LABELS:
        raise ValueError(f"rewards must be one of {REWARD_LABELS}, got {rewards!r}")
    if rewards == "model" and reward_model is None:
        raise ValueError("rewards='model' needs the world model whose reward head labels the transitions")
    was_training = policy.training
    policy.eval()
    try:
        parts = [t for ep in episodes if (t := _episode_transitions(policy, ep, rewards, reward_model)) is not None]
    finally:
        policy.train(was_training)
    if not parts:
        raise ValueError("no transitions: every episode was empty or ended by a time-out after one step")
    return Transitions.concat(parts)
