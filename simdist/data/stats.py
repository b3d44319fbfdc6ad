"""Per-dimension normalisation statistics (SIMDIST.md 2.2).

Keys: ``obs/<group>`` (per dimension, e.g. per height-scan pixel), ``actions``, ``commands``
(per dimension) and ``rewards``, ``values`` (scalar, shape ``(1,)``). ``std = sqrt(max(var, 1e-8))``.

The accumulator keeps count, mean and sum of squared deviations per dimension in float64 and
merges partial results exactly (Chan et al.), which equals the running sum / sum-of-squares
definition without its cancellation error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simdist.data.schema import DataError, Episode

VAR_FLOOR = 1e-8


def episode_arrays_for_stats(ep: Episode) -> dict[str, np.ndarray]:
    """The arrays of ``ep`` under their stats keys, each ``(L, *dims)``; rewards/values as ``(L, 1)``."""
    out = {f"obs/{g}": v for g, v in ep.obs.items()}
    out["actions"] = ep.actions
    out["commands"] = ep.commands
    out["rewards"] = ep.rewards.reshape(-1, 1)
    out["values"] = ep.values.reshape(-1, 1)
    return out


@dataclass
class Stats:
    """Per-key mean and std arrays (float32)."""

    mean: dict[str, np.ndarray]
    std: dict[str, np.ndarray]

    def keys(self) -> list[str]:
        """The names of the arrays with statistics."""
        return list(self.mean)

    def __getitem__(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        return self.mean[key], self.std[key]

    def __contains__(self, key: str) -> bool:
        return key in self.mean

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """The statistics as a JSON-ready dict of lists."""
        return {k: {"mean": self.mean[k].tolist(), "std": self.std[k].tolist()} for k in self.mean}

    @classmethod
    def from_dict(cls, d: dict[str, dict[str, Any]]) -> Stats:
        """The statistics back from :meth:`to_dict`'s dict."""
        mean = {k: np.asarray(v["mean"], dtype=np.float32) for k, v in d.items()}
        std = {k: np.asarray(v["std"], dtype=np.float32) for k, v in d.items()}
        return cls(mean, std)


@dataclass
class RunningStats:
    """Mergeable accumulator of per-dimension moments."""

    count: dict[str, int] = field(default_factory=dict)
    mean: dict[str, np.ndarray] = field(default_factory=dict)
    m2: dict[str, np.ndarray] = field(default_factory=dict)

    def _merge(self, key: str, n: int, mean: np.ndarray, m2: np.ndarray) -> None:
        if n == 0:
            if key not in self.count:
                self.count[key], self.mean[key], self.m2[key] = 0, mean * 0.0, m2 * 0.0
            return
        n0 = self.count.get(key, 0)
        if n0 == 0:
            self.count[key], self.mean[key], self.m2[key] = n, mean.copy(), m2.copy()
            return
        if self.mean[key].shape != mean.shape:
            raise ValueError(f"stats key {key!r}: shape {mean.shape} != {self.mean[key].shape}")
        tot = n0 + n
        delta = mean - self.mean[key]
        self.mean[key] = self.mean[key] + delta * (n / tot)
        self.m2[key] = self.m2[key] + m2 + delta**2 * (n0 * n / tot)
        self.count[key] = tot

    def update(self, key: str, x: np.ndarray) -> None:
        """Add samples ``x`` of shape ``(N, *dims)`` to ``key``."""
        x = np.asarray(x, dtype=np.float64)
        n = x.shape[0]
        mean = x.mean(axis=0) if n else np.zeros(x.shape[1:])
        m2 = ((x - mean) ** 2).sum(axis=0) if n else np.zeros(x.shape[1:])
        self._merge(key, n, mean, m2)

    def update_episode(self, ep: Episode) -> None:
        """Add every statistics array of episode ``ep``."""
        for k, v in episode_arrays_for_stats(ep).items():
            self.update(k, v)

    def merge(self, other: RunningStats) -> RunningStats:
        """Merge ``other`` into ``self`` in place; returns ``self``."""
        for k in other.count:
            self._merge(k, other.count[k], other.mean[k], other.m2[k])
        return self

    def finalize(self) -> Stats:
        """The mean and std of everything added so far."""
        mean, std = {}, {}
        for k, n in self.count.items():
            if n == 0:
                mean[k] = np.zeros_like(self.mean[k], dtype=np.float32)
                std[k] = np.ones_like(self.mean[k], dtype=np.float32)
                continue
            var = self.m2[k] / n
            mean[k] = self.mean[k].astype(np.float32)
            std[k] = np.sqrt(np.maximum(var, VAR_FLOOR)).astype(np.float32)
        return Stats(mean, std)

    def state_dict(self) -> dict[str, dict[str, Any]]:
        """Exact JSON-able state (float64 values round-trip through JSON)."""
        return {
            k: {"count": self.count[k], "mean": self.mean[k].tolist(), "m2": self.m2[k].tolist()}
            for k in self.count
        }

    @classmethod
    def from_state_dict(cls, d: dict[str, dict[str, Any]], where: str = "stats_state") -> RunningStats:
        """The accumulator of :meth:`state_dict`'s ``d``; a DataError naming ``where`` and the key for an entry
        that is malformed, negative or non-finite (NaN or Inf)."""
        out = cls()
        if not isinstance(d, dict):
            raise DataError(f"{where} must be an object of statistics keys, got {type(d).__name__}")
        for k, v in d.items():
            at = f"{where}[{k!r}]"
            try:
                count, mean, m2 = v["count"], np.asarray(v["mean"], np.float64), np.asarray(v["m2"], np.float64)
            except (KeyError, TypeError, ValueError) as err:
                raise DataError(f"{at} must hold a count and numeric mean and m2 ({type(err).__name__}: {err})"
                                ) from err
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise DataError(f"{at}.count must be an integer >= 0, got {count!r}")
            if mean.shape != m2.shape:
                raise DataError(f"{at}: mean has shape {mean.shape} but m2 has shape {m2.shape}")
            for name, value in (("mean", mean), ("m2", m2)):
                if not np.isfinite(value).all():
                    raise DataError(f"{at}.{name} holds NaN or Inf: regenerate the dataset or fix its statistics")
            if (m2 < 0).any():
                raise DataError(f"{at}.m2 (a sum of squares) is negative")
            out.count[k], out.mean[k], out.m2[k] = count, mean, m2
        return out


def compute_stats(episodes: Iterable[Episode]) -> Stats:
    """Statistics over all steps of ``episodes``."""
    acc = RunningStats()
    for ep in episodes:
        acc.update_episode(ep)
    return acc.finalize()
