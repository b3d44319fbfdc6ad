"""Scripted policies for ``toy-reach``: a PD expert and a ladder of sub-optimal variants.

All policies are deterministic, batched numpy callables ``policy(obs) -> actions (B, 2)`` with a
``name``. Stateful ones (lag) also have ``reset(ids)``, called by the data engine at every episode
start. The sub-optimal set mimics the official checkpoint ladder (untrained … almost expert).

Value labels come from a critic fitted to the expert's returns (:mod:`simdist.components.tasks.toy_reach.critic`), or
optionally from Monte-Carlo returns-to-go of the recorded episode.
"""

from __future__ import annotations

import numpy as np

KP, KD = 5.0, 1.0


class PDPolicy:
    """``a = clip(bias − kp (p − g) − kd v, ±limit)`` on observation ``state = (p − g, v)``."""

    def __init__(self, kp: float = KP, kd: float = KD, bias: tuple[float, float] = (0.0, 0.0),
                 limit: float = 1.0, name: str = "expert") -> None:
        self.kp, self.kd, self.limit, self.name = kp, kd, limit, name
        self.bias = np.asarray(bias, np.float32)

    def __call__(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        s = np.asarray(obs["state"], np.float32)
        return self._act(s)

    def _act(self, s: np.ndarray) -> np.ndarray:
        a = self.bias - self.kp * s[:, :2] - self.kd * s[:, 2:4]
        return np.clip(a, -self.limit, self.limit).astype(np.float32)


class LaggedPD(PDPolicy):
    """PD on the observation from ``lag`` control steps ago (oscillates, like a slow controller)."""

    def __init__(self, lag: int = 6, kp: float = KP, kd: float = KD, name: str = "pd_lag") -> None:
        super().__init__(kp=kp, kd=kd, name=name)
        self.lag = lag
        self._buf: np.ndarray | None = None  # (lag + 1, B, 4) ring of past states
        self._fill: np.ndarray | None = None  # steps seen this episode, per env

    def reset(self, ids: np.ndarray) -> None:
        if self._fill is not None:
            self._fill[np.asarray(ids, np.int64)] = 0

    def __call__(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        s = np.asarray(obs["state"], np.float32)
        if self._buf is None or self._buf.shape[1] != len(s):
            self._buf = np.repeat(s[None], self.lag + 1, axis=0)
            self._fill = np.zeros(len(s), np.int64)
        assert self._fill is not None
        fresh = self._fill == 0
        self._buf[:, fresh] = s[fresh]  # a new episode starts with a full history of its first state
        self._buf = np.roll(self._buf, -1, axis=0)
        self._buf[-1] = s
        self._fill += 1
        return self._act(self._buf[0])


class RandomLinear:
    """A fixed random linear-tanh map, like an untrained network (iteration 0)."""

    def __init__(self, seed: int = 0, scale: float = 0.8, name: str = "random_linear") -> None:
        rng = np.random.default_rng(seed)
        self.w = (rng.normal(0, scale, (4, 2))).astype(np.float32)
        self.b = rng.normal(0, 0.3, 2).astype(np.float32)
        self.name = name

    def __call__(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        return np.tanh(np.asarray(obs["state"], np.float32) @ self.w + self.b).astype(np.float32)


def expert_policy() -> PDPolicy:
    """The near-critically damped PD expert."""
    return PDPolicy(name="expert")


def suboptimal_policies(seed: int = 0) -> list[PDPolicy | RandomLinear]:
    """Seven sub-optimal policies, from nearly random to nearly expert (SIMDIST 4.4 uses 11 checkpoints)."""
    return [
        RandomLinear(seed=seed),
        PDPolicy(kp=KP, kd=-0.3, name="pd_antidamped"),
        PDPolicy(kp=0.8, kd=0.3, name="pd_weak"),
        LaggedPD(lag=6, name="pd_lag"),
        PDPolicy(kp=KP, kd=0.2, name="pd_underdamped"),
        PDPolicy(bias=(0.25, -0.15), name="pd_biased"),
        PDPolicy(limit=0.3, name="pd_saturated"),
    ]
