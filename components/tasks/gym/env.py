"""A Gymnasium environment as a simdist batched env: ``gymnasium.vector.SyncVectorEnv`` without auto-reset.

:func:`make_gym` builds one env from an id (``HalfCheetah-v5``) or an entry point (``package.module:Class``,
registered with Gymnasium on first use), with the profile's wrappers (:class:`ProfileWrapper`: MjModel physics,
actuation latency, observation noise) and actions rescaled to ``[-1, 1]``. :class:`GymBatchedEnv` runs
``num_envs`` of them through ``SyncVectorEnv`` with auto-reset disabled, so the simdist protocol holds: ``step``
never resets, ``reset(ids=...)`` resets the finished ones (Gymnasium's ``reset_mask``), ``reset(seed=s)`` seeds
env ``i`` with ``s + i`` as Gymnasium's vector API does. Observations are one group ``state`` (float32), the
env's ``terminated`` and ``truncated`` pass through unchanged (a time limit is a truncation), rewards are the env's.

:func:`check_spaces` refuses what simdist cannot model, naming the space: a flat ``Box`` observation and a
bounded ``Box`` action are required (``Dict``, ``Discrete``, ``Tuple``, images are refused).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from simdist.components.tasks.gym.profiles import GymProfile
from simdist.envs.base import ArraySpec, StepResult
from simdist.errors import InputError

OBS_KEY = "state"


class GymSpaceError(InputError):
    """A Gymnasium env whose observation or action space simdist cannot model (the message names the space)."""


def resolve_id(spec: str) -> str:
    """A Gymnasium env id for ``spec``: the id itself, or for an entry point ``module:Class`` an id registered for
    it on first use (``simdist/module_Class-v0``)."""
    module, sep, attr = spec.partition(":")
    if not sep or spec in gymnasium.registry:
        return spec
    if attr and "-v" in attr and "." not in attr:  # Gymnasium's own "module:Env-v0": the module registers the id
        importlib.import_module(module)
        return attr if attr in gymnasium.registry else spec
    env_id = "simdist/" + re.sub(r"[^A-Za-z0-9_]", "_", spec) + "-v0"
    if env_id not in gymnasium.registry:
        try:
            target = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as err:
            raise InputError(f"--task gym:{spec}: cannot import the entry point {spec!r} ({err})") from err
        if not callable(target):
            raise InputError(f"--task gym:{spec}: the entry point {spec!r} is not a class or callable")
        gymnasium.register(id=env_id, entry_point=spec)
    return env_id


def check_spaces(env: gymnasium.Env, name: str) -> None:
    """Refuse spaces simdist cannot model: one line naming the env and the space."""
    obs, act = env.observation_space, env.action_space
    if not isinstance(obs, spaces.Box):
        raise GymSpaceError(f"gym:{name}: observation space {obs} is not supported: simdist takes a flat Box "
                            "(a vector); Dict, Tuple and discrete observations need a wrapper that flattens them")
    if len(obs.shape) != 1 or np.issubdtype(obs.dtype, np.integer):
        raise GymSpaceError(f"gym:{name}: observation space {obs} looks like an image (shape {obs.shape}, dtype "
                            f"{obs.dtype}); a gym: task has no image encoder: wrap it into a flat float Box")
    if not isinstance(act, spaces.Box):
        raise GymSpaceError(f"gym:{name}: action space {act} is not supported: simdist plans continuous actions "
                            "(a bounded Box); Discrete, MultiDiscrete and Dict actions are refused")
    if len(act.shape) != 1 or not (np.isfinite(act.low).all() and np.isfinite(act.high).all()):
        raise GymSpaceError(f"gym:{name}: action space {act} is not supported: a 1-D Box with finite bounds is "
                            "needed (the planner samples within them)")


class ProfileWrapper(gymnasium.Wrapper):
    """A reality profile on a Gymnasium env: the MjModel's masses, inertias, geom friction and actuator gains set
    from their nominal values at every reset, actions delayed by ``latency`` steps, observations noised."""

    def __init__(self, env: gymnasium.Env, profile: GymProfile, name: str) -> None:
        super().__init__(env)
        self.profile = profile
        model = getattr(env.unwrapped, "model", None)
        if profile.changes_physics and model is None:
            raise InputError(f"profile {profile.name!r}: gym:{name} is not a MuJoCo env (no unwrapped.model); only "
                             "latency and obs_noise apply to it")
        self._model = model
        if model is not None:
            self._nominal = {k: np.array(getattr(model, k), copy=True)
                             for k in ("body_mass", "body_inertia", "geom_friction", "actuator_gainprm",
                                       "actuator_biasprm")}
            self._mass = np.full(model.nbody, profile.mass_scale)
            import mujoco

            for item in profile.body_mass_scale:
                bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, item["body"])
                if bid < 0:
                    names = [model.body(i).name for i in range(model.nbody)]
                    raise InputError(f"profile {profile.name!r}: body_mass_scale: no body {item['body']!r} in "
                                     f"gym:{name} (bodies: {', '.join(n for n in names if n)})")
                self._mass[bid] *= item["scale"]
        self._queue = np.zeros((profile.latency, *env.action_space.shape), np.float32)
        self._noise_rng = np.random.default_rng(0)

    def _apply_physics(self) -> None:
        m, nom, p = self._model, self._nominal, self.profile
        if m is None or not p.changes_physics:
            return
        m.body_mass[:] = nom["body_mass"] * self._mass
        m.body_inertia[:] = nom["body_inertia"] * self._mass[:, None]
        m.geom_friction[:, 0] = nom["geom_friction"][:, 0] * p.friction_scale
        m.actuator_gainprm[:, 0] = nom["actuator_gainprm"][:, 0] * p.actuator_gain
        m.actuator_biasprm[:, :3] = nom["actuator_biasprm"][:, :3] * p.actuator_gain

    def _noise(self, obs: np.ndarray) -> np.ndarray:
        if self.profile.obs_noise == 0.0:
            return obs
        return (obs + self._noise_rng.normal(0.0, self.profile.obs_noise, np.shape(obs))).astype(obs.dtype)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        self._apply_physics()  # before the env's reset computes its first observation
        if seed is not None:
            self._noise_rng = np.random.default_rng([int(seed), 1])
        self._queue[:] = 0.0
        obs, info = self.env.reset(seed=seed, options=options)
        return self._noise(obs), info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        if self.profile.latency:
            applied = self._queue[0].copy()
            self._queue = np.concatenate([self._queue[1:], np.asarray(action, np.float32)[None]], axis=0)
            action = applied
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._noise(obs), reward, terminated, truncated, info


def make_gym(spec: str, profile: GymProfile | None = None, **kwargs: Any) -> gymnasium.Env:
    """One Gymnasium env for ``spec`` (id or entry point) with ``profile``'s wrappers, actions in ``[-1, 1]``."""
    env_id = resolve_id(spec)
    try:
        env = gymnasium.make(env_id, **kwargs)
    except (gymnasium.error.Error, ImportError) as err:
        raise InputError(f"--task gym:{spec}: Gymnasium cannot make {env_id!r} ({err})") from err
    except TypeError as err:  # an entry point that is callable but makes no gymnasium.Env (or takes other arguments)
        reason = str(err).split(" See ")[0].rstrip(".")
        raise InputError(f"--task gym:{spec}: Gymnasium cannot make {env_id!r}: {reason}; an entry point must be a "
                         "gymnasium.Env class or a function returning one") from err
    check_spaces(env, spec)
    if profile is not None:
        env = ProfileWrapper(env, profile, spec)
    act = env.action_space
    assert isinstance(act, spaces.Box)
    if not (np.allclose(act.low, -1.0) and np.allclose(act.high, 1.0)):
        ones = np.ones(act.shape, np.float32)
        env = gymnasium.wrappers.RescaleAction(env, -ones, ones)
    return env


def env_dt(env: gymnasium.Env) -> float:
    """The control period of a Gymnasium env: its ``dt`` (MuJoCo envs, classic control), else ``1/render_fps``."""
    dt = getattr(env.unwrapped, "dt", None)
    if dt is None:
        fps = (env.metadata or {}).get("render_fps")
        dt = 1.0 / fps if fps else 0.05
    return float(dt)


class GymBatchedEnv:
    """``num_envs`` Gymnasium envs as a simdist :class:`~simdist.envs.base.BatchedEnv` (no auto-reset)."""

    def __init__(self, spec: str, num_envs: int = 1, seed: int | None = 0, profile: GymProfile | None = None,
                 make_kwargs: dict[str, Any] | None = None) -> None:
        from gymnasium.vector import AutoresetMode, SyncVectorEnv

        self.spec, self.num_envs, self.profile = spec, int(num_envs), profile
        fns: list[Callable[[], gymnasium.Env]] = [lambda: make_gym(spec, profile, **(make_kwargs or {}))
                                                  for _ in range(self.num_envs)]
        self.vec = SyncVectorEnv(fns, autoreset_mode=AutoresetMode.DISABLED)
        single = self.vec.envs[0]
        obs_space = single.observation_space
        assert isinstance(obs_space, spaces.Box)
        self.dt = env_dt(single)
        self.obs_dim = int(obs_space.shape[0])
        self.action_dim = int(single.action_space.shape[0])  # type: ignore[index]
        self.observation_spec = {OBS_KEY: ArraySpec((self.obs_dim,))}
        self.action_spec = ArraySpec((self.action_dim,), low=-1.0, high=1.0)
        self.action_low = np.full(self.action_dim, -1.0, np.float32)
        self.action_high = np.full(self.action_dim, 1.0, np.float32)
        self.max_episode_steps = getattr(single.spec, "max_episode_steps", None)
        self._seed = seed
        self._obs = np.zeros((self.num_envs, self.obs_dim), np.float32)
        self._started = False
        self._done = np.zeros(self.num_envs, bool)  # finished and not reset yet

    def reset(self, seed: int | None = None, ids: np.ndarray | None = None) -> dict[str, np.ndarray]:
        if ids is None or not self._started:
            s = seed if seed is not None else (self._seed if not self._started else None)
            obs, _ = self.vec.reset(seed=s)
            self._started = True
            self._obs = np.asarray(obs, np.float32)
            self._done[:] = False
        else:
            mask = np.zeros(self.num_envs, bool)
            mask[np.asarray(ids, np.int64).reshape(-1)] = True
            obs, _ = self.vec.reset(seed=seed, options={"reset_mask": mask})
            self._obs[mask] = np.asarray(obs, np.float32)[mask]
            self._done &= ~mask
        return {OBS_KEY: self._obs.copy()}

    def step(self, actions: np.ndarray) -> StepResult:
        """One control step of every env. An env that finished and was not reset (a caller stepping the whole batch
        past an episode's end) restarts first: what it returns means nothing until the caller resets it."""
        a = np.clip(np.asarray(actions, np.float32).reshape(self.num_envs, self.action_dim), -1.0, 1.0)
        if self._done.any():
            self.vec.reset(options={"reset_mask": self._done.copy()})
            self._done[:] = False
        obs, reward, terminated, truncated, _ = self.vec.step(a)
        self._obs = np.asarray(obs, np.float32)
        diverged = ~np.isfinite(self._obs).all(axis=1) | ~np.isfinite(np.asarray(reward, np.float64))
        term = np.asarray(terminated, bool) | diverged
        trunc = np.asarray(truncated, bool) & ~term
        self._done = np.asarray(terminated, bool) | np.asarray(truncated, bool)
        return StepResult({OBS_KEY: self._obs.copy()}, np.asarray(reward, np.float32), term, trunc,
                          {"diverged": diverged})

    def episode_meta(self, ids: np.ndarray) -> list[dict[str, Any]]:
        name = None if self.profile is None else self.profile.name
        return [{"gym_id": self.spec, "profile": name} for _ in np.asarray(ids).reshape(-1)]

    @property
    def models(self) -> list[Any]:
        """The MuJoCo models of the envs (empty for non-MuJoCo envs)."""
        return [m for e in self.vec.envs if (m := getattr(e.unwrapped, "model", None)) is not None]

    def close(self) -> None:
        self.vec.close()
