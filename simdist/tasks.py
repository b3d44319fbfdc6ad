"""Task plug-ins: what simdist needs to know about a robot task, in one registered class.

A task (registered as kind ``task``) says how to build its simulated and proxy-real environments, its
dataset spec, its training-time observation noise, its evaluation protocol (trials, metric, success),
its reality profiles (their keys, :meth:`Task.profile_schema`, checked by :mod:`simdist.profiles`), and its
data-engine and planner defaults. Commands take ``--task NAME``; a task may
add its own command-line options (:meth:`Task.add_arguments`) and, optionally, a data generator, an expert
trainer and a demo. Built-in tasks live each in one folder under ``simdist.components.tasks``; a separate
package registers more through the entry-point group ``simdist.components``::

    @register("task", "my-task")
    class MyTask(Task):
        metric, dt = "success", 0.1
        def make_env(self, num_envs, seed, real=True): ...
        def dataset_spec(self): ...
        def evaluate(self, agent, trials, seed, num_envs=8): ...
        def success(self, result): ...
"""

from __future__ import annotations

import abc
import argparse
import importlib
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, overload

import numpy as np

from simdist.data.schema import DatasetSpec, Episode
from simdist.errors import InputError
from simdist.profiles import ProfileSchema, builtin_names, load_profile_data
from simdist.registry import create, get, list_components, list_families, registered_name
from simdist.workflows.evaluation import EvaluationResult

if TYPE_CHECKING:
    from simdist.data.engine import PerturbationConfig

logger = logging.getLogger(__name__)

#: the commands that let a task add options (:meth:`Task.add_arguments`)
COMMANDS = ("evaluate", "adapt", "generate", "demo", "train-expert")


class TaskError(InputError):
    """A task name, profile or option is not valid; the message names it and what is accepted."""


class Task(abc.ABC):
    """A robot task on one reality profile (``profile``: None means the training simulator itself).

    A task parses the profile it is given (a built-in name, a YAML path or a mapping) once, when it is built, and
    keeps the parsed object in ``profile``: that object travels to its envs, courses and protocol, not the name.

    Subclasses set ``metric`` (the evaluation's per-trial value, higher is better), ``dt`` (control
    period, s), ``obs_noise`` (Gaussian training-input noise per observation group, raw units),
    ``planner_preset`` (the planner preset of the paper's setting for this task, which the tools scale),
    ``planner_defaults`` (planner keyword overrides) and ``data_defaults`` (data-engine settings).
    """

    metric: ClassVar[str] = "return"
    dt: ClassVar[float] = 0.02
    obs_noise: ClassVar[dict[str, list[float]] | None] = None
    planner_preset: ClassVar[str] = "paper"
    planner_defaults: ClassVar[dict[str, Any]] = {}
    data_defaults: ClassVar[dict[str, Any]] = {}
    #: most cloned states restored into one env at a time (:meth:`open_loop_observations`)
    clone_batch: ClassVar[int] = 256
    #: the task ``simdist bench``, ``simdist train-expert`` and the task commands use when ``--task`` is not given
    #: (one task sets it)
    default: ClassVar[bool] = False
    #: the task ``simdist demo`` runs when ``--task`` is not given (one task sets it): where the demo shows
    #: adaptation's effect
    default_demo: ClassVar[bool] = False
    #: the world-model preset (``WorldModel.from_preset``) of this task's official architecture
    preset: ClassVar[str | None] = None
    #: the pretraining batch size of this task's recipes (``simdist bench --sections train`` times it)
    pretrain_batch: ClassVar[int | None] = None
    #: the data generator's experts are scripted: ``simdist generate --experts`` does not apply
    scripted_experts: ClassVar[bool] = False
    #: bytes one simulated env of this task holds: the estimate ``--envs`` and ``--trials`` are checked against
    #: before any work (:func:`simdist.resources.check_memory`)
    env_memory: ClassVar[int] = 1 << 20

    profile: Any = None

    # -- identity ------------------------------------------------------------------------------
    @property
    def task_name(self) -> str:
        """The registered name (as in ``@register("task", NAME)``)."""
        key = registered_name(self)
        return key[1] if key else type(self).__name__

    @property
    def name(self) -> str:
        """Task and profile, ``NAME:PROFILE`` (adaptation runs check it on resume)."""
        return f"{self.task_name}:{self.profile_name}" if self.profile is not None else self.task_name

    @property
    def profile_name(self) -> str | None:
        """The reality profile's name, or None on the training simulator."""
        p = self.profile
        return None if p is None else str(getattr(p, "name", p))

    def describe(self) -> dict[str, Any]:
        """The task as a JSON-ready dict: name, task family, profile, metric and control period ``dt``."""
        return {"name": self.name, "task": self.task_name, "profile": self.profile_name, "metric": self.metric,
                "dt": self.dt}

    # -- environments and data -----------------------------------------------------------------
    @abc.abstractmethod
    def make_env(self, num_envs: int, seed: int, real: bool = True) -> Any:
        """A batched env (:class:`simdist.envs.base.BatchedEnv`): the proxy-real one on ``profile`` when
        ``real``, else the training simulator."""

    @abc.abstractmethod
    def dataset_spec(self) -> DatasetSpec:
        """The trajectory schema of this task's datasets (pretraining and logged real episodes)."""

    # -- reality profiles ----------------------------------------------------------------------
    @classmethod
    def profile_schema(cls) -> ProfileSchema | None:
        """The keys a reality profile of this task may set (type, accepted range, the simulator's default):
        ``PROFILE_SCHEMA`` of :attr:`profile_module`; None: the task takes no profile files."""
        return getattr(cls._profiles(), "PROFILE_SCHEMA", None)

    @classmethod
    def profile_dir(cls) -> Path | None:
        """The folder of the built-in profiles (``NAME.yaml``): ``PROFILE_DIR`` of :attr:`profile_module`."""
        return getattr(cls._profiles(), "PROFILE_DIR", None)

    #: the module holding the task's ``PROFILE_SCHEMA`` and ``PROFILE_DIR`` (imported on first use)
    profile_module: ClassVar[str | None] = None

    @classmethod
    def _profiles(cls) -> Any:
        return importlib.import_module(cls.profile_module) if cls.profile_module else None

    @classmethod
    def profiles(cls) -> list[str]:
        """Names of the built-in reality profiles."""
        return builtin_names(cls.profile_dir())

    @classmethod
    def load_profile(cls, source: str | Path | Mapping[str, Any]) -> Any:
        """A profile from a built-in name, a YAML path or a mapping, checked against :meth:`profile_schema`
        (:class:`simdist.profiles.ProfileError` names the file, key, value and accepted range) and built by
        the schema's factory."""
        schema = cls.profile_schema()
        if schema is None:
            raise TaskError(f"task {get_task_name(cls)!r} declares no reality-profile keys")
        if isinstance(schema.factory, type) and isinstance(source, schema.factory):
            return source
        return schema.build(load_profile_data(source, schema, cls.profile_dir()))

    # -- evaluation and adaptation -------------------------------------------------------------
    @abc.abstractmethod
    def evaluate(self, agent: Any, trials: int, seed: int, num_envs: int = 8, log: Any = None) -> EvaluationResult:
        """Run the task's protocol with ``agent`` (``trials``: the protocol's trial count per condition; ``log``:
        a print-like callable for progress lines, or None)."""

    def evaluation_batch(self, trials: int, num_envs: int) -> int:
        """The most envs ``evaluate(agent, trials, seed, num_envs)`` runs at once (the memory check's count)."""
        return min(trials, num_envs)

    def evaluation_passes(self, trials: int, seed: int) -> list[tuple[int, int]] | None:
        """The protocol ``evaluate(agent, trials, seed)`` as independent passes, or None (the default) when it
        cannot be split (e.g. all trials run in one batch).

        A task returns ``(trials, seed)`` pairs such that the results of ``evaluate(agent, t, s)`` for each pair,
        concatenated in order (:meth:`EvaluationResult.concat`), equal ``evaluate(agent, trials, seed)`` for the
        same ``num_envs``: each pass builds its own env and reseeds the agent, so it depends on its own
        arguments only. :func:`simdist.workflows.parallel.evaluate_in_workers` (``simdist evaluate --workers N``) runs
        the passes in worker processes."""
        return None

    @abc.abstractmethod
    def success(self, result: Any) -> np.ndarray:
        """Per finished episode of a :class:`~simdist.workflows.rollout.RolloutResult`: did it succeed?"""

    def collect(self, agent: Any, episodes: int, num_envs: int, seed: int, first_episode_id: int = 0,
                perturbation: PerturbationConfig | None = None, on_episode: Callable[[int, int], None] | None = None,
                ) -> tuple[list[Episode], np.ndarray]:
        """Roll ``agent`` on the real env for ``episodes`` logged episodes; returns them and success flags.
        ``perturbation`` (a :class:`~simdist.data.engine.PerturbationConfig`) adds its noise windows to the
        actions (the recorded action is the applied one); ``on_episode(done, total)`` is called as episodes
        finish (progress)."""
        from simdist.workflows.rollout import rollout

        env = self.make_env(num_envs, seed, real=True)
        try:
            result = rollout(env, agent, episodes=episodes, seed=seed, record_spec=self.dataset_spec(),
                             first_episode_id=first_episode_id, meta={"source": "real", "task": self.name},
                             perturbation=perturbation, on_episode=on_episode)
        finally:
            env.close()
        n = len(result.episodes)
        ok, sound = self.success(result)[:n], ~result.diverged[:n]
        if not sound.all():  # diverged physics is no data: never logged, never trained on
            logger.warning("%s: dropped %d of %d logged episodes whose simulation diverged", self.name,
                           int((~sound).sum()), n)
        return [ep for ep, keep in zip(result.episodes, sound) if keep], ok[sound]

    # -- the other way: this task as a Gymnasium environment ----------------------------------------------
    def gym_env(self, profile: Any = "default", *, seed: int | None = None, real: bool = True,
                flatten: bool = False, render_mode: str | None = None) -> Any:
        """This task as a single :class:`gymnasium.Env` (one env of :meth:`make_env`), for standard RL libraries:
        observations a ``Dict`` of this task's groups (``flatten``: one ``Box``), actions a ``Box``, rewards as the
        task's env gives them, ``terminated`` and ``truncated`` as it sets them; ``reset(seed=...)`` seeds it.
        ``profile``: a reality profile for the env (default: this task's), None for the training simulator."""
        from simdist.gym_adapter import TaskGymEnv

        task = self if isinstance(profile, str) and profile == "default" else type(self)(profile=profile)  # type: ignore[call-arg]
        return TaskGymEnv(task, seed=seed, real=real, flatten=flatten, render_mode=render_mode)

    # -- cloned states (the planner-ranking analysis, :mod:`simdist.diagnostics.mechanism`) ---------------------------
    def snapshot_states(self, env: Any, rows: np.ndarray) -> Any:
        """Copies of the full simulation state of ``env``'s rows, for :meth:`true_returns` (tasks whose envs
        can be cloned implement it)."""
        raise TaskError(f"task {self.task_name!r} cannot clone its simulation states")

    def merge_states(self, snapshots: Sequence[Any]) -> Any:
        """One set of states from several :meth:`snapshot_states` results, rows in order (default: snapshots
        that are row-first trees of arrays, :func:`simdist.rows.concat_rows`)."""
        from simdist.rows import concat_rows

        return concat_rows(list(snapshots))

    def true_returns(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                     progress: bool = False) -> np.ndarray:
        """The return, on this task's env (its profile), of executing ``actions[i]`` (N, T, A) open loop from
        state ``rows[i]`` of ``states`` and then following the task's expert: Σ_{k<T} γ^k r_k + γ^T V^e(s_T),
        the quantity a world model's planner predicts for the same sequence."""
        raise TaskError(f"task {self.task_name!r} cannot clone its simulation states")

    def true_return_parts(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                          progress: bool = False) -> dict[str, np.ndarray]:
        """:meth:`true_returns` split into its parts, each (N,): ``total`` (the return), ``horizon``
        (Σ_{k<T} γ^k r_k, the candidate's own steps), ``tail`` (γ^T V^e(s_T), the continuation after it;
        ``horizon + tail == total``), ``fell`` (1.0 where the candidate ended the episode within its T steps),
        and optionally ``reward/NAME`` per reward term. Tasks that can split their returns implement it."""
        raise TaskError(f"task {self.task_name!r} cannot split its true returns into their parts")

    def critic_return_parts(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                            progress: bool = False) -> dict[str, np.ndarray]:
        """A cheap stand-in for :meth:`true_return_parts`: ``actions[i]`` open loop from state ``rows[i]``, then
        the task's fitted expert critic at the end state instead of the expert's rollout, Σ_{k<T} γ^k r_k +
        γ^T V̂^e(s_T); parts ``total``, ``horizon`` and ``tail``, each (N,). Tasks whose critic is valid on their
        profile implement it (``simdist value-rank collect --truth critic``)."""
        raise TaskError(f"task {self.task_name!r} has no fitted expert critic to end its candidates with "
                        "(use the expert's continuation, --truth expert)")

    def restore_states(self, env: Any, states: Any, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Write the cloned states ``states`` (from :meth:`snapshot_states`, one per entry of ``rows``) into rows
        ``rows`` of ``env``, an env of this task's profile, and return ``env``'s observations. Tasks that can clone
        their states implement it; :meth:`open_loop_observations` needs it."""
        raise TaskError(f"task {self.task_name!r} cannot run open-loop candidates from cloned states")

    def open_loop_observations(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, seed: int,
                               progress: bool = False) -> dict[str, np.ndarray]:
        """The observations, each (N, T, ...), after every step of ``actions[i]`` (N, T, A) executed open loop on
        this task's env (its profile) from state ``rows[i]`` of ``states`` (restored by :meth:`restore_states`,
        :attr:`clone_batch` at a time; an episode that ends early repeats its last observation): what a world
        model's dynamics predicts for the same sequence (:mod:`simdist.diagnostics.response`)."""
        from simdist.rows import take_rows
        from simdist.workflows.rollout import open_loop_from_clones

        rows = np.asarray(rows, np.int64)
        if len(actions) != len(rows):
            raise ValueError(f"actions must be (N={len(rows)}, T, A) open-loop sequences, got {np.shape(actions)}")
        def restore(env: Any, idx: np.ndarray, into: np.ndarray) -> dict[str, np.ndarray]:
            return self.restore_states(env, take_rows(states, rows[idx]), into)

        return open_loop_from_clones(lambda n, s: self.make_env(n, s, real=True), restore, actions, seed=seed,
                                     batch=self.clone_batch)

    def builtin_agent(self, spec: str) -> Any | None:
        """A controller this task provides itself for ``--agent SPEC`` (e.g. a scripted expert), or None when
        ``SPEC`` names an agent to load."""
        return None

    # -- optional tools ------------------------------------------------------------------------
    def generate(self, out: str, *, experts: str | None, num_envs: int, transitions: int, seed: int,
                 progress: bool = True, **options: Any) -> dict[str, Any]:
        """Generate (or resume) a pretraining dataset in ``out``; returns its summary.

        ``options`` may hold ``parts``, ``rank`` and ``world`` (``simdist generate --parts``): the run split into
        parts, of which this worker runs its share (:func:`simdist.data.parts.run_parts`)."""
        raise TaskError(f"task {self.task_name!r} has no data generator")

    #: modules whose ``main(argv)`` runs ``simdist demo --task NAME`` / ``simdist train-expert --task NAME`` (a
    #: demo module is a task's own demo; tasks without one run the demo pipeline,
    #: :mod:`simdist.workflows.demo_pipeline`)
    demo_module: ClassVar[str | None] = None
    #: ``"module:Class"`` of this task's :class:`~simdist.workflows.demo_pipeline.DemoHook` (what its demo does its
    #: own way:     #: defaults, pretraining, loop, results, videos); None: the generic hook
    demo_hook: ClassVar[str | None] = None
    train_expert_module: ClassVar[str | None] = None

    @classmethod
    def demo(cls, argv: Sequence[str]) -> int:
        """``simdist demo --task NAME ...`` of a task with its own ``demo_module`` (the others run the demo
        pipeline, :mod:`simdist.workflows.demo_pipeline`, with their :attr:`demo_hook`)."""
        return cls._tool(cls.demo_module, "demo", argv)

    @classmethod
    def train_expert(cls, argv: Sequence[str]) -> int:
        """``simdist train-expert --task NAME ...``: train this task's privileged expert."""
        return cls._tool(cls.train_expert_module, "expert trainer", argv)

    @classmethod
    def _tool(cls, module: str | None, what: str, argv: Sequence[str]) -> int:
        if module is None:
            raise TaskError(f"task {get_task_name(cls)!r} has no {what}")
        return int(importlib.import_module(module).main(list(argv)) or 0)

    # -- command line --------------------------------------------------------------------------
    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser, command: str) -> None:
        """Add this task's own options to ``simdist <command>`` (see :data:`COMMANDS`)."""
        return None

    @classmethod
    def from_args(cls, args: argparse.Namespace, command: str, profile: Any = None) -> Task:
        """Build the task from the parsed options of ``simdist <command>``."""
        return cls(profile=profile)  # type: ignore[call-arg]


def get_task_name(cls: type) -> str:
    key = registered_name(cls)
    return key[1] if key else cls.__name__


def task_names() -> list[str]:
    return list(list_components("task"))


def task_families() -> list[str]:
    """``PREFIX:ID`` patterns of the registered task families (tasks built on demand from an id)."""
    return [f"{p}:ID" for p in list_families("task")]


def pretrain_presets() -> list[tuple[str, int]]:
    """(world-model preset, recipe batch size) of every registered task that declares both, once per preset."""
    out: dict[str, int] = {}
    for name in task_names():
        cls = get("task", name)
        if cls.preset and cls.pretrain_batch:
            out.setdefault(cls.preset, int(cls.pretrain_batch))
    return list(out.items())


def task_class(name: str) -> type[Task]:
    """The registered task class ``name`` (error naming the known tasks)."""
    from simdist.registry import RegistryError

    try:
        return get("task", name)
    except RegistryError as err:
        known = ", ".join(task_names() + task_families())
        raise TaskError(f"--task {name!r}: unknown task; registered tasks: {known}") from err


def make_task(name: str, **kwargs: Any) -> Task:
    """Instantiate the registered task ``name`` (e.g. ``make_task(name, profile=...)``)."""
    task_class(name)
    return create("task", name, **kwargs)


def default_task(role: str = "default") -> str:
    """The registered task that declares itself the default: ``Task.default``, or with ``role="default_demo"``
    ``Task.default_demo``."""
    names = [n for n in task_names() if getattr(get("task", n), role, False)]
    if len(names) != 1:
        raise TaskError(f"pass --task (registered tasks: {', '.join(task_names())}; "
                        f"{len(names)} declare themselves the {role.replace('_', ' ')})")
    return names[0]


def add_task_argument(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    """``--task NAME`` listing the registered tasks in its help."""
    names = ", ".join(task_names() + task_families())
    parser.add_argument("--task", required=required, default=None,
                        help=f"registered task ({names}; `simdist tasks` describes them)")


@overload
def preparse_task(argv: Sequence[str], *, default: Literal[True] = True) -> str: ...
@overload
def preparse_task(argv: Sequence[str], *, default: bool) -> str | None: ...
def preparse_task(argv: Sequence[str], *, default: bool = True) -> str | None:
    """The ``--task`` value of ``argv`` (before the full parser exists: tasks add options to it)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--task", default=None)
    known, _ = pre.parse_known_args(list(argv))
    if known.task is not None:
        task_class(known.task)
        return known.task
    return default_task() if default else None
