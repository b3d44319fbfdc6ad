"""Planner presets beside the algorithm (``simdist.components.planners.presets``, read by name through
``simdist.planning.planner_preset``), the planner options as partial overrides of an agent's ``planner.json``, and
``--planner-preset``."""

from __future__ import annotations

import argparse
import inspect

import pytest
import torch

from simdist import WorldModel, WorldModelConfig
from simdist.arguments import acting_settings, add_mppi_arguments, planner_overrides, preset_budget
from simdist.components.planners import presets as P
from simdist.components.planners.mppi import MPPIPlanner
from simdist.planning import TemporalEnsemble, build_planner, planner_preset, planner_presets, preset_settings


def test_presets_are_complete_build_planner_settings():
    assert set(P.PLANNER_PRESETS) == {"paper", "realtime", "manipulation"} == set(planner_presets())
    paper, realtime = planner_preset("paper"), planner_preset("realtime")
    assert paper == {"planner": "mppi", **P.PAPER, "temporal_ensemble": None}
    assert realtime == {"planner": "mppi", **P.REALTIME, "temporal_ensemble": P.REALTIME_DECAY}
    paper["num_samples"] = 1  # a copy
    assert P.PLANNER_PRESETS["paper"]["num_samples"] == 450
    assert planner_preset("realtime", seed=3)["seed"] == 3
    with pytest.raises(KeyError, match="known presets"):
        planner_preset("fast")
    assert P.scaled_settings(16, 1, init_std=0.1, warm_start="policy", tick_threads="auto") == P.REALTIME


def test_manipulation_preset_is_the_papers_table_iii():
    """Initial std 1.0, minimum 0.05, base-policy std 0.1, temperature 0.4, momentum 0, γ 0.99, 3 iterations;
    scaled to another budget it keeps them."""
    m = planner_preset("manipulation")
    assert (m["init_std"], m["min_std"], m["base_act_std"], m["temperature"], m["momentum"], m["discount"]) == (
        1.0, 0.05, 0.1, 0.4, 0.0, 0.99)
    assert (m["num_samples"], m["iterations"], m["temporal_ensemble"]) == (256, 3, None)
    scaled = P.scaled_settings(128, 3, base=m)
    assert scaled["temperature"] == 0.4 and scaled["init_std"] == 1.0 and scaled["num_elites"] == 32
    assert "planner" not in scaled and "temporal_ensemble" not in scaled
    assert preset_settings("manipulation", 128, 3) == scaled  # the core scales through the planner's own rule


def test_constructor_defaults_are_the_paper_preset():
    params = inspect.signature(MPPIPlanner.__init__).parameters
    assert {k: params[k].default for k in P.PAPER} == P.PAPER


def test_the_planner_declares_its_presets_and_schema():
    from simdist.components.planners import mppi

    assert mppi.PAPER is P.PAPER and mppi.REALTIME is P.REALTIME
    assert MPPIPlanner.presets is P.PLANNER_PRESETS and MPPIPlanner.config_class is mppi.MPPIConfig
    for settings in P.PLANNER_PRESETS.values():  # every preset passes the schema
        mppi.MPPIConfig.from_dict({k: v for k, v in settings.items() if k not in ("planner", "temporal_ensemble")})


def test_build_planner_from_a_preset_name():
    cfg = WorldModelConfig(
        obs_spec={"state": [4]}, action_dim=2, command_dim=1, history=2, horizon=3, latent_dim=8,
        encoder={"name": "mlp", "kwargs": {"hidden": [16]}}, dynamics={"name": "mlp", "kwargs": {"hidden": [16]}},
        reward_head={"name": "mlp", "kwargs": {"hidden": [16]}}, value_head={"name": "mlp", "kwargs": {"hidden": [16]}},
        policy_head={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 2}},
    )
    torch.manual_seed(0)
    wm = WorldModel(cfg)
    rt = build_planner(wm, "realtime")
    assert isinstance(rt, TemporalEnsemble) and rt.decay == P.REALTIME_DECAY
    assert (rt.num_samples, rt.iterations, rt.warm_start) == (16, 1, "policy")
    paper = build_planner(wm, "paper")
    assert isinstance(paper, MPPIPlanner) and (paper.num_samples, paper.iterations) == (450, 8)


def parse(argv: list[str], **defaults) -> dict:
    parser = argparse.ArgumentParser(prog="simdist test")
    add_mppi_arguments(parser, **defaults)
    return vars(parser.parse_args(argv))


def test_planner_options_are_named_as_planner_json_keys():
    """``--num-samples`` sets ``num_samples``; unset options stay None (the agent's own value); no preset fills them."""
    assert parse([]) == {"planner_preset": None, "num_samples": None, "iterations": None, "init_std": None,
                         "warm_start": None, "temporal_ensemble": None}
    given = parse(["--num-samples", "32", "--iterations", "2", "--planner-preset", "realtime"])
    assert given["num_samples"] == 32 and given["iterations"] == 2 and given["init_std"] is None
    assert planner_overrides(argparse.Namespace(**given)) == {"preset": "realtime", "num_samples": 32,
                                                              "iterations": 2, "init_std": None,
                                                              "warm_start": None, "temporal_ensemble": None}
    assert parse([], preset="realtime")["planner_preset"] == "realtime"
    with pytest.raises(SystemExit):
        parse(["--planner-preset", "fast"])


def test_the_old_samples_flag_is_a_deprecated_alias():
    with pytest.warns(FutureWarning, match="--samples is deprecated; use --num-samples"):
        assert parse(["--samples", "24"])["num_samples"] == 24
    with pytest.raises(SystemExit):
        parse(["--samples", "0"])  # checked like the new spelling


def test_by_default_the_agent_settings_run_with_single_keys_replaced():
    assert acting_settings(None, seed=3) == {"seed": 3}
    assert acting_settings(None, seed=3, num_samples=32, temporal_ensemble=0.0, init_std=None) == {
        "num_samples": 32, "temporal_ensemble": 0.0, "seed": 3}
    assert acting_settings(None, planner="mppi", current="mppi", seed=1, iterations=2) == {"iterations": 2, "seed": 1}
    assert acting_settings(None, planner="agent", seed=1) == {"seed": 1}
    # another planner: that planner's defaults; MPPI options go to MPPI planners only
    assert acting_settings(None, planner="policy", current="mppi", seed=1, num_samples=8, temporal_ensemble=0.5) == {
        "planner": "policy", "temporal_ensemble": 0.5, "seed": 1}
    with pytest.raises(ValueError, match="--num-samples: the agent plans with 'policy'"):
        acting_settings(None, current="policy", num_samples=8)
    assert acting_settings(None, current="policy", temporal_ensemble=0.5) == {"temporal_ensemble": 0.5, "seed": None}
    with pytest.raises(TypeError, match="samples"):
        acting_settings(None, samples=8)
    with pytest.raises(ValueError, match="give one of them"):
        acting_settings(None, planner="agent", preset="paper")


@pytest.mark.parametrize("preset", [None, "realtime"])
def test_every_registered_planner_builds_from_the_acting_settings(preset) -> None:
    """``simdist evaluate --planner NAME [--planner-preset P] --seed S``: whatever the planner, the settings the
    tools hand it build it, and it acts (the policy head takes the seed and ignores it)."""
    from simdist import list_components, make_task
    from simdist.components.agents.simdist.configuration import SimDistAgentConfig
    from simdist.components.agents.simdist.modeling import SimDistAgent

    task = make_task("toy-reach")
    wm = WorldModel.from_preset("toy").eval()
    agent = SimDistAgent(wm, SimDistAgentConfig.from_planner_dict({"planner": "mppi", **planner_preset("realtime")}))
    history = agent.new_history(2)
    history.reset({k: torch.zeros(2, *shape) for k, shape in task.dataset_spec().obs.items()})
    for name in list_components("planner"):
        acting = agent.with_settings(**acting_settings(task, planner=name, current="mppi", preset=preset, seed=1))
        assert acting.planner.plan(history).action.shape == (2, wm.config.action_dim), name


def test_a_preset_acts_as_the_tools_did_before_planner_json_was_the_default():
    """``--planner-preset realtime``: the preset's budget on the task's preset (paper), its policy samples and elites
    scaled to the budget; a given option replaces the preset's value."""
    from simdist import make_task

    task = make_task("toy-reach")
    rt = acting_settings(task, preset="realtime", seed=2)
    assert rt == {**preset_settings("paper", 16, 1, init_std=0.1, warm_start="policy", **task.planner_defaults),
                  "planner": "mppi", "temporal_ensemble": 0.8, "seed": 2}
    assert rt["num_policy_samples"] == 2
    bigger = acting_settings(task, preset="realtime", seed=2, num_samples=64, temporal_ensemble=0.0)
    assert (bigger["num_samples"], bigger["num_policy_samples"], bigger["init_std"], bigger["temporal_ensemble"]) == (
        64, 3, 0.1, 0.0)
    assert acting_settings(task, preset="paper", seed=0) == {
        **preset_settings("paper"), **task.planner_defaults, "planner": "mppi", "temporal_ensemble": None, "seed": 0}
    # what each preset fills: samples and iterations always, the rest where it differs from the task's preset
    assert preset_budget("paper", "paper", {"num_samples": 128}) == {
        "num_samples": 128, "iterations": 8, "init_std": None, "warm_start": None, "temporal_ensemble": None}
    assert preset_budget("realtime", "paper", {}) == {
        "num_samples": 16, "iterations": 1, "init_std": 0.1, "warm_start": "policy", "temporal_ensemble": 0.8}
