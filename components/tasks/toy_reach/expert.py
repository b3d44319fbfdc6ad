"""Scripted policies for ``toy-reach``: a PD expert and a ladder of sub-optimal variants.

All policies are deterministic, batched numpy callables ``policy(obs) -> actions (B, 2)`` with a
``name``. Stateful ones (lag) also have ``reset(ids)``, called by the data engine at every episode
start. The sub-optimal set mimics the official checkpoint ladder (untrained … almost expert).

Value labels come from a critic fitted to the expert's returns (:mod:`simdist.components.tasks.toy_reach.critic`), or
optionally from Monte-Carlo returns-to-go of the recorded episode.
"""

from __future__ import annotations

from typing import Any

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


def expert_for(profile: Any) -> PDPolicy:
    """The expert for a profile's actuators: the PD expert, or with a latency or gain other than the simulator's
    the :class:`DelayCompensatedPD` retuned for them."""
    if profile.latency == 0 and profile.gain == 1.0:
        return expert_policy()
    return DelayCompensatedPD(profile.latency, profile.gain)


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


class DelayCompensatedPD(PDPolicy):
    """The PD expert retuned for a known actuation ``latency`` (control steps) and ``gain``: PD on the state
    predicted ``latency`` steps ahead under the actions still in flight (a Smith predictor on the nominal puck:
    1 kg, the simulator's damping, no friction), with its action divided by ``gain``. It shows that a profile
    stays solvable by a controller that knows its physics."""

    def __init__(self, latency: int, gain: float = 1.0, name: str = "expert_retuned") -> None:
        super().__init__(name=name)
        self.latency, self.gain = int(latency), float(gain)
        self._queue: np.ndarray | None = None  # (B, latency, 2) actions sent and not yet acting

    def reset(self, ids: np.ndarray | None = None) -> None:
        if self._queue is not None:
            self._queue[slice(None) if ids is None else np.asarray(ids, np.int64)] = 0.0

    def prime(self, in_flight: np.ndarray) -> None:
        """Take over from another controller whose last ``latency`` actions (B, latency, 2) are still in flight."""
        self._queue = np.asarray(in_flight, np.float64)[:, -self.latency:] if self.latency else None

    def __call__(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        from simdist.components.tasks.toy_reach.pointmass import DAMPING, DT, MAX_FORCE, NOMINAL_MASS, PHYSICS_DT

        s = np.asarray(obs["state"], np.float64)
        if self._queue is None or len(self._queue) != len(s):
            self._queue = np.zeros((len(s), self.latency, 2))
        p, v = s[:, :2].copy(), s[:, 2:4].copy()
        for k in range(self.latency):  # semi-implicit Euler at the physics rate over the queued actions
            force = MAX_FORCE * self.gain * self._queue[:, k]
            for _ in range(round(DT / PHYSICS_DT)):
                v += PHYSICS_DT * (force - DAMPING * v) / NOMINAL_MASS
                p += PHYSICS_DT * v
        a = self._act(np.concatenate([p, v], axis=1).astype(np.float32)) / self.gain
        a = np.clip(a, -self.limit, self.limit).astype(np.float32)
        if self.latency:
            self._queue = np.concatenate([self._queue[:, 1:], a[:, None].astype(np.float64)], axis=1)
        return a
