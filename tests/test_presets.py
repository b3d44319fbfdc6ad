"""Planner presets beside the algorithm (``simdist.components.planners.presets``, read by name through
``simdist.planning.planner_preset``), the planner options (``--planner.KEY VALUE``) as partial overrides of an agent's
``planner.json``, and ``--planner-preset``."""

from __future__ import annotations

import argparse
import dataclasses
import inspect

import pytest
import torch

from simdist import WorldModel, WorldModelConfig
from simdist.arguments import acting_settings, add_mppi_arguments, add_planner_arguments, planner_keywords, tool_parser
from simdist.components.planners import mppi
from simdist.components.planners import presets as P
from simdist.components.planners.mppi import MPPIPlanner
from simdist.planning import TemporalEnsemble, build_planner, planner_preset, planner_presets, preset_settings
from simdist.planning.legacy import recorded_budget


def test_presets_are_complete_build_planner_settings():
    from simdist.planning.settings import stated_settings

    assert set(P.PLANNER_PRESETS) == {"paper", "realtime", "manipulation"} == set(planner_presets())
    paper, realtime = planner_preset("paper"), planner_preset("realtime")
    assert paper == {"planner": "mppi", **stated_settings(P.PAPER), "temporal_ensemble": None}
    assert realtime == {"planner": "mppi", **stated_settings(P.REALTIME), "temporal_ensemble": P.REALTIME_DECAY}
    # the zoo's planner.json form: the paper's table, then what differs from the defaults, in that order
    assert list(realtime) == ["planner", "num_samples", "mixture_coef", "iterations", "num_elites", "temperature",
                              "init_std", "min_std", "base_act_std", "momentum", "discount", "seed",
                              "num_policy_samples", "warm_start", "tick_threads", "temporal_ensemble"]
    paper["num_samples"] = 1  # a copy
    assert planner_preset("paper")["num_samples"] == 450
    assert planner_preset("realtime", seed=3)["seed"] == 3
    with pytest.raises(KeyError, match="known presets"):
        planner_preset("fast")
    assert P.PAPER.at_budget(16, 1, init_std=0.1, warm_start="policy", tick_threads="auto") == P.REALTIME


def test_manipulation_preset_is_the_papers_table_iii():
    """Initial std 1.0, minimum 0.05, base-policy std 0.1, temperature 0.4, momentum 0, γ 0.99, 3 iterations;
    scaled to another budget it keeps them."""
    m = planner_preset("manipulation")
    assert (m["init_std"], m["min_std"], m["base_act_std"], m["temperature"], m["momentum"], m["discount"]) == (
        1.0, 0.05, 0.1, 0.4, 0.0, 0.99)
    assert (m["num_samples"], m["iterations"], m["temporal_ensemble"]) == (256, 3, None)
    scaled = P.MANIPULATION.at_budget(128, 3)
    assert scaled.temperature == 0.4 and scaled.init_std == 1.0 and scaled.num_elites == 32
    assert (scaled.num_policy_samples, P.MANIPULATION.at_budget(16).num_policy_samples) == (6, 2)  # at least 2
    settings = preset_settings("manipulation", num_samples=128, iterations=3)
    assert "planner" not in settings and "temporal_ensemble" not in settings
    assert mppi.MPPIConfig(**settings) == scaled  # the core scales through the planner's own rule


def test_the_config_is_the_one_declaration_of_the_settings():
    """No second list of defaults: the constructor takes its config's, keywords replace single ones."""
    params = inspect.signature(MPPIPlanner.__init__).parameters
    assert list(params) == ["self", "world_model", "config", "settings"]
    assert P.PAPER == mppi.MPPIConfig()
    wm = WorldModel.from_preset("toy").eval()
    planner = MPPIPlanner(wm, num_samples=12, iterations=2)
    assert (planner.num_samples, planner.iterations, planner.temperature) == (12, 2, 0.25)
    assert MPPIPlanner(wm, P.MANIPULATION, seed=3).config == dataclasses.replace(P.MANIPULATION, seed=3)
    with pytest.raises(TypeError):
        MPPIPlanner(wm, samples_per_step=4)


def test_the_planner_declares_its_presets_and_schema():
    assert MPPIPlanner.presets is P.PLANNER_PRESETS and MPPIPlanner.config_class is mppi.MPPIConfig
    for preset in P.PLANNER_PRESETS.values():  # every preset is an instance of the schema
        assert isinstance(preset.config, mppi.MPPIConfig)


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
    parser = tool_parser("test", "planner options")
    add_planner_arguments(parser, **defaults)
    return vars(parser.parse_args(argv))


def test_planner_options_are_a_name_a_preset_and_overrides():
    """``--planner.KEY VALUE`` sets ``planner_overrides[KEY]`` (a YAML value); unset: the agent's own settings."""
    assert parse([]) == {"planner": None, "planner_preset": None, "planner_overrides": {}}
    given = parse(["--planner.num_samples", "32", "--planner.iterations=2", "--planner.warm_start", "policy",
                   "--planner-preset", "realtime"])
    assert given["planner_overrides"] == {"num_samples": 32, "iterations": 2, "warm_start": "policy"}
    assert planner_keywords(argparse.Namespace(**given)) == {
        "planner": None, "preset": "realtime", "overrides": {"num_samples": 32, "iterations": 2,
                                                             "warm_start": "policy"}}
    assert parse([], preset="realtime")["planner_preset"] == "realtime"
    assert parse(["--planner", "policy", "--planner.score", "true"])["planner_overrides"] == {"score": True}
    with pytest.raises(SystemExit):
        parse(["--planner-preset", "fast"])


@pytest.mark.parametrize("argv, says", [
    (["--planner.num_samples", "7", "--planner.bogus", "1"], "--planner.bogus: not a setting of any registered"),
    (["--planner.num_samples", "many"], "--planner.num_samples: expected an integer >= 0, got 'many'"),
    (["--planner", "policy", "--planner.num_samples", "7"], "--planner.num_samples: not a setting of planner 'policy'"),
    (["--planner", "nowhere"], "--planner nowhere: not a registered planner"),
    (["--planner.num_samples"], "--planner.num_samples: expected a value"),
    (["--planner.temporal_ensemble", "1.5"], "--planner.temporal_ensemble: expected a decay in [0, 1)"),
])
def test_a_bad_override_is_one_line_naming_it(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exit_:
        parse(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1 and says in err, err


def test_the_old_flags_are_deprecated_aliases_of_overrides():
    with pytest.warns(FutureWarning, match="--samples is deprecated; use --planner.num_samples"):
        assert parse(["--samples", "24"])["planner_overrides"] == {"num_samples": 24}
    with pytest.warns(FutureWarning, match="--init-std is deprecated; use --planner.init_std"):
        given = parse(["--init-std", "0.5", "--temporal-ensemble", "0.8", "--iterations", "2"])
    assert given["planner_overrides"] == {"init_std": 0.5, "temporal_ensemble": 0.8, "iterations": 2}
    with pytest.raises(SystemExit):
        parse(["--num-samples", "0"])  # checked as before
    with pytest.warns(FutureWarning, match="add_mppi_arguments is deprecated"):
        add_mppi_arguments(tool_parser("test", "old"))


def test_by_default_the_agent_settings_run_with_single_keys_replaced():
    assert acting_settings(None, seed=3) == {"seed": 3}
    assert acting_settings(None, seed=3, num_samples=32, temporal_ensemble=0.0, init_std=None) == {
        "num_samples": 32, "temporal_ensemble": 0.0, "seed": 3}
    assert acting_settings(None, planner="mppi", current="mppi", seed=1, overrides={"iterations": 2}) == {
        "iterations": 2, "seed": 1}
    assert acting_settings(None, planner="agent", seed=1) == {"seed": 1}
    # another planner: that planner's defaults with the overrides its schema takes
    assert acting_settings(None, planner="policy", current="mppi", seed=1, temporal_ensemble=0.5) == {
        "planner": "policy", "temporal_ensemble": 0.5, "seed": 1}
    with pytest.raises(ValueError, match="--planner.num_samples: not a setting of planner 'policy'"):
        acting_settings(None, current="policy", num_samples=8)
    assert acting_settings(None, current="policy", temporal_ensemble=0.5) == {"temporal_ensemble": 0.5, "seed": None}
    with pytest.raises(ValueError, match="--planner.samples: not a setting"):
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
    assert rt == {**preset_settings("paper", num_samples=16, iterations=1, init_std=0.1, warm_start="policy",
                                    **task.planner_defaults), "planner": "mppi", "temporal_ensemble": 0.8, "seed": 2}
    assert rt["num_policy_samples"] == 2
    bigger = acting_settings(task, preset="realtime", seed=2, overrides={"num_samples": 64, "temporal_ensemble": 0.0})
    assert (bigger["num_samples"], bigger["num_policy_samples"], bigger["init_std"], bigger["temporal_ensemble"]) == (
        64, 3, 0.1, 0.0)
    assert acting_settings(task, preset="paper", seed=0) == {
        **preset_settings("paper"), **task.planner_defaults, "planner": "mppi", "temporal_ensemble": None, "seed": 0}
    # what each preset fills: samples and iterations always, the rest where it differs from the task's preset
    assert recorded_budget("paper", "paper", {"num_samples": 128}) == {
        "num_samples": 128, "iterations": 8, "init_std": None, "warm_start": None, "temporal_ensemble": None}
    assert recorded_budget("realtime", "paper", {}) == {
        "num_samples": 16, "iterations": 1, "init_std": 0.1, "warm_start": "policy", "temporal_ensemble": 0.8}
