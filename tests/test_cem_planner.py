"""The cross-entropy method planner (``components/planners/cem.py``), a plug-in the core does not name: found by the
registry, built from settings and from a model folder's ``planner.json``, checked against its own schema,
deterministic per seed, MPPI's refit in the limit of zero inverse temperature, and better than random sequences on
the toy's world model; ``simdist evaluate`` acts with it from a ``planner.json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from simdist import WorldModel, build_planner, list_components, load_agent
from simdist.cli import main as simdist_main
from simdist.components.planners.cem import CEMConfig, CEMPlanner
from simdist.model.config import ConfigError
from simdist.model.presets import preset_config
from simdist.planning import ObservationHistory, plan_score
from simdist.registry import get
from simdist.schema import SettingError
from tests.helpers import toy_history

SMALL = {"planner": "cem", "num_samples": 32, "num_policy_samples": 4, "iterations": 3, "num_elites": 8}

pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.fixture(scope="module")
def toy() -> WorldModel:
    """The toy task's world model (its preset architecture, seeded weights)."""
    torch.manual_seed(0)
    return WorldModel(preset_config("toy")).eval()


def history(wm: WorldModel, batch: int = 4, seed: int = 1) -> ObservationHistory:
    return toy_history(wm, batch, seed)


def save_agent(wm: WorldModel, folder: Path, planner: dict) -> Path:
    """A model folder with ``planner`` as its ``planner.json``, written as a user would."""
    wm.save_pretrained(folder)
    (folder / "planner.json").write_text(json.dumps(planner), encoding="utf-8")
    return folder


def test_registered_discovered_and_declares_its_schema() -> None:
    assert "cem" in list_components("planner")
    assert get("planner", "cem") is CEMPlanner and CEMPlanner.config_class is CEMConfig


def test_builds_from_settings_with_temporal_ensembling(toy: WorldModel) -> None:
    planner = build_planner(toy, SMALL)
    assert isinstance(planner, CEMPlanner)
    assert (planner.num_samples, planner.num_policy_samples, planner.iterations, planner.num_elites) == (32, 4, 3, 8)
    wrapped = build_planner(toy, {**SMALL, "temporal_ensemble": 0.8})
    assert isinstance(wrapped.planner, CEMPlanner)
    assert wrapped.plan(history(toy)).action.shape == (4, 2)


def test_builds_from_a_model_folders_planner_json(toy: WorldModel, tmp_path: Path) -> None:
    folder = save_agent(toy, tmp_path / "agent", {**SMALL, "momentum": 0.0, "warm_start": "policy"})
    agent = load_agent(folder)
    assert isinstance(agent.planner, CEMPlanner)
    assert agent.planner.config.momentum == 0.0 and agent.planner.config.warm_start == "policy"
    assert agent.act(history(toy)).shape == (4, 2)


@pytest.mark.parametrize(("key", "value", "says"), [
    ("num_elites", 0, "expected an integer >= 1"),
    ("warm_start", "official", "expected one of 'shift', 'policy', 'none'"),
    ("momentum", 1.0, "< 1"),
    ("min_std", 3.0, "need min_std <= max_std"),
    ("temperature", 0.5, "unknown setting"),
])
def test_a_bad_setting_is_one_error_naming_its_key(toy: WorldModel, tmp_path: Path, key: str, value: object,
                                                   says: str) -> None:
    with pytest.raises(SettingError, match=f"^key '{key}': .*{says}") as err:
        build_planner(toy, {**SMALL, key: value})
    assert err.value.setting == key
    folder = save_agent(toy, tmp_path / "agent", {**SMALL, key: value})
    with pytest.raises(ConfigError, match=rf"planner\.json: key '{key}'"):
        load_agent(folder)


def test_deterministic_per_seed_and_reset(toy: WorldModel) -> None:
    hist = history(toy)
    a, b = build_planner(toy, {**SMALL, "seed": 3}), build_planner(toy, {**SMALL, "seed": 3})
    first = [a.plan(hist).plan for _ in range(2)]
    assert all(torch.equal(x, b.plan(hist).plan) for x in first)
    a.reset(seed=3)
    assert torch.equal(a.plan(hist).plan, first[0])  # the warm start forgotten, the generator reseeded
    assert not torch.equal(build_planner(toy, {**SMALL, "seed": 4}).plan(hist).plan, first[0])


def test_the_warm_start_is_kept_per_env(toy: WorldModel) -> None:
    planner = build_planner(toy, SMALL)
    plan = planner.plan(history(toy)).plan
    assert torch.equal(planner.prev_mean, plan)
    planner.reset(ids=[1])
    assert torch.all(planner.prev_mean[1] == 0) and torch.equal(planner.prev_mean[[0, 2, 3]], plan[[0, 2, 3]])


def test_equals_mppi_at_zero_inverse_temperature(toy: WorldModel) -> None:
    """Same draws, same score, same elites: with uniform weights MPPI's refit is CEM's (momentum 0, as MPPI's)."""
    shared = {k: v for k, v in SMALL.items() if k != "planner"} | {"init_std": 0.5, "seed": 7}
    cem = build_planner(toy, {"planner": "cem", **shared, "momentum": 0.0})
    mppi = build_planner(toy, {"planner": "mppi", **shared, "temperature": 1e-9})
    hist = history(toy)
    for _ in range(2):  # the second tick starts from each one's shifted warm start
        ours, theirs = cem.plan(hist), mppi.plan(hist)
        torch.testing.assert_close(ours.plan, theirs.plan, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ours.diagnostics["std"], theirs.diagnostics["std"], atol=1e-5, rtol=1e-5)


def test_its_plan_outscores_random_sequences(toy: WorldModel) -> None:
    """The plan's score on the model is above the mean score of uniform random sequences in the action bounds, for
    every env (a planner that kept the worst sequences, or ignored the scores, scores below or at that mean)."""
    hist = history(toy, batch=6)
    planner = build_planner(toy, {**SMALL, "num_policy_samples": 0, "iterations": 4})
    plan = planner.plan(hist).plan
    obs, act, _ = hist.as_inputs()  # the toy takes no command
    g = torch.Generator().manual_seed(5)
    random = torch.rand(6, 256, *plan.shape[1:], generator=g) * 2 - 1
    with torch.no_grad():
        encoding = toy.encode(obs, act)
        score = plan_score(toy.imagine(encoding, torch.cat([plan[:, None], random], 1), None), 0.99,
                           toy.config.value_offset)
    assert torch.all(score[:, 0] > score[:, 1:].mean(1)), score[:, 0] - score[:, 1:].mean(1)


def test_simdist_evaluate_acts_with_it_from_planner_json(toy: WorldModel, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    folder = save_agent(toy, tmp_path / "agent", {**SMALL, "num_samples": 8, "iterations": 1})
    code = simdist_main(["evaluate", "--task", "toy-reach", "--agent", str(folder), "--trials", "1", "--envs", "1",
                         "--json"])
    assert code == 0
    settings = json.loads(capsys.readouterr().out)["details"]["settings"]
    assert settings["planner_settings"]["planner"] == "cem" and settings["planner_settings"]["num_samples"] == 8


def test_its_options_work_on_the_command_line(toy: WorldModel, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """An MPPI agent acts with CEM by ``--planner cem``; ``--planner.KEY`` sets CEM's own options, checked against
    ``CEMConfig`` (one line for a key CEM does not have), with nothing in the core naming them."""
    folder = save_agent(toy, tmp_path / "agent", {"planner": "mppi", "num_samples": 16, "iterations": 1})
    base = ["evaluate", "--task", "toy-reach", "--agent", str(folder), "--trials", "1", "--envs", "1", "--json",
            "--planner", "cem"]
    assert simdist_main([*base, "--planner.num_samples", "8", "--planner.num_elites=3", "--planner.momentum",
                         "0.2"]) == 0
    ran = json.loads(capsys.readouterr().out)["details"]["settings"]["planner_settings"]
    assert (ran["planner"], ran["num_samples"], ran["num_elites"], ran["momentum"]) == ("cem", 8, 3, 0.2)
    with pytest.raises(SystemExit) as exit_:
        simdist_main([*base, "--planner.temperature", "0.3"])  # an MPPI setting CEM does not have
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1 and "--planner.temperature" in err
