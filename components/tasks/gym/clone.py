"""Cloned states of Gymnasium MuJoCo envs and the true returns of open-loop candidates from them
(:mod:`simdist.diagnostics.mechanism`: the plan-ranking analysis on ``gym:ID`` tasks).

A snapshot copies, per env, the MuJoCo integration state (``mj_getState(mjSTATE_INTEGRATION)``: time, positions,
velocities, controls, the solver's warm start), the actions still in the profile's actuation delay and the time
limit's step count; the profile's model fields are the same in every env on that profile, so a snapshot is
restored into an env built on the same profile. V^e, the expert's value after a candidate, is the expert's
discounted return over ``expert_steps`` steps on the task's env, then its critic's value (0 after a termination).
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from simdist.components.tasks.gym.env import OBS_KEY, ProfileWrapper
from simdist.errors import InputError
from simdist.rows import take_rows
from simdist.workflows.rollout import open_loop_then_policy

_SIG = mujoco.mjtState.mjSTATE_INTEGRATION


def _layers(env: Any) -> list[Any]:
    out = [env]
    while hasattr(out[-1], "env"):
        out.append(out[-1].env)
    return out


def _parts(single: Any) -> tuple[Any, ProfileWrapper | None, Any]:
    layers = _layers(single)
    unwrapped = single.unwrapped
    if getattr(unwrapped, "model", None) is None or getattr(unwrapped, "data", None) is None:
        raise InputError(f"{type(unwrapped).__name__} is not a MuJoCo env: its states cannot be cloned")
    profile = next((w for w in layers if isinstance(w, ProfileWrapper)), None)
    limit = next((w for w in layers if hasattr(w, "_elapsed_steps")), None)
    return unwrapped, profile, limit


def snapshot(env: Any, rows: np.ndarray) -> dict[str, np.ndarray]:
    """Copies of what makes envs ``rows`` of a :class:`~.env.GymBatchedEnv` evolve as they will (row-first)."""
    rows = np.asarray(rows, np.int64).ravel()
    physics, queues, elapsed = [], [], []
    for e in rows:
        unwrapped, profile, limit = _parts(env.vec.envs[e])
        state = np.zeros(mujoco.mj_stateSize(unwrapped.model, _SIG))
        mujoco.mj_getState(unwrapped.model, unwrapped.data, state, _SIG)
        physics.append(state)
        queues.append(np.array(profile._queue) if profile is not None else np.zeros((0, env.action_dim), np.float32))
        elapsed.append(int(limit._elapsed_steps or 0) if limit is not None else 0)
    return {"physics": np.stack(physics), "queue": np.stack(queues), "elapsed": np.asarray(elapsed, np.int64)}


def restore(env: Any, snap: dict[str, np.ndarray], rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Write a :func:`snapshot` into envs ``rows`` (default: the first ``len(snap)``) of a reset env on the same
    profile; returns the observations (the restored envs step exactly as the originals would)."""
    n = len(snap["physics"])
    rows = np.arange(n) if rows is None else np.asarray(rows, np.int64).ravel()
    obs = np.array(env.reset()[OBS_KEY]) if not env._started else env._obs.copy()
    for k, e in enumerate(rows):
        unwrapped, profile, limit = _parts(env.vec.envs[e])
        mujoco.mj_setState(unwrapped.model, unwrapped.data, snap["physics"][k], _SIG)
        mujoco.mj_forward(unwrapped.model, unwrapped.data)
        if profile is not None:
            profile._queue = np.array(snap["queue"][k], np.float32)
        if limit is not None:
            limit._elapsed_steps = int(snap["elapsed"][k])
        obs[e] = np.asarray(unwrapped._get_obs(), np.float32)
    env._obs = obs
    return {OBS_KEY: obs.copy()}


def expert_continuation_returns(make_env: Any, snap: dict[str, np.ndarray], actions: np.ndarray, *, expert: Any,
                                critic: Any, gamma: float, seed: int = 0, expert_steps: int = 100,
                                batch: int = 64) -> np.ndarray:
    """(N,) Σ_{k<T} γ^k r_k + γ^T V^e(s_T) of ``actions[i]`` (N, T, A) open loop from snapshot row i: the expert
    for ``expert_steps`` more steps, then its critic; a termination ends the return; the time limit is ignored."""
    actions = np.asarray(actions, np.float32)
    n = len(snap["physics"])
    if actions.ndim != 3 or len(actions) != n:
        raise ValueError(f"actions must be (N={n}, T, A) open-loop sequences, got {actions.shape}")
    out = np.zeros(n)
    for lo in range(0, n, batch):
        idx = np.arange(lo, min(lo + batch, n))
        env = make_env(len(idx), seed)
        try:
            env.reset(seed=seed)
            part = take_rows(snap, idx)
            part["elapsed"] = np.zeros_like(part["elapsed"])  # no time limit inside the continuation
            obs = restore(env, part)
            ret, alive, obs, disc = open_loop_then_policy(env, obs, actions[idx], expert, gamma=gamma,
                                                          policy_steps=expert_steps)
            ret += np.where(alive, disc * np.asarray(critic(obs), np.float64).reshape(-1), 0.0)
        finally:
            env.close()
        out[idx] = ret
    return out
