"""Cloned Go2 states and the true returns of open-loop candidates from them (:mod:`simdist.mechanism`).

A state is a :meth:`Go2Env.snapshot <simdist.components.tasks.go2.env.Go2Env.snapshot>` row; a candidate is
executed open loop from a restored copy and bootstrapped with the PPO expert's critic, as the Go2 data's value
labels are made (:mod:`.data`: ``values[i] = V(s_{i+1})``, the critic on the post-step privileged observation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from simdist.rows import take_rows


def critic_returns(make_env: Callable[[int, int], Any], critic: Callable[..., np.ndarray],
                   snap: dict[str, np.ndarray], actions: np.ndarray, *, gamma: float, seed: int = 0,
                   batch: int = 256, progress: bool = False) -> np.ndarray:
    """(N,) Σ_{k<T} γ^k r_k + γ^T V(s_T) of ``actions[i]`` (N, T, 12) executed open loop from snapshot row i.

    ``make_env(n, seed)`` builds the env the snapshot came from (same profile); ``critic(obs)`` is V on the
    post-step observation. A fall (termination) ends the return there: no reward after it and no bootstrap,
    as PPO's targets treat it; a time-limit or course-end truncation does not (the critic bootstraps through
    it), so those rows keep stepping.
    """
    from simdist.data.engine import progress_bar

    actions = np.asarray(actions, np.float32)
    n = len(next(iter(snap.values())))
    if actions.ndim != 3 or len(actions) != n:
        raise ValueError(f"actions must be (N={n}, T, A) open-loop sequences, got {actions.shape}")
    out = np.zeros(n)
    bar = progress_bar(n, progress, desc="true returns", unit="candidate")
    env = make_env(min(batch, n), seed)
    try:
        env.reset(seed=seed)
        for lo in range(0, n, env.num_envs):
            idx = np.arange(lo, min(lo + env.num_envs, n))
            rows = np.arange(len(idx))
            env.restore(take_rows(snap, idx), rows)
            ret, disc = np.zeros(env.num_envs), 1.0
            alive = np.zeros(env.num_envs, bool)
            alive[rows] = True
            step = None
            for t in range(actions.shape[1]):
                a = np.zeros((env.num_envs, actions.shape[2]), np.float32)
                a[rows] = actions[idx, t]
                step = env.step(a)
                ret += np.where(alive, disc * step.reward, 0.0)
                disc *= gamma
                alive &= ~np.asarray(step.terminated, bool)
            obs = step.obs if step is not None else env.observations
            ret += np.where(alive, disc * np.asarray(critic(obs), np.float64).reshape(-1), 0.0)
            out[idx] = ret[rows]
            bar.update(len(idx))
    finally:
        bar.close()
        env.close()
    return out
