"""SimDist+BC (``simdist_bc``): dynamics finetuning plus BC of the policy head on demos, acting, Hub I/O, adaptation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from simdist import WorldModel
from simdist.agents import load_agent, read_agent_type
from simdist.components.agents.simdist import SimDistAgent
from simdist.components.agents.simdist.bc import BC_CONFIG_NAME, SimDistBCAgent, SimDistBCConfig
from simdist.components.tasks.toy_reach import ToyReachTask
from simdist.hub.load import CheckpointError
from simdist.model.config import ConfigError
from simdist.model.freeze import FinetuneConfig
from simdist.workflows.adaptation import AdaptationLoop, AdaptConfig
from simdist.workflows.demos import record_demos
from simdist.workflows.loop_parts import EvaluationConfig
from tests.helpers import toy_world_model

pytestmark = [pytest.mark.usefixtures("single_thread"),
              pytest.mark.filterwarnings("ignore:.*(eval mode|does not have many workers|__len__|LeafSpec|is not a Hub "
                                         "repo id)")]

#: tiny finetuning budgets, as the adaptation loop passes them
TRAIN = {"epochs": 1, "windows_per_epoch": 64, "batch_size": 16, "lr": 1e-3, "warmup_steps": 2}
FROZEN = ("encoder", "reward", "value", "command_embedding", "normalizer")


def component(model: WorldModel, name: str) -> dict[str, torch.Tensor]:
    prefix = f"{name}."
    return {k: v for k, v in model.state_dict().items() if k.startswith(prefix)}


def same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three successful demos of the PD expert on the real profile (no step expert-flagged)."""
    task = ToyReachTask()
    out = tmp_path_factory.mktemp("sbc") / "demos"
    record_demos(task, task.builtin_agent("expert"), 3, out, seed=0, num_envs=2)
    return out


@pytest.fixture(scope="module")
def base(sim_data: Path) -> SimDistAgent:
    """The toy world model, untrained, with the simulation data's normaliser statistics."""
    torch.manual_seed(0)
    return SimDistAgent(toy_world_model(sim_data).eval(), source="toy-base")


@pytest.fixture(scope="module")
def simdist_tuned(base: SimDistAgent, sim_data: Path, tmp_path_factory: pytest.TempPathFactory) -> SimDistAgent:
    return base.finetune(sim_data, out=tmp_path_factory.mktemp("sd"), seed=3, **TRAIN)


@pytest.fixture(scope="module")
def bc_tuned(base: SimDistAgent, sim_data: Path, demos: Path,
             tmp_path_factory: pytest.TempPathFactory) -> SimDistBCAgent:
    agent = SimDistBCAgent.from_simdist(base, demos=demos)
    return agent.finetune(sim_data, out=tmp_path_factory.mktemp("sbc-run"), seed=3, **TRAIN)


def test_finetune_trains_the_dynamics_then_the_policy_head_only(base: SimDistAgent, simdist_tuned: SimDistAgent,
                                                                bc_tuned: SimDistBCAgent, demos: Path) -> None:
    assert isinstance(bc_tuned, SimDistBCAgent) and bc_tuned.demos == str(demos.resolve())
    start, tuned = base.world_model, bc_tuned.world_model
    assert not same(component(tuned, "dynamics"), component(start, "dynamics"))
    assert same(component(tuned, "dynamics"), component(simdist_tuned.world_model, "dynamics"))  # BC leaves it
    assert not same(component(tuned, "policy"), component(start, "policy"))
    for name in FROZEN:
        assert same(component(tuned, name), component(start, name)), name


def test_without_demos_it_is_simdists_finetune(base: SimDistAgent, simdist_tuned: SimDistAgent, sim_data: Path,
                                               tmp_path: Path) -> None:
    agent = SimDistBCAgent.from_simdist(base)
    assert agent.demos is None and agent.source == "toy-base"
    tuned = agent.finetune(sim_data, out=tmp_path, seed=3, **TRAIN)
    assert isinstance(tuned, SimDistBCAgent)
    assert same(tuned.world_model.state_dict(), simdist_tuned.world_model.state_dict())


def test_demos_given_to_finetune_are_used_and_recorded(base: SimDistAgent, simdist_tuned: SimDistAgent,
                                                       sim_data: Path, demos: Path, tmp_path: Path) -> None:
    tuned = SimDistBCAgent.from_simdist(base).finetune(sim_data, demos=demos, out=tmp_path, seed=3, bc_epochs=2,
                                                        **TRAIN)
    assert tuned.demos == str(demos.resolve()) and tuned.bc_config.bc_epochs == 2
    assert not same(component(tuned.world_model, "policy"), component(simdist_tuned.world_model, "policy"))


def test_bad_demos_and_models_without_a_policy_head_are_refused_before_training(
        base: SimDistAgent, tiny_world_model: WorldModel, sim_data: Path, demos: Path, tmp_path: Path) -> None:
    agent = SimDistBCAgent.from_simdist(base)
    with pytest.raises(FileNotFoundError, match="demos .* not a dataset folder"):
        agent.finetune(sim_data, demos=tmp_path / "missing", out=tmp_path, **TRAIN)
    with pytest.raises(ValueError, match="policy head"):
        SimDistBCAgent(tiny_world_model).finetune(sim_data, demos=demos, out=tmp_path, **TRAIN)
    with pytest.raises(ValueError, match="bc_epochs"):
        agent.finetune(sim_data, demos=demos, bc_epochs=0, out=tmp_path, **TRAIN)
    assert not (tmp_path / "bc").exists()


def test_acts_like_simdist_and_keeps_its_type_with_settings(bc_tuned: SimDistBCAgent) -> None:
    agent = bc_tuned.with_settings(num_samples=16, iterations=1, seed=0)
    assert isinstance(agent, SimDistBCAgent) and agent.demos == bc_tuned.demos and agent.plans
    history = agent.new_history(3)
    history.reset({"state": torch.randn(3, 4, generator=torch.Generator().manual_seed(0))})
    actions = agent.act(history)
    assert actions.shape == (3, 2) and torch.isfinite(actions).all()


def test_save_and_load_round_trip(bc_tuned: SimDistBCAgent, tmp_path: Path) -> None:
    agent = SimDistBCAgent(bc_tuned.world_model, bc_tuned.config, bc_config=SimDistBCConfig(
        demos=bc_tuned.demos, bc_epochs=2, bc_windows_per_epoch=32, bc_lr=5e-4))
    folder = agent.save_pretrained(tmp_path / "model")
    assert read_agent_type(folder / "config.json") == "simdist_bc"
    assert {p.name for p in folder.iterdir()} >= {"config.json", "model.safetensors", "planner.json", BC_CONFIG_NAME}
    assert json.loads((folder / BC_CONFIG_NAME).read_text())["demos"] == bc_tuned.demos
    card = (folder / "README.md").read_text()
    assert "<org>/model" in card and "SimDist+BC" in card  # the card names the folder, not a temporary
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]

    loaded = load_agent(folder)
    assert type(loaded) is SimDistBCAgent and loaded.bc_config == agent.bc_config
    assert loaded.config == agent.config
    assert same(loaded.world_model.state_dict(), agent.world_model.state_dict())
    assert type(SimDistBCAgent.from_pretrained(folder)) is SimDistBCAgent
    agent.save_pretrained(folder)  # replacing a previous export
    with pytest.raises(ConfigError, match="load_agent"):
        WorldModel.from_pretrained(folder)

    state = load_file(str(folder / "model.safetensors"))
    state.pop(next(k for k in state if k.startswith("policy.")))
    save_file(state, str(folder / "model.safetensors"))
    with pytest.raises(CheckpointError, match="missing keys"):
        load_agent(folder)


def test_a_simdist_folder_is_not_loaded_as_simdist_bc(base: SimDistAgent, tmp_path: Path) -> None:
    folder = base.save_pretrained(tmp_path / "sd")
    assert read_agent_type(folder / "config.json") == "simdist" and type(load_agent(folder)) is SimDistAgent
    with pytest.raises(ConfigError, match="'simdist' agent, not a 'simdist_bc' one"):
        SimDistBCAgent.from_pretrained(folder)


def test_the_adaptation_loop_finetunes_with_the_saved_demos(bc_tuned: SimDistBCAgent, base: SimDistAgent,
                                                            tmp_path: Path) -> None:
    """A SimDist+BC folder naming its demos, adapted by the loop (which passes SimDist's options only): the
    stage model is SimDist+BC, its dynamics and policy head changed, its encoder, reward and value not."""
    start = SimDistBCAgent.from_simdist(base, demos=bc_tuned.demos)
    folder = start.save_pretrained(tmp_path / "start")
    config = AdaptConfig(schedule=[0.0, 0.1], evaluation=EvaluationConfig(trials=2), num_envs=2, heldout_episodes=2,
                         planner_overrides={"num_samples": 16, "iterations": 1}, finetune=FinetuneConfig(**TRAIN))
    curve = AdaptationLoop(str(folder), ToyReachTask(), tmp_path / "run", config, log=lambda m: None).run()
    stage = load_agent(tmp_path / "run" / "stages" / "stage-1")
    assert type(stage) is SimDistBCAgent and stage.demos == bc_tuned.demos and len(curve["value"]) == 2
    for name, changed in (("dynamics", True), ("policy", True), *((n, False) for n in FROZEN)):
        assert same(component(stage.world_model, name), component(start.world_model, name)) is not changed, name
