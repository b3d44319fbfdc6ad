"""The adaptation loop driving a model-free baseline: updates after every real episode, prior data, exploring
collection, exact resume from the last per-episode update."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from simdist.agents import load_agent
from simdist.components.agents.bc import BCPolicy
from simdist.components.agents.iql import IQLAgent
from simdist.components.agents.latent import encode_transitions
from simdist.components.tasks.toy_reach import ToyReachTask
from simdist.workflows.adaptation import AdaptationLoop, AdaptConfig, default_parts
from simdist.workflows.loop_parts import EvaluationConfig, ScheduleCollector
from tests.helpers import episodes_of, toy_world_model

pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A tiny IQL agent on a toy world model's encoder (saved) and the toy simulation data (its prior)."""
    from simdist.components.tasks.toy_reach import generate_toy_dataset

    root = tmp_path_factory.mktemp("online")
    generate_toy_dataset(str(root / "sim"), transitions=400, num_envs=2, seed=0, values="mc")
    policy = BCPolicy.from_world_model(toy_world_model(root / "sim"), hidden=[16])
    agent = IQLAgent.from_bc(policy, batch_size=16, hidden=[16], utd=1)
    return str(agent.save_pretrained(root / "iql")), str(root / "sim")


def config(prior: str, **changes) -> AdaptConfig:
    base = dict(schedule=[0, 2, 3], schedule_unit="episodes", update_every=1, freeze="heads_only", prior=[prior],
                evaluation=EvaluationConfig(trials=2), num_envs=2, heldout_episodes=1, seed=0)
    return AdaptConfig(**{**base, **changes})


def test_updates_after_every_episode(setup: tuple[str, str], tmp_path: Path) -> None:
    model, prior = setup
    out = tmp_path / "run"
    curve = AdaptationLoop(model, ToyReachTask(), out, config(prior), log=lambda m: None).run()
    assert curve["episodes"] == [0, 2, 3]
    final = load_agent(out / "stages" / "stage-2")
    real = encode_transitions(final.policy, episodes_of(out / "real-data"), rewards="sparse")
    # one update per real transition (utd 1), done episode by episode: every transition seen once
    assert final.counters["online_seen"] == len(real) and final.counters["updates"] == len(real)
    assert json.loads((out / "state.json").read_text())["live"] == {"stage": 2, "episodes": 3}
    labels = [ep.meta["success"] for ep in episodes_of(out / "real-data")]
    assert len(labels) == 3


def test_killed_run_resumes_exactly(setup: tuple[str, str], tmp_path: Path) -> None:
    model, prior = setup
    whole = tmp_path / "whole"
    AdaptationLoop(model, ToyReachTask(), whole, config(prior), log=lambda m: None).run()
    killed = tmp_path / "killed"
    parts = default_parts(config(prior))
    finetuner, calls = parts.finetuner, {"n": 0}

    class DiesOnTheSecondUpdate:  # the loop killed as its second per-episode update starts
        def finetune(self, run: Any, start: Any, stage: int) -> Any:
            calls["n"] += 1
            if calls["n"] == 2:
                raise KeyboardInterrupt
            return finetuner.finetune(run, start, stage)

    parts.finetuner = DiesOnTheSecondUpdate()
    with pytest.raises(KeyboardInterrupt):
        AdaptationLoop(model, ToyReachTask(), killed, config(prior), log=lambda m: None, parts=parts).run()
    AdaptationLoop(model, ToyReachTask(), killed, config(prior), log=lambda m: None).run()
    a, b = load_agent(whole / "stages" / "stage-2"), load_agent(killed / "stages" / "stage-2")
    sa, sb = a.model.state_dict(), b.model.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    ca, cb = (json.loads((d / "curve.json").read_text()) for d in (whole, killed))
    assert ca["value"] == cb["value"]


def test_collection_explores_and_evaluation_does_not(setup: tuple[str, str], tmp_path: Path) -> None:
    model, prior = setup
    loop = AdaptationLoop(model, ToyReachTask(), tmp_path / "x", config(prior), log=lambda m: None)
    agent = loop.base
    collector = loop.parts.collector
    assert isinstance(collector, ScheduleCollector)
    assert collector.actor(loop, agent, 0).explore and not loop.planner(agent, 0).explore and not agent.explore


def test_bad_protocol_options() -> None:
    with pytest.raises(ValueError, match="update_every must be"):
        AdaptConfig(schedule=[0, 1], schedule_unit="episodes", update_every=0)
    with pytest.raises(ValueError, match="prior: .*not dataset folders"):
        AdaptConfig(schedule=[0, 1], prior=["/nonexistent"])

