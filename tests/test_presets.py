"""Planner presets in one place (``simdist.planning.presets``) and the ``--planner-preset`` option."""

from __future__ import annotations

import argparse
import inspect

import pytest
import torch

from simdist import WorldModel, WorldModelConfig
from simdist.arguments import add_mppi_arguments
from simdist.components.planners import MPPIPlanner
from simdist.planning import TemporalEnsemble, build_planner
from simdist.planning import presets as P


def test_presets_are_complete_build_planner_settings():
    assert set(P.PLANNER_PRESETS) == {"paper", "realtime", "manipulation"}
    paper, realtime = P.planner_preset("paper"), P.planner_preset("realtime")
    assert paper == {"planner": "mppi", **P.PAPER, "temporal_ensemble": None}
    assert realtime == {"planner": "mppi", **P.REALTIME, "temporal_ensemble": P.REALTIME_DECAY}
    paper["num_samples"] = 1  # a copy
    assert P.PLANNER_PRESETS["paper"]["num_samples"] == 450
    assert P.planner_preset("realtime", seed=3)["seed"] == 3
    with pytest.raises(KeyError, match="known presets"):
        P.planner_preset("fast")
    assert P.scaled_settings(16, 1, init_std=0.1, warm_start="policy", tick_threads="auto") == P.REALTIME


def test_manipulation_preset_is_the_papers_table_iii():
    """Initial std 1.0, minimum 0.05, base-policy std 0.1, temperature 0.4, momentum 0, γ 0.99, 3 iterations;
    scaled to another budget it keeps them."""
    m = P.planner_preset("manipulation")
    assert (m["init_std"], m["min_std"], m["base_act_std"], m["temperature"], m["momentum"], m["discount"]) == (
        1.0, 0.05, 0.1, 0.4, 0.0, 0.99)
    assert (m["num_samples"], m["iterations"], m["temporal_ensemble"]) == (256, 3, None)
    scaled = P.scaled_settings(128, 3, base=m)
    assert scaled["temperature"] == 0.4 and scaled["init_std"] == 1.0 and scaled["num_elites"] == 32
    assert "planner" not in scaled and "temporal_ensemble" not in scaled


def test_constructor_defaults_are_the_paper_preset():
    params = inspect.signature(MPPIPlanner.__init__).parameters
    assert {k: params[k].default for k in P.PAPER} == P.PAPER


def test_older_import_paths_name_the_same_objects():
    from simdist.components.planners import mppi
    from simdist.planning import ensemble

    assert mppi.PAPER is P.PAPER and mppi.REALTIME is P.REALTIME and mppi.scaled_settings is P.scaled_settings
    assert ensemble.REALTIME_DECAY == P.REALTIME_DECAY


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
    parser = argparse.ArgumentParser()
    add_mppi_arguments(parser, **defaults)
    return vars(parser.parse_args(argv))


def test_planner_preset_option_fills_the_options_not_given():
    realtime = {"samples": 16, "iterations": 1, "init_std": 0.1, "warm_start": "policy", "temporal_ensemble": 0.8}
    base = parse([], samples=128, iterations=4)
    assert base == {"planner_preset": None, "samples": 128, "iterations": 4, "init_std": None, "warm_start": None,
                    "temporal_ensemble": None}
    assert parse(["--planner-preset", "realtime"], samples=128) == {"planner_preset": "realtime", **realtime}
    flag, preset = ["--samples", "32"], ["--planner-preset", "realtime"]
    for argv in (flag + preset, preset + flag):
        assert parse(argv, samples=128) == {"planner_preset": "realtime", **realtime, "samples": 32}  # any order
    paper = parse(["--planner-preset", "paper", "--temporal-ensemble", "0.5"], preset="realtime")
    assert paper == {"planner_preset": "paper", "samples": 450, "iterations": 8, "init_std": 2.0, "warm_start": None,
                     "temporal_ensemble": 0.5}


def test_a_tool_default_preset_and_its_overrides():
    assert parse([], preset="realtime") == {"planner_preset": "realtime", "samples": 16, "iterations": 1,
                                            "init_std": 0.1, "warm_start": "policy", "temporal_ensemble": 0.8}
    assert parse([], preset="realtime", samples=32)["samples"] == 32
    parser = argparse.ArgumentParser()
    add_mppi_arguments(parser, preset="realtime")
    assert parser.parse_args(["--planner-preset", "paper"]).samples == 450
    assert parser.parse_args([]).samples == 16  # a second parse starts over
    with pytest.raises(SystemExit):
        parser.parse_args(["--planner-preset", "fast"])
