"""The :class:`EnvFactory` capability: a task's batched envs, its dataset spec and its observation noise."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

from simdist.data.schema import DatasetSpec
from simdist.tasks import Task


class EnvFactory(Task):
    """A task that makes batched envs (:class:`simdist.envs.base.BatchedEnv`) on its reality profile or on the
    training simulator, and says what its datasets hold.

    ``obs_noise``: Gaussian training-input noise per observation group (raw units), which a recipe names by task
    (``obs_noise: <task>``); ``env_memory``: bytes one env holds, the estimate ``--envs`` and ``--trials`` are
    checked against before any work (:func:`simdist.resources.check_memory`).
    """

    obs_noise: ClassVar[dict[str, list[float]] | None] = None
    env_memory: ClassVar[int] = 1 << 20

    @abc.abstractmethod
    def make_env(self, num_envs: int, seed: int, real: bool = True) -> Any:
        """A batched env: the proxy-real one on ``profile`` when ``real``, else the training simulator."""

    @abc.abstractmethod
    def dataset_spec(self) -> DatasetSpec:
        """The trajectory schema of this task's datasets (pretraining and logged real episodes)."""

    def gym_env(self, profile: Any = "default", *, seed: int | None = None, real: bool = True,
                flatten: bool = False, render_mode: str | None = None) -> Any:
        """This task as a single :class:`gymnasium.Env` (one env of :meth:`make_env`), for standard RL libraries:
        observations a ``Dict`` of this task's groups (``flatten``: one ``Box``), actions a ``Box``, rewards as the
        task's env gives them, ``terminated`` and ``truncated`` as it sets them; ``reset(seed=...)`` seeds it.
        ``profile``: a reality profile for the env (default: this task's), None for the training simulator."""
        from simdist.gym_adapter import TaskGymEnv

        task = self if isinstance(profile, str) and profile == "default" else type(self)(profile=profile)  # type: ignore[call-arg]
        return TaskGymEnv(task, seed=seed, real=real, flatten=flatten, render_mode=render_mode)
