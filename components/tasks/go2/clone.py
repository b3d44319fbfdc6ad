"""Cloned Go2 states and the true returns of open-loop candidates from them (:mod:`simdist.diagnostics.mechanism`).

A state is a :meth:`Go2Env.snapshot <simdist.components.tasks.go2.env.Go2Env.snapshot>` row; a candidate is
executed open loop from a restored copy and bootstrapped with the PPO expert's critic, as the Go2 data's value
labels are made (:mod:`.data`: ``values[i] = V(s_{i+1})``, the critic on the post-step privileged observation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from simdist.rows import row_batches, take_rows


def critic_returns(make_env: Callable[[int, int], Any], critic: Callable[..., np.ndarray],
                   snap: dict[str, np.ndarray], actions: np.ndarray, *, gamma: float, seed: int = 0,
                   batch: int = 256, progress: bool = False, parts: dict[str, np.ndarray] | None = None
                   ) -> np.ndarray:
    """(N,) Σ_{k<T} γ^k r_k + γ^T V(s_T) of ``actions[i]`` (N, T, 12) executed open loop from snapshot row i.

    ``make_env(n, seed)`` builds the env the snapshot came from (same profile); ``critic(obs)`` is V on the
    post-step observation. A fall (termination) ends the return there: no reward after it and no bootstrap,
    as PPO's targets treat it; a time-limit or course-end truncation does not (the critic bootstraps through
    it), so those rows keep stepping.

    ``parts``, when given, is filled with (N,) arrays that split the return (``horizon + tail`` is the return):
    ``horizon`` Σ_{k<T} γ^k r_k, ``tail`` γ^T V(s_T) (0 after a fall), ``fell`` 1.0 where the candidate fell
    within the T steps, ``fall_step`` the step it fell at (T if it did not), and ``reward/NAME`` each reward
    term's Σ_{k<T} γ^k r_k^NAME (the env's ``info["reward_terms"]``, before any clipping of the total).
    """
    from simdist.data.engine import progress_bar

    actions = np.asarray(actions, np.float32)
    n = len(next(iter(snap.values())))
    if actions.ndim != 3 or len(actions) != n:
        raise ValueError(f"actions must be (N={n}, T, A) open-loop sequences, got {actions.shape}")
    out = np.zeros(n)
    split: dict[str, np.ndarray] = {"horizon": np.zeros(n), "tail": np.zeros(n), "fell": np.zeros(n),
                                    "fall_step": np.zeros(n)}
    bar = progress_bar(n, progress, desc="true returns", unit="candidate")
    env = make_env(min(batch, n), seed)
    try:
        env.reset(seed=seed)
        for idx, rows in row_batches(n, env.num_envs):
            env.restore(take_rows(snap, idx), rows)
            ret, disc = np.zeros(env.num_envs), 1.0
            alive = np.zeros(env.num_envs, bool)
            alive[rows] = True
            fall_step = np.full(env.num_envs, float(actions.shape[1]))
            terms: dict[str, np.ndarray] = {}
            step = None
            for t in range(actions.shape[1]):
                a = np.zeros((env.num_envs, actions.shape[2]), np.float32)
                a[rows] = actions[idx, t]
                step = env.step(a)
                ret += np.where(alive, disc * step.reward, 0.0)
                for name, value in step.info.get("reward_terms", {}).items():
                    terms.setdefault(name, np.zeros(env.num_envs))
                    terms[name] += np.where(alive, disc * np.asarray(value, np.float64), 0.0)
                disc *= gamma
                fell = alive & np.asarray(step.terminated, bool)
                fall_step[fell] = t
                alive &= ~fell
            obs = step.obs if step is not None else env.observations
            tail = np.where(alive, disc * np.asarray(critic(obs), np.float64).reshape(-1), 0.0)
            split["horizon"][idx] = ret[rows]
            split["tail"][idx] = tail[rows]
            split["fell"][idx] = (~alive)[rows]
            split["fall_step"][idx] = fall_step[rows]
            for name, value in terms.items():
                split.setdefault(f"reward/{name}", np.zeros(n))[idx] = value[rows]
            ret += tail
            out[idx] = ret[rows]
            bar.update(len(idx))
    finally:
        bar.close()
        env.close()
    if parts is not None:
        parts.update(split)
    return out

