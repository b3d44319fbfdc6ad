"""Task plug-ins: what simdist needs to know about a robot task, in one registered class.

A task (registered as kind ``task``) is a :class:`Task`, which says who it is (name, reality profile, control
period), how its reality profiles are checked (:meth:`Task.profile_schema`, :mod:`simdist.profiles`), its
world-model and planner defaults and its own command-line options (:meth:`Task.add_arguments`), plus the
capabilities it has (:mod:`simdist.capabilities`), each optional: making envs (``EnvFactory``), an evaluation
protocol (``EvaluationProtocol``), cloning simulation states for the diagnostics (``StateCloning``), a data
generator with its defaults (``DataGeneration``) and an expert trainer (``ExpertTrainer``). Commands take
``--task NAME``. Built-in tasks live each in one folder under ``simdist.components.tasks``; a separate package
registers more through the entry-point group ``simdist.components``::

    @register("task", "my-task")
    class MyTask(EvaluationProtocol):
        metric, dt = "success", 0.1
        def make_env(self, num_envs, seed, real=True): ...
        def dataset_spec(self): ...
        def evaluate(self, agent, trials, seed, num_envs=8, log=None): ...
        def success(self, result): ...
"""

from __future__ import annotations

import abc
import argparse
import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, overload

from simdist.errors import InputError
from simdist.profiles import ProfileSchema, builtin_names, load_profile_data
from simdist.registry import create, get, list_components, list_families, registered_name

#: the commands that let a task add options (:meth:`Task.add_arguments`)
COMMANDS = ("evaluate", "adapt", "generate", "demo")


class TaskError(InputError):
    """A task name, profile or option is not valid; the message names it and what is accepted."""


class Task(abc.ABC):  # noqa: B024 - the capabilities (simdist.capabilities) declare the abstract methods
    """A robot task on one reality profile (``profile``: None means the training simulator itself).

    A task parses the profile it is given (a built-in name, a YAML path or a mapping) once, when it is built, and
    keeps the parsed object in ``profile``: that object travels to its envs, courses and protocol, not the name.

    Subclasses set ``dt`` (control period, s), ``planner_preset`` (the planner preset of the paper's setting for
    this task, which the tools scale) and ``planner_defaults`` (planner keyword overrides), and derive from the
    capabilities they have (:mod:`simdist.capabilities`, each a ``Task`` itself): this class alone makes no envs.
    """

    dt: ClassVar[float] = 0.02
    planner_preset: ClassVar[str] = "paper"
    planner_defaults: ClassVar[dict[str, Any]] = {}
    #: the task ``simdist bench``, ``simdist train-expert`` and the task commands use when ``--task`` is not given
    #: (one task sets it)
    default: ClassVar[bool] = False
    #: the task ``simdist demo`` runs when ``--task`` is not given (one task sets it): where the demo shows
    #: adaptation's effect
    default_demo: ClassVar[bool] = False
    #: ``"module:Class"`` of this task's :class:`~simdist.workflows.demo_pipeline.DemoHook` (what its demo does its
    #: own way: defaults, pretraining, loop, results, videos); None: the generic hook
    demo_hook: ClassVar[str | None] = None
    #: the world-model preset (``WorldModel.from_preset``) of this task's official architecture
    preset: ClassVar[str | None] = None
    #: the pretraining batch size of this task's recipes (``simdist bench --sections train`` times it)
    pretrain_batch: ClassVar[int | None] = None

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
        """The task as a JSON-ready dict: name, task family, profile and control period ``dt`` (an evaluation
        protocol adds its ``metric``)."""
        return {"name": self.name, "task": self.task_name, "profile": self.profile_name, "dt": self.dt}

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

    # -- agents --------------------------------------------------------------------------------
    def builtin_agent(self, spec: str) -> Any | None:
        """A controller this task provides itself for ``--agent SPEC`` (e.g. a scripted expert), or None when
        ``SPEC`` names an agent to load."""
        return None

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
