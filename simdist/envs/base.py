"""The environment protocol shared by simulated, proxy-real and physical robots.

An environment is batched over ``num_envs`` and steps at the control rate ``1 / dt``.
Observations are a dict of float32 arrays of shape ``(num_envs, *spec.shape)``.
``step`` never resets by itself: the caller resets finished environments with
``reset(ids=...)``, so what a finished episode saw is never overwritten.

An environment may also expose ``action_hold``, a (num_envs,) bool mask of envs whose next action must
be zero (a standing phase, e.g. a legged robot's walk start); the data engine and ``rollout`` read it with
:func:`simdist.data.engine.action_hold`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class ArraySpec:
    """Shape, dtype and optional bounds of one array (per environment)."""

    shape: tuple[int, ...]
    dtype: str = "float32"
    low: float | None = None
    high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "dtype": self.dtype, "low": self.low, "high": self.high}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ArraySpec:
        return cls(tuple(int(s) for s in d["shape"]), d.get("dtype", "float32"), d.get("low"), d.get("high"))


@dataclass
class StepResult:
    """What ``step`` returns: observations after the step, dt-scaled reward, end flags, extras."""

    obs: dict[str, np.ndarray]
    reward: np.ndarray  # (num_envs,) float32
    terminated: np.ndarray  # (num_envs,) bool: failure (fall, contact, diverged physics)
    truncated: np.ndarray  # (num_envs,) bool: time limit or course end
    info: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class BatchedEnv(Protocol):
    """What every simdist environment (simulated or physical) implements."""

    num_envs: int
    dt: float
    observation_spec: dict[str, ArraySpec]
    action_spec: ArraySpec

    def reset(self, seed: int | None = None, ids: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Reset all environments (``ids=None``) or only ``ids``; returns observations of all envs."""
        ...

    def step(self, actions: np.ndarray) -> StepResult:
        """Apply ``actions`` of shape ``(num_envs, *action_spec.shape)`` for one control period."""
        ...

    def close(self) -> None: ...
