"""A model's own ``planner.json`` is what ``simdist evaluate`` and ``simdist adapt`` run: the command line replaces
single settings of it (named as its keys), ``--planner-preset`` asks for a preset's budget instead, and bad values in
the file are refused by the planner's schema when the folder is read."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from simdist import WorldModel, make_task
from simdist.agents import build_controller, load_agent
from simdist.cli import main
from simdist.components.agents.simdist.configuration import SimDistAgentConfig
from simdist.components.agents.simdist.modeling import SimDistAgent
from simdist.model.config import ConfigError
from simdist.model.presets import preset_config
from simdist.planning import TemporalEnsemble

#: the saved agent's own settings: none of them the paper's
OWN = {"planner": "mppi", "num_samples": 24, "iterations": 2, "num_elites": 8, "temperature": 0.5,
       "temporal_ensemble": 0.5}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.manual_seed(0)
    agent = SimDistAgent(WorldModel(preset_config("toy")).eval(), SimDistAgentConfig.from_planner_dict(OWN))
    return agent.save_pretrained(tmp_path_factory.mktemp("agent") / "toy-agent")


def _mppi(agent: SimDistAgent) -> object:
    planner = agent.planner
    return planner.planner if isinstance(planner, TemporalEnsemble) else planner


def test_the_agent_settings_run_by_default(folder: Path) -> None:
    agent = build_controller(str(folder), task=make_task("toy-reach"), seed=3)
    assert isinstance(agent.planner, TemporalEnsemble) and agent.planner.decay == 0.5
    mppi = _mppi(agent)
    assert (mppi.num_samples, mppi.iterations, mppi.num_elites, mppi.temperature, mppi.seed) == (24, 2, 8, 0.5, 3)


def test_options_replace_single_settings(folder: Path) -> None:
    agent = build_controller(str(folder), task=make_task("toy-reach"), num_samples=32, temporal_ensemble=0.0)
    assert not isinstance(agent.planner, TemporalEnsemble)  # 0: off
    mppi = _mppi(agent)
    assert (mppi.num_samples, mppi.iterations, mppi.temperature) == (32, 2, 0.5)  # the rest: planner.json's


def test_a_preset_replaces_the_file(folder: Path) -> None:
    agent = build_controller(str(folder), task=make_task("toy-reach"), preset="paper", num_samples=16, iterations=1)
    mppi = _mppi(agent)
    assert (mppi.num_samples, mppi.iterations, mppi.temperature) == (16, 1, 0.25)  # the paper's, not planner.json's
    assert not isinstance(agent.planner, TemporalEnsemble)


def test_simdist_evaluate_records_the_settings_that_ran(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["evaluate", "--task", "toy-reach", "--agent", str(folder), "--trials", "1", "--envs", "1", "--json"]
    assert main(base) == 0
    ran = json.loads(capsys.readouterr().out)["details"]["settings"]
    assert ran["planner"] == "agent" and ran["planner_preset"] is None
    assert {k: ran["planner_settings"][k] for k in OWN} == OWN
    with pytest.warns(FutureWarning, match="--samples is deprecated"):
        assert main([*base, "--samples", "12", "--iterations", "1"]) == 0
    ran = json.loads(capsys.readouterr().out)["details"]["settings"]["planner_settings"]
    assert (ran["num_samples"], ran["iterations"], ran["temperature"], ran["temporal_ensemble"]) == (12, 1, 0.5, 0.5)


@pytest.mark.parametrize("key, value, says", [
    ("num_samples", "many", "expected an integer"),
    ("num_samples", 1.5, "expected an integer"),  # not rounded to 1
    ("temperature", -1, "expected a finite number > 0"),
    ("init_std", math.nan, "expected a finite number > 0"),
    ("num_sample", 8, "unknown setting"),
])
def test_bad_values_in_planner_json_are_refused_naming_file_and_key(folder: Path, tmp_path: Path, key: str,
                                                                    value: object, says: str) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    for entry in folder.iterdir():
        (bad / entry.name).write_bytes(entry.read_bytes())
    (bad / "planner.json").write_text(json.dumps({**OWN, key: value}))
    with pytest.raises(ConfigError, match=f"planner.json.*key '{key}'.*{says}"):
        load_agent(str(bad))


def test_adapt_config_names_and_the_recorded_budget() -> None:
    """The loop's planner settings are a planner, a preset and overrides, checked before any work; a run records
    them as runs recorded them before (a preset run its budget, a default run the settings it was given under their
    own names), so those runs resume."""
    from simdist.workflows.adaptation import AdaptationLoop, AdaptConfig

    with pytest.warns(FutureWarning, match="samples is deprecated"):  # the old fields: overrides, for one release
        old_style = AdaptConfig(samples=64, iterations=2)
    assert old_style.planner_overrides == {"num_samples": 64, "iterations": 2}
    with pytest.raises(ValueError, match="planner_preset"):
        AdaptConfig(planner_preset="fast")
    with pytest.raises(ValueError, match="--planner.num_sample: not a setting"):
        AdaptConfig(planner_overrides={"num_sample": 8})
    with pytest.raises(ValueError, match="--planner.num_samples: expected an integer"):
        AdaptConfig(planner="mppi", planner_overrides={"num_samples": 1.5})
    task = make_task("toy-reach")
    preset = AdaptConfig(planner_preset="paper", planner_overrides={"num_samples": 128, "iterations": 4})
    recorded = AdaptationLoop.stage_settings(SimpleNamespace(cfg=preset, task=task), 0)["config"]
    old = {"samples": 128, "iterations": 4, "init_std": None, "warm_start": None, "temporal_ensemble": None}
    assert {k: recorded[k] for k in old} == old and "planner_preset" not in recorded and "num_samples" not in recorded
    assert "planner" not in recorded and "planner_overrides" not in recorded
    cfg = AdaptConfig(planner_overrides={"num_samples": 32})
    own = AdaptationLoop.stage_settings(SimpleNamespace(cfg=cfg, task=task), 0)["config"]
    assert (own["num_samples"], own["iterations"], own["planner_preset"]) == (32, None, None) and "samples" not in own
    more = AdaptConfig(planner="mppi", planner_overrides={"num_samples": 32, "temperature": 0.5})
    recorded = AdaptationLoop.stage_settings(SimpleNamespace(cfg=more, task=task), 0)["config"]
    assert (recorded["planner"], recorded["num_samples"], recorded["planner_overrides"]) == (
        "mppi", 32, {"temperature": 0.5})


def test_adapt_plans_with_the_agent_settings_unless_told(folder: Path) -> None:
    from simdist.workflows.adaptation import AdaptConfig, stage_planner

    task, agent = make_task("toy-reach"), load_agent(str(folder))
    own = stage_planner(agent, task, AdaptConfig(), seed=5)
    assert {k: own.config.to_planner_dict()[k] for k in OWN} == OWN and own.config.settings["seed"] == 5
    fewer = stage_planner(agent, task, AdaptConfig(planner_overrides={"num_samples": 12}), seed=5)
    assert (_mppi(fewer).num_samples, _mppi(fewer).temperature, fewer.planner.decay) == (12, 0.5, 0.5)
    paper = stage_planner(agent, task, AdaptConfig(planner_preset="paper",
                                                   planner_overrides={"num_samples": 12, "iterations": 1}), seed=5)
    assert (_mppi(paper).num_samples, _mppi(paper).iterations, _mppi(paper).temperature) == (12, 1, 0.25)
    assert not isinstance(paper.planner, TemporalEnsemble)


def test_planner_overrides_reach_the_planner_from_the_command_line(folder: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``--planner.num_samples 7`` reaches the planner that acts; a bad key is one line before any work."""
    base = ["evaluate", "--task", "toy-reach", "--agent", str(folder), "--trials", "1", "--envs", "1", "--json"]
    assert main([*base, "--planner.num_samples", "7", "--planner.temperature=0.3"]) == 0
    ran = json.loads(capsys.readouterr().out)["details"]["settings"]
    assert (ran["planner_settings"]["num_samples"], ran["planner_settings"]["temperature"]) == (7, 0.3)
    agent = build_controller(str(folder), task=make_task("toy-reach"), overrides={"num_samples": 7})
    assert _mppi(agent).num_samples == 7 and _mppi(agent).iterations == 2  # the rest: planner.json's
    with pytest.raises(SystemExit) as exit_:
        main([*base, "--planner.num_samples", "7", "--planner.bogus", "1"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "--planner.bogus: not a setting of any registered planner" in err
