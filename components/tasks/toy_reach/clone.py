"""Cloned ``toy-reach`` states and the true returns of open-loop candidates from them
(:mod:`simdist.diagnostics.mechanism`).

A snapshot copies each env's MuJoCo integration state (``mj_getState(mjSTATE_INTEGRATION)``: time, position,
velocity, controls, the solver's warm start), the per-env model fields the env randomises (puck mass and
inertia, joint friction) and the env's own arrays (goal, mass, friction, step count, the actions still in the
actuation delay); the floor's tilt, the latency and the gain are the profile's, so the env a snapshot is
restored into must be built on the same profile.

V^e, the expert's value at the end of a candidate, is the PD expert's discounted return from there (on a profile
with actuation latency or gain, the expert retuned for them, :func:`.expert.expert_for`), rolled on the task's
env for :data:`EXPERT_STEPS` steps. That is what the toy's value labels estimate: the dataset
labels ``values[i] = V^expert(s_{i+1})`` with a critic regressed on the expert's discounted returns-to-go over
at least 400 steps (:func:`.critic.expert_returns`), with no time limit (its state, ``(p - g, v)``, carries no
time) and leaving the arena absorbing with zero reward. The return here follows the same definition; it is
rolled rather than read off the fitted critic because that critic is a regression fitted on the training
simulator, while the truth is wanted on the task's profile (the proxy-real puck on its slope), and because a
rollout of the PD expert costs little.

:func:`critic_continuation_parts` is the cheap alternative on the training simulator, where that critic was
fitted: the candidate's T steps rolled, then V̂^e(s_T) read off the critic (T steps a candidate instead of
T + 400), for the ranking data of ``simdist value-rank collect --truth critic``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np

from simdist.rows import take_rows
from simdist.workflows.rollout import open_loop_then_policy

#: V^e's rollout length: the tail of the critic's label returns (:func:`.critic.expert_returns`, γ^400 ≈ 2 %)
EXPERT_STEPS = 400
_SIG = mujoco.mjtState.mjSTATE_INTEGRATION
_MODEL_FIELDS = ("body_mass", "body_inertia", "dof_frictionloss")
_ENV_FIELDS = ("goal", "mass", "friction", "t", "action_queue")


def snapshot(env: Any, rows: np.ndarray) -> dict[str, np.ndarray]:
    """Copies of everything that makes envs ``rows`` of a :class:`ToyReachEnv` evolve as they will (row-first)."""
    rows = np.asarray(rows, np.int64).ravel()
    size = mujoco.mj_stateSize(env.models[0], _SIG)
    physics = np.zeros((len(rows), size))
    for k, e in enumerate(rows):
        mujoco.mj_getState(env.models[e], env.datas[e], physics[k], _SIG)
    snap = {"physics": physics}
    snap |= {f"model/{f}": np.stack([np.array(getattr(env.models[e], f)) for e in rows]) for f in _MODEL_FIELDS}
    snap |= {f"env/{f}": np.array(getattr(env, f)[rows]) for f in _ENV_FIELDS}
    return snap


def restore(env: Any, snap: dict[str, np.ndarray], rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Write a :func:`snapshot` into envs ``rows`` (default: the first ``len(snap)``) of an env on the same
    profile; returns the observations. The restored envs step exactly as the originals would."""
    n = len(snap["physics"])
    rows = np.arange(n) if rows is None else np.asarray(rows, np.int64).ravel()
    for k, e in enumerate(rows):
        m, d = env.models[e], env.datas[e]
        for f in _MODEL_FIELDS:
            getattr(m, f)[:] = snap[f"model/{f}"][k]
        mujoco.mj_setState(m, d, snap["physics"][k], _SIG)
        mujoco.mj_forward(m, d)
    for f in _ENV_FIELDS:
        getattr(env, f)[rows] = snap[f"env/{f}"]
    return env._obs()


def expert_continuation_returns(make_env: Callable[[int, int], Any], snap: dict[str, np.ndarray],
                                actions: np.ndarray, *, gamma: float, seed: int = 0,
                                expert_steps: int = EXPERT_STEPS, batch: int = 256,
                                progress: bool = False) -> np.ndarray:
    """(N,) Σ_{k<T} γ^k r_k + γ^T V^e(s_T) of ``actions[i]`` (N, T, 2) open loop from snapshot row i, V^e(s_T)
    the PD expert's discounted return over ``expert_steps`` further steps; the episode's time limit is ignored
    and leaving the arena (termination) ends the return, as in the critic's labels (module docstring)."""
    from simdist.components.tasks.toy_reach.expert import expert_for
    from simdist.data.engine import progress_bar

    actions = np.asarray(actions, np.float32)
    n = len(snap["physics"])
    if actions.ndim != 3 or len(actions) != n:
        raise ValueError(f"actions must be (N={n}, T, A) open-loop sequences, got {actions.shape}")
    out = np.zeros(n)
    bar = progress_bar(n, progress, desc="true returns", unit="candidate")
    try:
        for lo in range(0, n, batch):
            idx = np.arange(lo, min(lo + batch, n))
            env = make_env(len(idx), seed)
            policy = expert_for(env.profile)
            try:
                env.reset(seed=seed)
                obs = restore(env, take_rows(snap, idx))
                # the candidate's last actions are still in flight when the expert takes over
                prime = (lambda: policy.prime(actions[idx])) if hasattr(policy, "prime") else None  # noqa: B023
                ret = open_loop_then_policy(env, obs, actions[idx], policy, gamma=gamma, policy_steps=expert_steps,
                                            on_switch=prime)[0]
            finally:
                env.close()
            out[idx] = ret
            bar.update(len(idx))
    finally:
        bar.close()
    return out



def critic_continuation_parts(make_env: Callable[[int, int], Any], snap: dict[str, np.ndarray],
                              actions: np.ndarray, critic: Callable[[dict[str, np.ndarray]], np.ndarray], *,
                              gamma: float, seed: int = 0, batch: int = 256) -> dict[str, np.ndarray]:
    """(N,) parts ``horizon`` Σ_{k<T} γ^k r_k of ``actions[i]`` open loop from snapshot row i, ``tail``
    γ^T V̂^e(s_T) with ``critic`` (observations → values) where the puck is still in the arena (0 where it left:
    absorbing, as the critic's labels), and ``total``, their sum."""
    actions = np.asarray(actions, np.float32)
    n = len(snap["physics"])
    if actions.ndim != 3 or len(actions) != n:
        raise ValueError(f"actions must be (N={n}, T, A) open-loop sequences, got {actions.shape}")
    horizon, tail = np.zeros(n), np.zeros(n)
    for lo in range(0, n, batch):
        idx = np.arange(lo, min(lo + batch, n))
        env = make_env(len(idx), seed)
        try:
            env.reset(seed=seed)
            obs = restore(env, take_rows(snap, idx))
            ret, alive, last, disc = open_loop_then_policy(env, obs, actions[idx], lambda o: None, gamma=gamma,
                                                           policy_steps=0)
        finally:
            env.close()
        horizon[idx] = ret
        tail[idx] = np.where(alive, disc * np.asarray(critic(last), np.float64), 0.0)
    return {"total": horizon + tail, "horizon": horizon, "tail": tail}
