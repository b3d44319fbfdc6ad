"""A task is a ``Task`` plus the capabilities it lists (``simdist.capabilities``), each optional: the task modules of
the core import no workflow, every built-in task declares what it can do, and a command that needs a capability the
task lacks says so in one line naming both."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from simdist import registry
from simdist.capabilities import (
    CAPABILITIES,
    DataGeneration,
    EnvFactory,
    EvaluationProtocol,
    ExpertTrainer,
    StateCloning,
    capabilities_of,
    require,
)
from simdist.components.tasks.toy_reach import ToyReachTask
from simdist.tasks import Task, TaskError, make_task, task_class
from tests.test_import_graph import build_graph, discover

#: what each built-in task can do (a new task, or a capability added to one, is declared here)
BUILTIN = {
    "toy-reach": {EnvFactory, EvaluationProtocol, StateCloning, DataGeneration},
    "go2": {EnvFactory, EvaluationProtocol, StateCloning, DataGeneration, ExpertTrainer},
    "ur5e-peg": {EnvFactory, EvaluationProtocol, StateCloning, DataGeneration},
    "ur5e-table-leg": {EnvFactory, EvaluationProtocol, StateCloning, DataGeneration},
    "gym:Pendulum-v1": {EnvFactory, EvaluationProtocol, StateCloning, DataGeneration, ExpertTrainer},
}


def test_the_task_modules_import_no_workflow() -> None:
    """``simdist.tasks`` and the capabilities reach no workflow, command line or plug-in, even through other
    modules, inside functions or under ``TYPE_CHECKING``: workflows take a task, never the other way round."""
    graph = build_graph(discover())
    todo = ["simdist.tasks", *[m for m in graph if m.startswith("simdist.capabilities")]]
    reached: set[str] = set()
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo.extend(graph[module])
    assert {"simdist.tasks", "simdist.capabilities.cloning", "simdist.evaluation"} <= reached
    above = [m for m in reached if m.startswith(("simdist.workflows", "simdist.tools", "simdist.cli",
                                                  "simdist.components", "simdist.diagnostics"))]
    assert not above, f"the task modules import {sorted(above)}"


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_every_builtin_task_declares_its_capabilities(name: str) -> None:
    cls = task_class(name)
    assert {cap for cap in CAPABILITIES if issubclass(cls, cap)} == BUILTIN[name]
    assert capabilities_of(cls) == [cap.__name__ for cap in CAPABILITIES if cap in BUILTIN[name]]
    assert issubclass(cls, Task)


def test_the_table_holds_every_builtin_task() -> None:
    builtin = {n for n in registry.list_components("task")
               if registry.get("task", n).__module__.startswith("simdist.components.tasks.")}
    assert builtin == {n for n in BUILTIN if ":" not in n}


@dataclasses.dataclass
class BareReach(EnvFactory):
    """toy-reach's envs and nothing more: no protocol, no clones, no data generator, no expert trainer."""

    profile: Any = None
    dt = 0.1

    def make_env(self, num_envs: int, seed: int, real: bool = True) -> Any:
        return ToyReachTask(profile=None).make_env(num_envs, seed, real=real)

    def dataset_spec(self) -> Any:
        return ToyReachTask(profile=None).dataset_spec()


@pytest.fixture
def bare() -> Iterator[str]:
    """``bare-reach`` registered for one test."""
    registry.load_builtins()
    registry.register("task", "bare-reach")(BareReach)
    yield "bare-reach"
    registry._REGISTRY["task"].pop("bare-reach", None)


def test_what_a_task_has_works_and_what_it_lacks_is_one_line(bare: str) -> None:
    task = make_task(bare)
    assert capabilities_of(task) == ["EnvFactory"] and require(task, EnvFactory) is task
    env = task.make_env(2, 0, real=False)
    try:
        assert env.num_envs == 2 and set(task.dataset_spec().obs) <= set(env.reset(seed=0))
    finally:
        env.close()
    with pytest.raises(TaskError) as err:
        require(task, StateCloning, "the plan-ranking analysis")
    assert str(err.value) == ("task 'bare-reach' cannot clone its simulation states (the plan-ranking analysis needs "
                              "StateCloning)")
    assert task.describe() == {"name": "bare-reach", "task": "bare-reach", "profile": None, "dt": 0.1}


@pytest.mark.parametrize(("command", "words"), [
    ("evaluate", "has no evaluation protocol (simdist evaluate needs EvaluationProtocol)"),
    ("adapt", "has no evaluation protocol (simdist adapt needs EvaluationProtocol)"),
    ("generate", "has no data generator (simdist generate needs DataGeneration)"),
    ("mechanism", "cannot clone its simulation states (simdist mechanism needs StateCloning)"),
])
def test_a_command_names_the_missing_capability(bare: str, command: str, words: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from simdist.cli import TOOLS

    module, function, _ = TOOLS[command]
    main = getattr(__import__(module, fromlist=[function]), function)
    assert main(["--task", bare, "--out", "never-written"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"simdist {command}: error: task 'bare-reach' {words}" and "\n" not in err


def test_train_expert_and_demo_name_the_missing_capability(bare: str) -> None:
    from simdist.tools.demo import main, train_expert_main

    with pytest.raises(TaskError, match="^task 'toy-reach' has no expert trainer "
                                        r"\(simdist train-expert needs ExpertTrainer\)$"):
        train_expert_main(["--task", "toy-reach", "--log-dir", "never-written"])
    with pytest.raises(TaskError, match=r"^task 'bare-reach' has no evaluation protocol \(simdist demo needs"):
        main(["--task", bare])


def test_the_tasks_listing_shows_the_capabilities(bare: str, capsys: pytest.CaptureFixture[str]) -> None:
    from simdist.tools.components import tasks_main

    assert tasks_main([]) == 0
    lines = {line.split(":")[0].split(" ")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["bare-reach"].endswith("capabilities: EnvFactory") and "no evaluation protocol" in lines["bare-reach"]
    assert lines["go2"].endswith("capabilities: EnvFactory, EvaluationProtocol, StateCloning, DataGeneration, "
                                 "ExpertTrainer")
