"""Cloned states for the planner-ranking analysis on ``toy-reach`` and ``go2``: a clone steps exactly as the
original env does, its true return is reproducible and equals the one computed by hand on the original, the
return tells candidates apart, and the analysis runs end to end on the toy with an untrained model."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
import torch

from simdist import WorldModel
from simdist.components.agents.simdist.configuration import SimDistAgentConfig
from simdist.components.agents.simdist.modeling import SimDistAgent
from simdist.diagnostics.mechanism import MechanismConfig, run_mechanism, visit_states
from simdist.planning.base import build_planner
from simdist.tasks import make_task

GAMMA = 0.99


def _toward_goal(state: np.ndarray, sign: float, steps: int) -> np.ndarray:
    """(B, steps, 2) full force along ∓(p - g): toward the goal (sign -1) or away from it (+1)."""
    d = state[:, :2] / np.maximum(np.linalg.norm(state[:, :2], axis=1, keepdims=True), 1e-6)
    return np.repeat((sign * d)[:, None], steps, axis=1).astype(np.float32)


# ------------------------------------------------------------------------------------------ toy-reach
def stepped_toy_env(task: Any, num_envs: int, rng: np.random.Generator, steps: int = 4) -> Any:
    """A toy env of ``task`` reset at seed 0 and stepped ``steps`` times with random actions (mid-episode, with
    actions in flight on a profile with latency); the caller closes it."""
    env = task.make_env(num_envs, 0)
    env.reset(seed=0)
    for _ in range(steps):
        env.step(rng.uniform(-1, 1, (num_envs, 2)))
    return env


def test_toy_clone_steps_as_the_original_and_its_true_return_is_the_hand_computed_one() -> None:
    from simdist.components.tasks.toy_reach.clone import restore
    from simdist.components.tasks.toy_reach.expert import expert_policy

    task = make_task("toy-reach", profile="sim")  # mass and friction randomised per env: the clone must carry them
    task.expert_steps = 40
    rng = np.random.default_rng(0)
    env = stepped_toy_env(task, 3, rng)
    other = task.make_env(2, 5)
    try:
        rows = np.array([2, 0])
        snap = task.snapshot_states(env, rows)
        before = env._obs()["state"][rows]
        other.reset(seed=5)  # another goal, start, mass and friction draw: all overwritten by the clone
        np.testing.assert_array_equal(restore(other, snap)["state"], before)
        assert np.array_equal(other.mass, env.mass[rows]) and np.array_equal(other.goal, env.goal[rows])
        assert not np.isin(env.mass[rows], env.mass[1]).any()  # the rows differ from each other
        plan = rng.uniform(-1, 1, (2, 6, 2)).astype(np.float32)
        twice = task.true_returns(snap, np.array([0, 0, 1, 1]), plan[[0, 0, 1, 1]], gamma=GAMMA, seed=3)
        assert twice[0] == twice[1] and twice[2] == twice[3] and twice[0] != twice[2]
        # the original env and the clone, stepped with the same actions, stay identical; the return by hand
        full = np.zeros((3, 2), np.float32)
        ret, disc, policy, obs = np.zeros(2), 1.0, expert_policy(), None
        for t in range(6 + task.expert_steps):
            if t < 6:
                full[rows] = plan[:, t]
            else:
                full = policy(obs)
            step = env.step(full)
            if t < 6:
                mine = other.step(full[rows])
                np.testing.assert_array_equal(mine.obs["state"], step.obs["state"][rows])
                np.testing.assert_array_equal(mine.reward, step.reward[rows])
            assert not step.terminated[rows].any()
            ret += disc * step.reward[rows]
            disc *= GAMMA
            obs = step.obs
    finally:
        env.close()
        other.close()
    np.testing.assert_allclose(twice[[0, 2]], ret, rtol=1e-12)
    assert ret.min() > 5.0  # 46 steps of about 0.3 reward each: a value, not zeros


def test_toy_true_returns_rank_a_push_to_the_goal_above_a_push_away() -> None:
    task = make_task("toy-reach", profile="real")
    task.expert_steps = 60
    env = task.make_env(2, 1)
    try:
        obs = env.reset(seed=1)
        snap = task.snapshot_states(env, np.arange(2))
    finally:
        env.close()
    toward, away = _toward_goal(obs["state"], -1.0, 8), _toward_goal(obs["state"], 1.0, 8)
    returns = task.true_returns(snap, np.array([0, 1, 0, 1]), np.concatenate([toward, away]), gamma=GAMMA, seed=0)
    assert np.isfinite(returns).all()
    assert (returns[:2] > returns[2:] + 1.0).all(), returns  # 0.8 s away from the goal costs metres of distance


def _toy_agent(seed: int = 0) -> SimDistAgent:
    from simdist.planning import preset_settings

    torch.manual_seed(seed)
    wm = WorldModel.from_preset("toy")
    wm.normalizer.set_stats({k: {"mean": [0.0] * wm.normalizer.mean(k).numel(),
                                 "std": [1.0] * wm.normalizer.mean(k).numel()} for k in wm.normalizer.keys})
    settings = preset_settings("paper", num_samples=8, iterations=2)
    return SimDistAgent(wm.eval(), SimDistAgentConfig.from_planner_dict({"planner": "mppi", **settings}))


def test_toy_mechanism_end_to_end_with_an_untrained_model() -> None:
    task = make_task("toy-reach", profile="real")
    task.expert_steps = 50
    agent, other = _toy_agent(0), _toy_agent(1)
    cfg = MechanismConfig(states=4, candidates=5, every=2, skip=1, num_envs=2, seed=0)
    visited = visit_states(task, agent, cfg)
    assert visited.candidates.shape == (4, 5, 8, 2) and visited.obs_hist["state"].shape == (4, 9, 4)
    assert visited.states["physics"].shape[0] == 4
    report = run_mechanism(task, agent, {"a": agent, "b": other}, cfg)
    truth = np.array(report["true_returns"])
    assert truth.shape == (4, 5) and np.isfinite(truth).all() and (np.ptp(truth, axis=1) > 0).all()
    again = task.true_returns(visited.states, np.repeat(np.arange(4), 5),
                              visited.candidates.reshape(20, 8, 2).numpy(), gamma=cfg.gamma, seed=cfg.seed)
    np.testing.assert_allclose(again.reshape(4, 5), truth, atol=1e-4)  # the report keeps 4 decimals
    for name in ("a", "b"):
        rho = report["models"][name]["spearman"]["mean"]
        assert np.isfinite(rho) and -1.0 <= rho <= 1.0
        assert report["models"][name]["states"] == 4
    assert report["models"]["a"]["predicted_returns"] != report["models"]["b"]["predicted_returns"]


def test_toy_true_return_parts_add_up_and_a_shadow_of_the_driver_plans_as_it_does() -> None:
    """The toy's split: total as :meth:`true_returns`, horizon + tail == total, the horizon the candidate alone.
    A shadow planner with the driver's model and seed plans the same actions every tick; one reseeded differs."""
    from simdist.diagnostics.mechanism import drive_and_clone, true_return_parts

    task = make_task("toy-reach", profile="real")
    task.expert_steps = 50
    agent = _toy_agent(0)
    cfg = MechanismConfig(states=3, candidates=4, every=2, skip=1, num_envs=2, seed=0)
    settings = {**agent.config.to_planner_dict(), "keep_candidates": True}
    same, reseeded = (build_planner(agent.world_model, {**settings, "seed": s}) for s in (0, 1))
    visited = drive_and_clone(task, build_planner(agent.world_model, {**settings, "seed": 0}),
                              agent.new_history(2), cfg, {"same": same, "reseeded": reseeded})
    ticks = visited.actions["driver"].shape[0]
    assert ticks >= 2 and visited.actions["same"].shape == visited.actions["reseeded"].shape == (ticks, 2)
    np.testing.assert_array_equal(visited.actions["same"], visited.actions["driver"])
    assert not np.array_equal(visited.actions["reseeded"], visited.actions["driver"])
    parts = true_return_parts(task, visited, cfg)
    total = task.true_returns(visited.states, np.repeat(np.arange(3), 4),
                              visited.candidates.reshape(12, 8, 2).numpy(), gamma=cfg.gamma, seed=cfg.seed)
    np.testing.assert_allclose(parts["total"], total.reshape(3, 4))
    np.testing.assert_allclose(parts["horizon"] + parts["tail"], parts["total"])
    assert (np.abs(parts["tail"]) > 0).any() and not np.allclose(parts["horizon"], parts["total"])



def test_toy_true_latent_control_and_last_iteration_pool() -> None:
    """``--true-value``: the heads on the candidates' true latents. With the true latents in place of the imagined
    ones the heads' score equals :meth:`WorldModel.score_latents` of them, and scoring the imagined latents that way
    gives back the imagined score; ``pool="last"`` draws only last-iteration sequences (the same states: the draw
    does not act); every state names its episode, and the per-state ρ come with intervals over episodes."""
    from simdist.diagnostics.mechanism import predicted_parts, true_latent_parts
    from simdist.diagnostics.visited import imagine_candidates

    task = make_task("toy-reach", profile="real")
    task.expert_steps = 50
    agent = _toy_agent(0)
    wm = agent.world_model
    cfg = MechanismConfig(states=4, candidates=4, every=2, skip=1, num_envs=2, seed=0)
    visited = visit_states(task, agent, cfg)
    imagined = imagine_candidates(wm, visited).latents
    np.testing.assert_allclose(true_latent_parts(wm, visited, imagined.numpy(), cfg.gamma),
                               predicted_parts(wm, visited, cfg.gamma), rtol=1e-5, atol=1e-5)
    assert visited.episodes is not None and visited.episodes.shape == (4,)
    last = visit_states(task, agent, replace(cfg, pool="last"))
    assert last.states["physics"].tolist() == visited.states["physics"].tolist()
    planner = agent.with_settings(keep_candidates=True).planner
    history = agent.new_history(1)
    env = task.make_env(1, 0, real=True)
    try:
        history.reset(env.reset(seed=0))
    finally:
        env.close()
    diag = planner.plan(history).diagnostics
    drawn = diag["candidate_iteration"]
    last_rows = diag["candidates"][0, drawn == drawn.max()]
    assert len(last_rows) == planner.num_samples and drawn.max() == planner.iterations - 1
    report = run_mechanism(task, agent, {"m": agent}, cfg, split=True, true_value=True)
    control = report["models"]["m"]["true_latents"]
    for key in ("rho_value_on_true", "rho_reward_on_true", "rho_on_true", "rho_value_pred_vs_true"):
        assert -1.0 <= control[key]["mean"] <= 1.0 and len(control["per_state"][key]) == 4
    episodes = report["models"]["m"]["by_episode"]
    assert set(episodes) >= {"spearman", "rho_value", "rho_value_on_true"}
    assert episodes["spearman"]["episodes"] == len(set(report["episodes"])) and episodes["spearman"]["n"] == 4
    with pytest.raises(ValueError, match="needs split"):
        run_mechanism(task, agent, {"m": agent}, cfg, true_value=True)


# ------------------------------------------------------------------------------------------ go2
@pytest.fixture(scope="module")
def go2() -> Any:
    return make_task("go2", profile="ptfe-slope-3deg")  # actuation delay 1 step: the queue is cloned too


def test_go2_clone_steps_as_the_original_and_its_true_return_is_the_hand_computed_one(go2: Any) -> None:
    from simdist.experts import load_expert_set
    from simdist.zoo import resolve_experts

    rng = np.random.default_rng(0)
    env = go2.make_env(3, 0)
    other = go2.make_env(2, 7)
    try:
        env.reset(seed=0)
        for _ in range(30):  # past the 25 standing steps: the walk command is running
            env.step(0.2 * rng.standard_normal((3, 12)))
        rows = np.array([2, 0])
        snap = go2.snapshot_states(env, rows)
        other.reset(seed=7)
        restored = other.restore(snap, np.arange(2))
        for k, v in env.observations.items():
            np.testing.assert_array_equal(restored[k], v[rows])
        plan = (0.3 * rng.standard_normal((2, 5, 12))).astype(np.float32)
        twice = go2.true_returns(snap, np.array([0, 0, 1, 1]), plan[[0, 0, 1, 1]], gamma=GAMMA, seed=1)
        assert twice[0] == twice[1] and twice[2] == twice[3] and twice[0] != twice[2]
        ret, disc = np.zeros(2), 1.0
        for t in range(5):
            full = np.zeros((3, 12), np.float32)
            full[rows] = plan[:, t]
            step, mine = env.step(full), other.step(plan[:, t])
            for k in step.obs:
                np.testing.assert_array_equal(mine.obs[k], step.obs[k][rows])
            np.testing.assert_array_equal(mine.reward, step.reward[rows])
            assert not step.terminated[rows].any()
            ret += disc * step.reward[rows]
            disc *= GAMMA
        critic = load_expert_set(resolve_experts("go2")).critic
        value = critic({k: v[rows] for k, v in step.obs.items()})
    finally:
        env.close()
        other.close()
    assert np.abs(value).min() > 0.1  # the bootstrap is a real share of the return
    np.testing.assert_allclose(twice[[0, 2]], ret + disc * value, rtol=1e-5)


def walked_snapshot(go2: Any) -> Any:
    """Both rows of a 2-env Go2 after 28 standing steps from seed 3, cloned."""
    env = go2.make_env(2, 3)
    try:
        env.reset(seed=3)
        for _ in range(28):
            env.step(np.zeros((2, 12)))
        return go2.snapshot_states(env, np.arange(2))
    finally:
        env.close()


def test_go2_true_returns_tell_candidates_apart(go2: Any) -> None:
    rng = np.random.default_rng(1)
    snap = walked_snapshot(go2)
    calm = np.zeros((2, 4, 12), np.float32)
    wild = (1.5 * rng.standard_normal((2, 4, 12))).astype(np.float32)  # violent joint targets
    returns = go2.true_returns(snap, np.array([0, 1, 0, 1]), np.concatenate([calm, wild]), gamma=GAMMA, seed=0)
    assert np.isfinite(returns).all()
    assert (returns[:2] > returns[2:]).all(), returns  # torque, acceleration and action-rate penalties
    assert np.abs(returns[:2] - returns[2:]).min() > 1e-3


def test_go2_true_return_parts_add_up_and_name_where_a_fall_ends_the_return(go2: Any) -> None:
    """The split that ``simdist mechanism --split`` reports: horizon + tail is the true return, the reward terms
    add up to the horizon part, and a candidate that falls has no tail."""
    rng = np.random.default_rng(2)
    snap = walked_snapshot(go2)
    calm = np.zeros((2, 6, 12), np.float32)
    wild = np.repeat((4.0 * rng.standard_normal((2, 1, 12))).astype(np.float32), 40, axis=1)  # a crash
    rows = np.array([0, 1])
    for plan in (calm, wild):
        parts = go2.true_return_parts(snap, rows, plan, gamma=GAMMA, seed=0)
        total = go2.true_returns(snap, rows, plan, gamma=GAMMA, seed=0)
        np.testing.assert_allclose(parts["total"], total)
        np.testing.assert_allclose(parts["horizon"] + parts["tail"], total, rtol=1e-9)
        terms = sum(v for k, v in parts.items() if k.startswith("reward/"))
        np.testing.assert_allclose(terms, parts["horizon"], rtol=1e-4, atol=1e-6)
    calm_parts = go2.true_return_parts(snap, rows, calm, gamma=GAMMA, seed=0)
    assert (calm_parts["fell"] == 0).all() and (np.abs(calm_parts["tail"]) > 0.1).all()
    assert (calm_parts["fall_step"] == 6).all()
    wild_parts = go2.true_return_parts(snap, rows, wild, gamma=GAMMA, seed=0)
    assert (wild_parts["fell"] == 1).all() and (wild_parts["tail"] == 0).all()
    assert (wild_parts["fall_step"] < 40).all()


def test_split_report_names_the_part_that_ranks() -> None:
    """A prediction whose value term ranks the true tail and whose reward part is noise: ρ value 1, ρ reward
    about 0; the spread share follows the parts' variances."""
    from simdist.diagnostics.mechanism import split_report, split_truth

    rng = np.random.default_rng(0)
    horizon = 0.01 * rng.standard_normal((6, 16))
    tail = rng.standard_normal((6, 16))
    parts = {"horizon": horizon, "tail": tail, "total": horizon + tail, "fell": np.zeros((6, 16)),
             "reward/a": horizon}
    report = split_report(rng.standard_normal((6, 16)), 2.0 * tail + 5.0, parts)
    assert report["rho_value"]["mean"] == pytest.approx(1.0)
    assert abs(report["rho_reward"]["mean"]) < 0.3
    assert report["value_error"]["mean"] > 0.5  # twice the tail's spread: ranks, but is off in scale
    assert report["value_offset"]["mean"] == pytest.approx(5.0 + tail.mean())  # its level: 2 tail + 5 - tail
    truth = split_truth(parts)
    assert truth["tail_share"]["mean"] > 0.99 and truth["fall_rate"]["mean"] == 0.0
    assert truth["term_shares"]["a"]["mean"] < 0.01


def test_split_is_refused_before_any_work_on_a_task_that_cannot_split(capsys: pytest.CaptureFixture[str]) -> None:
    from simdist.tools.mechanism import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--task", "ur5e-peg", "--real", "peg-real", "--model", "a=simdist/ur5e-peg", "--split"])
    assert exit_info.value.code == 2
    assert "--split: task 'ur5e-peg' cannot split its true returns" in capsys.readouterr().err
