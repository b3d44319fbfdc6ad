"""Closed-loop rollouts of a controller in a batched environment, optionally logged as episodes.

A controller is either a planner (``act(history)`` over an :class:`ObservationHistory`; its
``world_model`` decides the history's shape) or a policy (``policy(obs) -> actions`` on numpy
observation dicts, e.g. a scripted or PPO expert). The same loop drives simulated, proxy-real and
physical robots, and the logged episodes use the trajectory schema, so they are finetuning data.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from simdist.data.engine import ActionPerturber, PerturbationConfig, action_hold
from simdist.data.recorder import EpisodeRecorder
from simdist.data.schema import DatasetSpec, Episode
from simdist.envs.base import BatchedEnv
from simdist.planning.history import history_for
from simdist.rows import row_batches, take_rows

if TYPE_CHECKING:
    from simdist.capabilities import EvaluationProtocol, StateCloning

logger = logging.getLogger(__name__)


@dataclass
class RolloutResult:
    """Finished episodes: returns, lengths, termination flags, and the logged episodes if recorded."""

    returns: np.ndarray
    lengths: np.ndarray
    terminated: np.ndarray
    episodes: list[Episode] = field(default_factory=list)
    final_info: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def diverged(self) -> np.ndarray:
        """Per finished episode: the env reported diverged physics (``info["diverged"]``)."""
        return np.array([bool(info.get("diverged", False)) for info in self.final_info], bool)

    @property
    def mean_return(self) -> float:
        return float(self.returns.mean()) if len(self.returns) else float("nan")

    @property
    def steps(self) -> int:
        return int(self.lengths.sum())


def reseed(controller: Any, seed: int | None) -> bool:
    """Restart ``controller``'s random stream at ``seed`` (``controller.reset(seed=seed)``, all envs), so that an
    evaluation's numbers depend on its arguments only, not on what the controller ran before in this process.
    Returns whether the controller takes a seed (deterministic policies need none); no-op for ``seed`` None."""
    reset = getattr(controller, "reset", None)
    if seed is None or reset is None:
        return False
    try:
        takes_seed = "seed" in inspect.signature(reset).parameters
    except (TypeError, ValueError):  # builtins without a signature
        takes_seed = False
    if takes_seed:
        reset(seed=int(seed))
    return takes_seed


def _to_numpy(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def rollout(
    env: BatchedEnv,
    controller: Any,
    *,
    episodes: int,
    seed: int | None = 0,
    record_spec: DatasetSpec | None = None,
    first_episode_id: int = 0,
    meta: dict[str, Any] | None = None,
    on_episode: Callable[[int, int], None] | None = None,
    max_steps: int = 10_000_000,
    perturbation: PerturbationConfig | None = None,
) -> RolloutResult:
    """Run the first ``episodes`` episodes to *start* (across all envs) to their end and return their
    statistics, in the order they started. Counting by start, not by finish, keeps the sample unbiased where
    episodes end at different times: the first ``episodes`` to finish would favour the short ones (an arm that
    succeeds early, a robot that falls), and an env that finishes early starts episodes that are not counted.

    With ``record_spec`` every counted episode is returned in the trajectory schema (rewards as the
    env reports them, values zero, expert flags False: on-policy controller data, as on a robot).
    ``on_episode(done, total)`` is called as episodes finish (progress reporting).
    ``perturbation`` adds the data engine's noise windows to the executed actions (exploration for
    logged data: the recorded action is the applied one), seeded by ``seed``. An env with an
    ``action_hold`` mask gets zero actions on those rows (the evaluation's standing reset phase).
    A ``seed`` also reseeds the controller (:func:`reseed`), so the same call gives the same episodes
    however often the controller ran before.
    """
    t0 = time.perf_counter()
    reseed(controller, seed)
    obs = env.reset(seed=seed)
    b = env.num_envs
    history = history_for(controller, b)
    command_key = "command" if "command" in obs else None
    if history is not None:
        history.reset(obs, command=history.command_of(obs))
        if hasattr(controller, "reset"):
            controller.reset()
    recorder = EpisodeRecorder(b, record_spec, first_episode_id) if record_spec is not None else None
    perturber = None
    if perturbation is not None:
        adim = int(np.prod(env.action_spec.shape))
        perturber = ActionPerturber(perturbation, b, adim, np.random.default_rng(seed))
    ep_return = np.zeros(b, np.float64)
    ep_len = np.zeros(b, np.int64)
    slot = np.arange(b)  # each env's current episode, numbered in the order episodes started
    started = b
    returns: dict[int, float] = {}
    lengths: dict[int, int] = {}
    terminated: dict[int, bool] = {}
    infos: dict[int, dict[str, Any]] = {}
    logged: dict[int, Episode] = {}
    was_held = np.zeros(b, bool)
    for _ in range(max_steps):
        held = action_hold(env, b)
        released = np.flatnonzero(was_held & ~held)
        if len(released) and hasattr(controller, "reset"):
            controller.reset(ids=torch.as_tensor(released))  # walking starts: fresh warm start, as the protocol
        was_held = held
        if history is not None:
            actions = _to_numpy(controller.act(history)).astype(np.float32)
        else:
            actions = _to_numpy(controller(obs)).astype(np.float32)
        if perturber is not None:
            actions = _clip(perturber(actions)[0], env.action_spec)
        actions[held] = 0.0  # the env's standing phase (walk starts)
        step = env.step(actions)
        if recorder is not None:
            cmds = obs.get(command_key) if command_key else None
            recorder.record(obs, actions, commands=cmds, rewards=step.reward)
        ep_return += step.reward
        ep_len += 1
        done = np.flatnonzero(step.terminated | step.truncated)
        obs = step.obs
        if history is not None:
            history.push(obs, actions, command=history.command_of(obs))
        if len(done):
            for e in done:
                if slot[e] >= episodes:
                    continue  # started after the counted ones
                n = int(slot[e])
                returns[n], lengths[n], terminated[n] = float(ep_return[e]), int(ep_len[e]), bool(step.terminated[e])
                info = {k: _to_numpy(v)[e] for k, v in step.info.items() if _is_per_env(v, b)}
                info["final_obs"] = {k: _to_numpy(v)[e] for k, v in obs.items()}
                infos[n] = info
            if recorder is not None:
                finished = recorder.finish(done, [{**(meta or {}), "controller": type(controller).__name__,
                                                   "terminated": bool(step.terminated[e])} for e in done])
                logged.update({int(slot[e]): ep for e, ep in zip(done, finished) if slot[e] < episodes})
            ep_return[done] = 0.0
            ep_len[done] = 0
            if len(returns) >= episodes:
                break
            slot[done] = started + np.arange(len(done))
            started += len(done)
            obs = env.reset(ids=done)
            if history is not None:
                sub = {k: v[done] for k, v in obs.items()}
                history.reset(sub, ids=done, command=history.command_of(sub))
                if hasattr(controller, "reset"):
                    controller.reset(ids=torch.as_tensor(done))
            if on_episode is not None:
                on_episode(len(returns), episodes)
    order = sorted(returns)
    return RolloutResult(
        returns=np.asarray([returns[k] for k in order]), lengths=np.asarray([lengths[k] for k in order]),
        terminated=np.asarray([terminated[k] for k in order], bool),
        episodes=[logged[k] for k in order] if recorder else [],
        final_info=[infos[k] for k in order], seconds=time.perf_counter() - t0,
    )


def _clip(actions: np.ndarray, spec: Any) -> np.ndarray:
    low, high = getattr(spec, "low", None), getattr(spec, "high", None)
    if low is None and high is None:
        return actions
    return np.clip(actions, low, high).astype(np.float32)


def _is_per_env(value: Any, num_envs: int) -> bool:
    return isinstance(value, (np.ndarray, torch.Tensor)) and value.ndim >= 1 and value.shape[0] == num_envs


def step_open_loop(env: Any, obs: Mapping[str, np.ndarray], actions: np.ndarray) -> dict[str, np.ndarray]:
    """The observations (B, T, ...) after every step of ``actions`` (B, T, A) open loop on ``env`` from ``obs``;
    an env that terminates repeats its last observation (what a world model's dynamics is compared with,
    :mod:`simdist.diagnostics.response`)."""
    n, horizon = actions.shape[0], actions.shape[1]
    last = {k: np.array(v) for k, v in obs.items()}
    out = {k: np.zeros((n, horizon, *v.shape[1:]), v.dtype) for k, v in last.items()}
    alive = np.ones(n, bool)
    for t in range(horizon):
        step = env.step(actions[:, t])
        for k, v in step.obs.items():
            if k in last:
                v = np.asarray(v)
                last[k] = np.where(alive.reshape(-1, *[1] * (v.ndim - 1)), v, last[k])
                out[k][:, t] = last[k]
        alive &= ~np.asarray(step.terminated | step.truncated, bool)
    return out


def open_loop_from_clones(make_env: Callable[[int, int], Any], restore: Callable[[Any, np.ndarray, np.ndarray], Any],
                          actions: np.ndarray, *, seed: int = 0, batch: int = 256) -> dict[str, np.ndarray]:
    """:func:`step_open_loop` of ``actions[i]`` (N, T, A) from N cloned states, ``batch`` at a time in one
    env of ``make_env(n, seed)``: ``restore(env, idx, rows)`` writes clones ``idx`` into the env's ``rows`` and
    returns the env's observations. Returns (N, T, ...) per observation group."""
    actions = np.asarray(actions, np.float32)
    if actions.ndim != 3:
        raise ValueError(f"actions must be (N, T, A) open-loop sequences, got {actions.shape}")
    n = len(actions)
    out: dict[str, np.ndarray] = {}
    env = make_env(min(batch, n), seed)
    try:
        env.reset(seed=seed)
        for idx, rows in row_batches(n, env.num_envs):
            obs = restore(env, idx, rows)
            padded = np.zeros((env.num_envs, *actions.shape[1:]), np.float32)
            padded[rows] = actions[idx]
            for k, v in step_open_loop(env, obs, padded).items():
                out.setdefault(k, np.zeros((n, *v.shape[1:]), v.dtype))[idx] = v[rows]
    finally:
        env.close()
    return out


def open_loop_observations(task: StateCloning, states: Any, rows: np.ndarray, actions: np.ndarray, *, seed: int,
                           progress: bool = False) -> dict[str, np.ndarray]:
    """The observations, each (N, T, ...), after every step of ``actions[i]`` (N, T, A) executed open loop on
    ``task``'s env (its profile) from state ``rows[i]`` of ``states`` (restored by ``task.restore_states``,
    ``task.clone_batch`` at a time; an episode that ends early repeats its last observation): what a world
    model's dynamics predicts for the same sequence (:mod:`simdist.diagnostics.response`)."""
    rows = np.asarray(rows, np.int64)
    if len(actions) != len(rows):
        raise ValueError(f"actions must be (N={len(rows)}, T, A) open-loop sequences, got {np.shape(actions)}")

    def restore(env: Any, idx: np.ndarray, into: np.ndarray) -> dict[str, np.ndarray]:
        return task.restore_states(env, take_rows(states, rows[idx]), into)

    return open_loop_from_clones(lambda n, s: task.make_env(n, s, real=True), restore, actions, seed=seed,
                                 batch=task.clone_batch)


def collect_episodes(task: EvaluationProtocol, agent: Any, episodes: int, num_envs: int, seed: int,
                     first_episode_id: int = 0, perturbation: PerturbationConfig | None = None,
                     on_episode: Callable[[int, int], None] | None = None) -> tuple[list[Episode], np.ndarray]:
    """Roll ``agent`` on ``task``'s real env for ``episodes`` logged episodes; returns them and their success flags
    (the task's :meth:`~simdist.capabilities.EvaluationProtocol.success`). ``perturbation`` adds its noise windows
    to the actions (the recorded action is the applied one); ``on_episode(done, total)`` is called as episodes
    finish (progress). Episodes whose simulation diverged are dropped with a warning: never logged, never
    trained on."""
    env = task.make_env(num_envs, seed, real=True)
    try:
        result = rollout(env, agent, episodes=episodes, seed=seed, record_spec=task.dataset_spec(),
                         first_episode_id=first_episode_id, meta={"source": "real", "task": task.name},
                         perturbation=perturbation, on_episode=on_episode)
    finally:
        env.close()
    n = len(result.episodes)
    ok, sound = task.success(result)[:n], ~result.diverged[:n]
    if not sound.all():
        logger.warning("%s: dropped %d of %d logged episodes whose simulation diverged", task.name,
                       int((~sound).sum()), n)
    return [ep for ep, keep in zip(result.episodes, sound) if keep], ok[sound]


def open_loop_then_policy(env: Any, obs: dict[str, np.ndarray], actions: np.ndarray, policy: Callable[..., Any], *,
                          gamma: float, policy_steps: int, on_switch: Callable[[], None] | None = None
                          ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], float]:
    """Discounted return of ``actions`` (B, T, A) open loop on ``env`` from ``obs``, then ``policy(obs)`` for
    ``policy_steps`` steps (``on_switch`` runs once before the policy's first step); a termination ends an env's
    return (its later steps count nothing). Returns ``(returns, alive, last obs, γ^steps)``: the caller may add
    ``γ^steps · V(last obs)`` where alive (the cloned-state true returns of :mod:`simdist.diagnostics.mechanism`)."""
    n, horizon = actions.shape[0], actions.shape[1]
    ret, disc, alive = np.zeros(n), 1.0, np.ones(n, bool)
    for t in range(horizon + policy_steps):
        if t == horizon and on_switch is not None:
            on_switch()
        step = env.step(actions[:, t] if t < horizon else policy(obs))
        ret += np.where(alive, disc * step.reward, 0.0)
        disc *= gamma
        alive &= ~np.asarray(step.terminated, bool)
        obs = step.obs
        if not alive.any():
            break
    return ret, alive, obs, disc
