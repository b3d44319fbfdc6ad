"""Checking a task for a capability: one clear line naming the task and what it lacks."""

from __future__ import annotations

from typing import Any, TypeVar

from simdist.capabilities.cloning import StateCloning
from simdist.capabilities.data import DataGeneration
from simdist.capabilities.envs import EnvFactory
from simdist.capabilities.evaluation import EvaluationProtocol
from simdist.capabilities.experts import ExpertTrainer
from simdist.tasks import Task, TaskError, get_task_name

#: every capability, with what a task that has it provides (the words of :func:`require`'s error)
CAPABILITIES: dict[type[Task], str] = {
    EnvFactory: "makes no envs",
    EvaluationProtocol: "has no evaluation protocol",
    StateCloning: "cannot clone its simulation states",
    DataGeneration: "has no data generator",
    ExpertTrainer: "has no expert trainer",
}

C = TypeVar("C", bound=Task)


def capabilities_of(task: Task | type[Task]) -> list[str]:
    """The names of the capabilities ``task`` (an instance or a class) has, in :data:`CAPABILITIES` order."""
    cls = task if isinstance(task, type) else type(task)
    return [cap.__name__ for cap in CAPABILITIES if issubclass(cls, cap)]


def require(task: Any, capability: type[C], why: str = "") -> C:
    """``task`` (an instance), typed as having ``capability``; a :class:`~simdist.tasks.TaskError` naming the task
    and the missing capability when it does not (``why``: what needed it, e.g. ``"simdist mechanism"``)."""
    if isinstance(task, capability):
        return task
    need = f" ({why} needs {capability.__name__})" if why else f" (no {capability.__name__})"
    raise TaskError(f"task {get_task_name(type(task))!r} {CAPABILITIES[capability]}{need}")


def require_class(cls: type[Task], capability: type[C], why: str = "") -> type[C]:
    """:func:`require` for a task class (before the task is built, e.g. to read its command-line defaults)."""
    if issubclass(cls, capability):
        return cls
    need = f" ({why} needs {capability.__name__})" if why else f" (no {capability.__name__})"
    raise TaskError(f"task {get_task_name(cls)!r} {CAPABILITIES[capability]}{need}")
