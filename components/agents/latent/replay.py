"""Replay for the model-free baselines: encoded dataset folders (each episode encoded once) and batches drawn
from an offline prior and an online buffer in a fixed proportion (RLPD's symmetric sampling: 50/50)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from simdist.components.agents.latent.transitions import Transitions, encode_transitions

__all__ = ["EncodedFolders", "dataset_folders", "mixed_batch", "uniform_batch"]


def dataset_folders(folders: str | Path | Sequence[str | Path]) -> list[Path]:
    """``folders`` (one or several) as paths, each a dataset folder (a FileNotFoundError names one that is not)."""
    roots = [Path(folders)] if isinstance(folders, (str, Path)) else [Path(f) for f in folders]
    for root in roots:
        if not (root / "dataset.json").is_file():
            raise FileNotFoundError(f"{root}: not a dataset folder (no dataset.json)")
    return roots


class EncodedFolders:
    """The transitions of dataset folders in a frozen policy's feature space, each episode encoded once.

    The encoder is frozen, so an episode's transitions never change: the per-episode updates of the RL
    baselines re-read a growing real-data folder and encode only the episodes they have not seen, and a folder
    whose ``dataset.json`` has not changed since the last call (the prior) is not read again.
    """

    def __init__(self, policy: Any, rewards: str, reward_model: Any = None) -> None:
        self.policy = policy
        self.rewards = rewards
        self.reward_model = reward_model
        self._episodes: dict[tuple[str, int], Transitions | None] = {}
        #: per tuple of folders: the ``dataset.json`` texts it was read at and its transitions
        self._loaded: dict[tuple[str, ...], tuple[tuple[str, ...], Transitions | None]] = {}

    def load(self, folders: str | Path | Sequence[str | Path]) -> Transitions | None:
        """Every transition of ``folders`` (None when they hold none)."""
        roots = dataset_folders(folders)
        keys = tuple(str(root.resolve()) for root in roots)
        stamps = tuple((root / "dataset.json").read_text() for root in roots)
        cached = self._loaded.get(keys)
        if cached is not None and cached[0] == stamps:
            return cached[1]
        parts = [t for root, key in zip(roots, keys) for t in self._read(root, key) if t is not None]
        result = Transitions.concat(parts) if parts else None
        self._loaded[keys] = (stamps, result)
        return result

    def _read(self, root: Path, key: str) -> list[Transitions | None]:
        """The transitions of each episode of ``root``, encoding only those not seen before."""
        from simdist.data import iter_episodes

        out = []
        for ep in iter_episodes(str(root), shuffle_shards=False, split_by_node=False, split_by_worker=False):
            episode = (key, int(ep.episode_id))
            if episode not in self._episodes:
                try:
                    self._episodes[episode] = encode_transitions(self.policy, [ep], self.rewards, self.reward_model)
                except ValueError:  # an episode too short to give a transition
                    self._episodes[episode] = None
            out.append(self._episodes[episode])
        return out


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

