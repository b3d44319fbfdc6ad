"""An evaluation's passes over worker processes (``simdist evaluate --workers N``, ``AdaptConfig.evaluation.workers``):
the merged result equals the one-process evaluation, trial for trial; a task that cannot split is refused first."""

from __future__ import annotations

import functools
import json
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from simdist.components.tasks.toy_reach import ToyReachTask
from simdist.evaluation import DIFFERS_BY_PASS, EvaluationResult
from simdist.model.freeze import FinetuneConfig
from simdist.tasks import make_task
from simdist.tools import evaluate as evaluate_tool
from simdist.workflows.adaptation import AdaptationLoop, AdaptConfig
from simdist.workflows.loop_parts import EvaluationConfig
from simdist.workflows.parallel import evaluate_in_workers


@dataclass
class PassesToyTask(ToyReachTask):
    """toy-reach evaluated in passes: pass r rolls ``num_envs`` episodes on its own env, seeded ``seed + r``
    (a module-level class, so spawned workers unpickle it)."""

    def evaluate(self, agent: Any, trials: int, seed: int, num_envs: int = 8, log: Any = None) -> EvaluationResult:
        values, success, distances = [], [], []
        for rep in range(trials):
            one = super().evaluate(agent, num_envs, seed + rep, num_envs=num_envs)
            values += one.values
            success += one.success
            distances += one.details["final_distance"]
        return EvaluationResult(task=self.task_name, metric=self.metric, profile=self.profile_name, values=values,
                                success=success, details={"final_distance": distances, "envs": num_envs})

    def evaluation_passes(self, trials: int, seed: int) -> list[tuple[int, int]] | None:
        return [(1, seed + rep) for rep in range(trials)]


def _planner_build(**overrides: Any) -> functools.partial:
    settings = dict(planner="mppi", num_samples=16, iterations=1, device="cpu", seed=0, init_std=None,
                    warm_start=None, temporal_ensemble=None)
    return functools.partial(evaluate_tool.controller_for, **{**settings, **overrides})


def _never_build(task: Any, spec: str) -> Any:
    raise AssertionError("built an agent although the evaluation was refused")


def test_concat_joins_passes_in_order_and_records_details_that_differ() -> None:
    a = EvaluationResult("t", "m", [1.0, 0.0], [True, False], diverged=[False, True], profile="p",
                         details={"per": [1, 2], "same": {"x": 1}, "other": 1})
    b = EvaluationResult("t", "m", [0.5], [True], profile="p", details={"per": [3], "same": {"x": 1}, "other": 2})
    merged = EvaluationResult.concat([a, b])
    assert merged.values == [1.0, 0.0, 0.5] and merged.success == [True, False, True]
    assert merged.diverged == [False, True, False] and merged.profile == "p"
    assert merged.details["per"] == [1, 2, 3] and merged.details["same"] == {"x": 1}
    assert merged.details["other"] == 1 and merged.details[DIFFERS_BY_PASS] == {"other": [1, 2]}
    assert EvaluationResult.concat([a]).to_dict() == a.to_dict()
    with pytest.raises(ValueError, match="disagree on metric"):
        EvaluationResult.concat([a, EvaluationResult("t", "other", [1.0], [True], profile="p")])


def test_two_workers_give_the_one_process_result_for_a_planner_from_a_folder(
        tiny_world_model: Any, tmp_path: Path, single_thread: None) -> None:
    """Each worker loads the agent from its folder and plans with the CLI's settings (MPPI, seeded)."""
    folder = str(tiny_world_model.save_pretrained(tmp_path / "tiny"))
    task, build = PassesToyTask(), _planner_build()
    one = task.evaluate(build(task, folder), 3, 5, num_envs=2)
    spread = evaluate_in_workers(task, folder, 3, 5, workers=2, num_envs=2, build=build)
    assert spread.trials == 6 and spread.to_dict() == one.to_dict()
    assert DIFFERS_BY_PASS not in spread.details
    direct = evaluate_in_workers(task, folder, 3, 5, workers=1, num_envs=2, build=build)  # one call, here
    assert direct.to_dict() == one.to_dict()


def test_ur5e_scripted_expert_over_two_workers_equals_one_process(capsys: pytest.CaptureFixture[str],
                                                                  single_thread: None) -> None:
    """Two lattice passes on the training simulator: ``simdist evaluate --workers 2`` against one process."""
    task = make_task("ur5e-peg", profile=None)
    started = time.perf_counter()
    one = task.evaluate(task.builtin_agent("expert"), 2, 3, num_envs=20)
    one_s = time.perf_counter() - started
    started = time.perf_counter()
    assert evaluate_tool.main(["--task", "ur5e-peg", "--agent", "expert", "--trials", "2", "--seed", "3",
                               "--envs", "20", "--workers", "2", "--json"]) == 0
    two_s = time.perf_counter() - started
    out = json.loads(capsys.readouterr().out)
    settings = out["details"].pop("settings")
    assert settings["workers"] == 2 and settings["worker_torch_threads"] == 1
    expected = one.to_dict()
    assert out == expected and len(out["values"]) == 40 and len(out["details"]["cell"]) == 40
    print(f"ur5e-peg expert, 2 passes: one process {one_s:.1f} s, 2 workers {two_s:.1f} s")


def test_workers_on_a_task_that_cannot_split_fail_before_any_work(capsys: pytest.CaptureFixture[str]) -> None:
    task = make_task("toy-reach")
    assert task.evaluation_passes(4, 0) is None
    with pytest.raises(ValueError, match=r"--workers 2: task 'toy-reach:real' cannot split"):
        evaluate_in_workers(task, "anything", 4, 0, workers=2, num_envs=2, build=_never_build)
    with pytest.raises(ValueError, match="--workers must be a positive integer"):
        evaluate_in_workers(task, "anything", 4, 0, workers=0, num_envs=2, build=_never_build)
    with pytest.raises(SystemExit) as exit_info:  # checked before the agent is even looked up
        evaluate_tool.main(["--task", "toy-reach", "--agent", "no/such-agent", "--workers", "2"])
    assert exit_info.value.code == 2
    assert "--workers 2: task 'toy-reach' cannot split" in capsys.readouterr().err  # no --profile: the simulator
    with pytest.raises(ValueError, match=r"--evaluation.workers 2: task 'toy-reach:real' cannot split"):
        AdaptationLoop("no/such-agent", task, Path("unused"), AdaptConfig(evaluation=EvaluationConfig(workers=2)))


@pytest.mark.slow  # two adaptation runs with a finetuned stage, 4 worker pools: about 20 s
def test_adaptation_eval_workers_give_the_one_process_stages(tiny_world_model: Any, tmp_path: Path,
                                                             single_thread: None) -> None:
    """Stage 0 (the model id) and a finetuned stage (its saved folder) evaluated over 2 workers: the same
    numbers as in process; the worker count is not a setting, so the runs resume each other's stages."""
    warnings.filterwarnings("ignore", ".*(eval mode|does not have many workers|__len__).*")
    folder = str(tiny_world_model.save_pretrained(tmp_path / "tiny"))

    def config(workers: int) -> AdaptConfig:
        return AdaptConfig(schedule=[0.0, 0.15], evaluation=EvaluationConfig(trials=2, workers=workers), num_envs=2,
                           heldout_episodes=2, planner_overrides={"num_samples": 16, "iterations": 1},
                           finetune=FinetuneConfig(epochs=1, windows_per_epoch=64, batch_size=16, lr=1e-3,
                                                   warmup_steps=2))

    curves = [AdaptationLoop(folder, PassesToyTask(), tmp_path / f"run-{w}", config(w), log=lambda m: None).run()
              for w in (1, 2)]
    stages = [json.loads((tmp_path / f"run-{w}" / "state.json").read_text())["stages"] for w in (1, 2)]
    for k in range(2):
        assert stages[0][k]["eval"] == stages[1][k]["eval"], k
        assert stages[0][k]["settings"] == stages[1][k]["settings"], k
    assert curves[0]["value"] == curves[1]["value"] and len(stages[1][1]["eval"]["values"]) == 4
    resumed = AdaptationLoop(folder, PassesToyTask(), tmp_path / "run-1", config(2), log=lambda m: None)
    assert resumed.stages_done() == 2
