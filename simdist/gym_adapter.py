"""Any simdist task as a :class:`gymnasium.Env` (:meth:`simdist.capabilities.EnvFactory.gym_env`).

One env of the task's batched env (:meth:`~simdist.capabilities.EnvFactory.make_env` with ``num_envs=1``) behind
Gymnasium's single-env API: ``reset(seed=None, options=None) -> (obs, info)`` and ``step(a) -> (obs, reward, terminated,
truncated, info)``. Observations are a ``Dict`` of the task's observation groups (``flatten=True``: one ``Box`` of
the groups concatenated in the spec's order); the action space is a ``Box`` of the task's action spec (unbounded
dimensions stay unbounded). ``reset(seed=s)`` reseeds the task's env, so two resets with one seed start alike;
``reset()`` continues the env's own random stream. An action outside the bounds is clipped, as the task's env does.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces


def _box(spec: Any) -> spaces.Box:
    dtype = np.dtype(getattr(spec, "dtype", "float32"))
    low = -np.inf if spec.low is None else spec.low
    high = np.inf if spec.high is None else spec.high
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        low = info.min if spec.low is None else spec.low
        high = info.max if spec.high is None else spec.high
    return spaces.Box(low=low, high=high, shape=tuple(spec.shape), dtype=dtype)


class TaskGymEnv(gymnasium.Env):
    """A simdist task's env (one of it) as a Gymnasium environment; ``real``: the proxy-real env on the task's
    profile, else the training simulator."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, task: Any, *, seed: int | None = None, real: bool = True, flatten: bool = False,
                 render_mode: str | None = None) -> None:
        self.task, self.real, self.flatten = task, real, flatten
        self._seed = 0 if seed is None else int(seed)
        self._env = task.make_env(1, self._seed, real=real)
        self.render_mode = render_mode
        obs_spec = dict(self._env.observation_spec)
        self._groups = list(obs_spec)
        boxes: dict[str, spaces.Space[Any]] = {k: _box(s) for k, s in obs_spec.items()}
        if flatten:
            flat = [b for b in boxes.values() if isinstance(b, spaces.Box)]
            low = np.concatenate([np.broadcast_to(b.low, b.shape).reshape(-1).astype(np.float64) for b in flat])
            high = np.concatenate([np.broadcast_to(b.high, b.shape).reshape(-1).astype(np.float64) for b in flat])
            self.observation_space: spaces.Space = spaces.Box(low=low.astype(np.float32), high=high.astype(np.float32),
                                                              dtype=np.float32)
        else:
            self.observation_space = spaces.Dict(boxes)
        a = self._env.action_spec
        self._action_shape = tuple(int(n) for n in a.shape)
        self.action_space = spaces.Box(low=-np.inf if a.low is None else a.low,
                                       high=np.inf if a.high is None else a.high, shape=tuple(a.shape),
                                       dtype=np.float32)
        self.dt = float(self._env.dt)
        self.metadata = {**self.metadata, "render_fps": max(1, round(1.0 / self.dt))}
        self.spec_name = task.name

    def _obs(self, batched: dict[str, np.ndarray]) -> Any:
        out = {}
        for k in self._groups:
            box = self.observation_space[k] if isinstance(self.observation_space, spaces.Dict) else None
            v = np.asarray(batched[k])[0]
            out[k] = v.astype(box.dtype if box is not None else np.float32, copy=True)
        if self.flatten:
            return np.concatenate([np.asarray(out[k], np.float32).reshape(-1) for k in self._groups])
        return out

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            # a fresh env: a reseeded reset starts exactly as the first one with that seed did
            self._env.close()
            self._env = self.task.make_env(1, int(seed), real=self.real)
        obs = self._env.reset(seed=None if seed is None else int(seed))
        return self._obs(obs), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        a = np.asarray(action, np.float32).reshape((1, *self._action_shape))
        r = self._env.step(a)
        info: dict[str, Any] = {}
        for k, v in (r.info or {}).items():
            arr = np.asarray(v) if isinstance(v, (np.ndarray, list)) else None
            if arr is not None and arr.ndim >= 1 and arr.shape[0] == 1:
                info[k] = arr[0]
        terminated, truncated = bool(np.asarray(r.terminated)[0]), bool(np.asarray(r.truncated)[0])
        return self._obs(r.obs), float(np.asarray(r.reward)[0]), terminated, truncated, info

    def close(self) -> None:
        env = getattr(self, "_env", None)
        if env is not None:
            env.close()
            self._env = None
        super().close()
