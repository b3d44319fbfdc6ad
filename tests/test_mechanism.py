"""The planner-ranking analysis: rank statistics, the planner's kept candidates, and cloned-state returns on
the UR5e peg (a random-init model at tiny scale: the plumbing, not a result)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import mppi_agent

from simdist.components.agents.simdist.configuration import SimDistAgentConfig
from simdist.components.agents.simdist.modeling import SimDistAgent
from simdist.diagnostics.mechanism import (
    MechanismConfig,
    predicted_returns,
    ranking_report,
    run_mechanism,
    spearman,
    visit_states,
)
from simdist.planning.base import build_planner
from simdist.tasks import make_task


def test_spearman_hand_made() -> None:
    assert spearman(np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 30.0])) == pytest.approx(1.0)
    assert spearman(np.array([1.0, 2.0, 3.0]), np.array([3.0, 1.0, 0.0])) == pytest.approx(-1.0)
    assert spearman(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0])) == pytest.approx(0.8)
    assert spearman(np.ones(4), np.arange(4.0)) == 0.0  # a constant ranks nothing


def test_ranking_report_regret() -> None:
    true = np.array([[1.0, 5.0, 3.0], [2.0, 0.0, 4.0]])
    perfect = ranking_report(true * 2.0, true)
    assert perfect["spearman"]["mean"] == pytest.approx(1.0) and perfect["regret"]["mean"] == 0.0
    shifted = ranking_report(true + 7.0, true)  # a constant offset per state does not change any ranking
    assert shifted["within_state_error_rms"]["mean"] == pytest.approx(0.0) and shifted["mean_offset"]["mean"] == 7.0
    assert perfect["top1"]["mean"] == 1.0
    worst = ranking_report(-true, true)
    assert worst["regret"]["mean"] == pytest.approx(((5 - 1) + (4 - 0)) / 2)
    assert worst["relative_regret"]["mean"] == pytest.approx(1.0) and worst["top1"]["mean"] == 0.0
    with pytest.raises(ValueError, match="non-finite"):
        ranking_report(np.array([[np.nan, 1.0]]), np.array([[0.0, 1.0]]))
    with pytest.raises(ValueError, match="candidates"):
        MechanismConfig(candidates=1)


def _agent(samples: int = 8) -> SimDistAgent:
    return mppi_agent("ur5e-peg", "manipulation", num_samples=samples, iterations=2)


def test_mppi_keeps_every_scored_candidate_with_its_return() -> None:
    agent = _agent()
    planner = build_planner(agent.world_model, {**agent.config.to_planner_dict(), "keep_candidates": True})
    history = agent.new_history(2)
    task = make_task("ur5e-peg", profile=None)
    env = task.make_env(2, 0, real=True)
    try:
        history.reset(env.reset(seed=0))
    finally:
        env.close()
    result = planner.plan(history)
    n = planner.num_samples * planner.iterations + planner.num_policy_samples
    assert result.diagnostics["candidates"].shape == (2, n, 5, 7)
    again = predicted_returns(agent.world_model, _visited(history, result.diagnostics["candidates"]), 0.99)
    np.testing.assert_allclose(again, result.diagnostics["candidate_returns"].numpy(), rtol=1e-4, atol=1e-4)


def test_value_weight_zero_ranks_by_the_horizon_rewards_alone() -> None:
    """MPPI's ``value_weight`` (a planner.json key): 0 scores each candidate by its predicted rewards only, and the
    mechanism scores the candidates as the agent's planner does; a negative weight is refused by the schema."""
    from simdist.diagnostics.mechanism import planner_value_weight, predicted_parts
    from simdist.schema import SettingError

    agent = _agent()
    settings = {**agent.config.to_planner_dict(), "keep_candidates": True, "value_weight": 0.0}
    planner = build_planner(agent.world_model, settings)
    history = agent.new_history(2)
    env = make_task("ur5e-peg", profile=None).make_env(2, 0, real=True)
    try:
        history.reset(env.reset(seed=0))
    finally:
        env.close()
    result = planner.plan(history)
    visited = _visited(history, result.diagnostics["candidates"])
    rewards, value = predicted_parts(agent.world_model, visited, 0.99)
    assert np.abs(value).max() > 1e-3  # the value term is there, and left out
    np.testing.assert_allclose(result.diagnostics["candidate_returns"].numpy(), rewards, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(predicted_returns(agent.world_model, visited, 0.99, value_weight=0.5),
                               rewards + 0.5 * value, rtol=1e-4, atol=1e-4)
    weighted = SimDistAgent(agent.world_model, SimDistAgentConfig.from_planner_dict(
        {k: v for k, v in settings.items() if k != "keep_candidates"}))
    assert planner_value_weight(weighted) == 0.0 and planner_value_weight(agent) == 1.0
    with pytest.raises(SettingError, match="value_weight"):
        build_planner(agent.world_model, {**settings, "value_weight": -1.0})


def _visited(history, candidates):  # type: ignore[no-untyped-def]
    from simdist.diagnostics.mechanism import VisitedStates

    obs, act, cmd = history.as_inputs()
    return VisitedStates(states=None, obs_hist=obs, act_hist=act, command=cmd, candidates=candidates)


def test_cloned_states_give_the_same_true_return_for_the_same_candidate() -> None:
    """Two clones of one state with the same open-loop candidate return the same; the analysis runs end to end
    (states visited, candidates kept, true and predicted returns, one report per model)."""
    task = make_task("ur5e-peg", profile="peg-real")
    agent = _agent()
    cfg = MechanismConfig(states=2, candidates=3, every=2, skip=1, num_envs=2, seed=0)
    visited = visit_states(task, agent, cfg)
    assert visited.candidates.shape == (2, 3, 5, 7) and visited.obs_hist["proprio"].shape == (2, 6, 29)
    actions = visited.candidates[0, :1].repeat(2, 1, 1).numpy()
    twice = task.true_returns(visited.states, np.array([0, 0]), actions, gamma=0.99, seed=0)
    assert np.isfinite(twice).all() and twice[0] == pytest.approx(twice[1], abs=1e-6)
    report = run_mechanism(task, agent, {"a": agent, "b": _agent()}, cfg)
    assert set(report["models"]) == {"a", "b"} and report["models"]["a"]["states"] == 2
    assert report["models"]["a"] == report["models"]["b"]  # the same weights rank alike
