"""MPPI's policy prior (``prior_weight``): a score with a consistent lean moves the plan away from the policy's
chunk, and the prior's weight sets how far (CPU, tiny model)."""

from __future__ import annotations

import json

import pytest
import torch

from simdist.components.planners.mppi import MPPIPlanner
from simdist.components.planners.policy import PolicyPlanner
from simdist.schema import SettingError
from tests.test_planners import history_for, tiny_model

SETTINGS = dict(num_samples=128, iterations=3, num_elites=32, init_std=0.3, base_act_std=0.1, warm_start="policy",
                action_low=-5.0, action_high=5.0)


def leaning_gap(prior_weight: float, ticks: int = 5) -> float:
    """Mean gap of the plan's first action to the policy's, dimension 0, under a score that prefers a larger
    dimension 0 on every step (a lean that every tick repeats)."""
    wm = tiny_model(seed=3)
    hist = history_for(wm, 2)
    planner = MPPIPlanner(wm, **SETTINGS, prior_weight=prior_weight, seed=0)
    planner._score = lambda samples, ctx: 10.0 * samples[..., 0].sum(dim=-1)
    policy = PolicyPlanner(wm, action_low=-5.0, action_high=5.0).plan(hist).action
    gaps = [(planner.plan(hist).action - policy)[:, 0].mean() for _ in range(ticks)]
    return float(torch.stack(gaps).mean())


@pytest.mark.usefixtures("single_thread")
def test_the_prior_weight_sets_how_far_the_plan_follows_a_leaning_score():
    gaps = [leaning_gap(w) for w in (0.0, 0.3, 3.0, 300.0)]
    assert gaps[0] > 0.3  # the paper's MPPI follows the lean far beyond the prior's std
    assert gaps[0] > gaps[1] > gaps[2] > gaps[3] >= 0.0  # each heavier prior follows it less
    assert gaps[3] < 0.02  # a dominant prior keeps the plan on the policy's chunk


@pytest.mark.usefixtures("single_thread")
def test_the_reported_return_is_the_model_score_without_the_prior_term():
    wm = tiny_model(seed=3)
    planner = MPPIPlanner(wm, **SETTINGS, prior_weight=30.0, seed=0)
    planner._score = lambda samples, ctx: 10.0 * samples[..., 0].sum(dim=-1)
    result = planner.plan(history_for(wm, 2))
    # a linear score: the weighted elites' mean score is the score of their weighted mean, the plan (unclipped)
    torch.testing.assert_close(result.returns, 10.0 * result.plan[..., 0].sum(dim=-1), rtol=1e-4, atol=1e-4)


@pytest.mark.usefixtures("single_thread")
def test_kept_candidates_carry_the_model_scores_without_the_prior_term():
    wm = tiny_model(seed=3)
    hist = history_for(wm, 2)
    base = MPPIPlanner(wm, **SETTINGS, keep_candidates=True, seed=0).plan(hist)
    prior = MPPIPlanner(wm, **SETTINGS, keep_candidates=True, prior_weight=1.0, seed=0).plan(hist)
    first = prior.diagnostics["candidates"].shape[1] - 2 * SETTINGS["num_samples"]  # the first iteration's samples
    # are drawn the same either way (same seed), so their kept scores agree
    torch.testing.assert_close(base.diagnostics["candidate_returns"][:, :first],
                               prior.diagnostics["candidate_returns"][:, :first])
    assert not torch.equal(base.plan, prior.plan)


def test_a_prior_without_a_std_is_refused_naming_the_key(tmp_path) -> None:
    from simdist.components.agents.simdist import SimDistAgentConfig
    from simdist.model.config import ConfigError

    with pytest.raises(SettingError, match="prior_weight"):
        MPPIPlanner(tiny_model(seed=3), prior_weight=1.0, base_act_std=0.0)
    (tmp_path / "planner.json").write_text(json.dumps({"planner": "mppi", "prior_weight": -1.0}))
    with pytest.raises(ConfigError, match="prior_weight"):
        SimDistAgentConfig.from_folder(tmp_path)
