"""Replay for the model-free baselines: encoded dataset folders (each episode encoded once) and batches drawn
from an offline prior and an online buffer in a fixed proportion (RLPD's symmetric sampling: 50/50)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from simdist.latent.transitions import Transitions, encode_transitions

__all__ = ["EncodedFolders", "mixed_batch", "uniform_batch"]


class EncodedFolders:
    """The transitions of dataset folders in a frozen policy's feature space, each episode encoded once.

    The encoder is frozen, so an episode's transitions never change: the per-episode updates of the RL
    baselines re-read a growing real-data folder and encode only the episodes they have not seen.
    """

    def __init__(self, policy: Any, rewards: str, reward_model: Any = None) -> None:
        self.policy = policy
        self.rewards = rewards
        self.reward_model = reward_model
        self._cache: dict[tuple[str, int], Transitions | None] = {}

    def load(self, folders: str | Path | Sequence[str | Path]) -> Transitions | None:
        """Every transition of ``folders`` (None when they hold none)."""
        from simdist.data import iter_episodes

        roots = [folders] if isinstance(folders, (str, Path)) else list(folders)
        parts: list[Transitions] = []
        for root in roots:
            if not (Path(root) / "dataset.json").is_file():
                raise FileNotFoundError(f"{root}: not a dataset folder (no dataset.json)")
            for ep in iter_episodes(str(root), shuffle_shards=False, split_by_node=False, split_by_worker=False):
                key = (str(Path(root).resolve()), int(ep.episode_id))
                if key not in self._cache:
                    try:
                        self._cache[key] = encode_transitions(self.policy, [ep], self.rewards, self.reward_model)
                    except ValueError:  # an episode too short to give a transition
                        self._cache[key] = None
                if self._cache[key] is not None:
                    parts.append(self._cache[key])
        return Transitions.concat(parts) if parts else None


def uniform_batch(data: Transitions, batch: int, generator: torch.Generator) -> dict[str, Tensor]:
    """``batch`` rows of ``data`` drawn uniformly with replacement."""
    return data.take(torch.randint(len(data), (batch,), generator=generator))


def mixed_batch(offline: Transitions | None, online: Transitions | None, batch: int, online_fraction: float,
                generator: torch.Generator) -> dict[str, Tensor]:
    """``round(batch * online_fraction)`` rows from ``online`` and the rest from ``offline``, uniformly with
    replacement; all from the one that exists when the other is missing or empty."""
    has_off, has_on = offline is not None and len(offline) > 0, online is not None and len(online) > 0
    if not (has_off or has_on):
        raise ValueError("no transitions to sample: both the offline and the online buffer are empty")
    if not has_on:
        return uniform_batch(offline, batch, generator)  # type: ignore[arg-type]
    if not has_off:
        return uniform_batch(online, batch, generator)  # type: ignore[arg-type]
    n_on = int(round(batch * online_fraction))
    a = uniform_batch(online, n_on, generator)  # type: ignore[arg-type]
    b = uniform_batch(offline, batch - n_on, generator)  # type: ignore[arg-type]
    return {k: torch.cat([a[k], b[k]]) for k in a}

