"""How the dynamics predicts the candidates' differences (:mod:`simdist.diagnostics.response`): the split of the
latent error into its level and its response on known arrays, open-loop observations from cloned states equal
to stepping the original env (toy and UR5e), and the measurement end to end on the toy."""

from __future__ import annotations

import numpy as np
import pytest

from simdist.diagnostics.mechanism import MechanismConfig, run_mechanism
from simdist.diagnostics.response import response_report
from simdist.tasks import make_task
from simdist.workflows.rollout import open_loop_observations
from tests.test_mechanism_tasks import _toy_agent, stepped_toy_env


def _latents(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(6, 5, 4, 3))


def test_a_perfect_prediction_has_no_error_and_a_unit_gain() -> None:
    y = _latents()
    r = response_report(y.copy(), y)
    assert r["latent_error"]["mean"] == 0.0 and r["response_unexplained"]["mean"] == 0.0
    assert r["response_gain"]["mean"] == pytest.approx(1.0) and r["response_cosine"]["mean"] == pytest.approx(1.0)


def test_an_offset_is_level_error_and_leaves_the_response_exact() -> None:
    y = _latents()
    r = response_report(y + 0.5, y)
    assert r["offset_error"]["mean"] == pytest.approx(0.25) and r["latent_error"]["mean"] == pytest.approx(0.25)
    assert r["response_error"]["mean"] == pytest.approx(0.0, abs=1e-12)
    assert r["response_unexplained"]["mean"] == pytest.approx(0.0, abs=1e-12)


def test_a_prediction_that_ignores_the_actions_explains_none_of_the_response() -> None:
    y = _latents()
    same = np.repeat(y.mean(1, keepdims=True), y.shape[1], axis=1)  # right level, no response
    r = response_report(same, y)
    assert r["offset_error"]["mean"] == pytest.approx(0.0, abs=1e-12)
    assert r["response_unexplained"]["mean"] == pytest.approx(1.0)
    assert r["response_gain"]["mean"] == pytest.approx(0.0)
    half = response_report(y.mean(1, keepdims=True) + 0.5 * (y - y.mean(1, keepdims=True)), y)
    assert half["response_gain"]["mean"] == pytest.approx(0.5) and half["response_unexplained"]["mean"] == \
        pytest.approx(0.25)


def test_a_state_whose_candidates_barely_differ_cannot_dominate_the_pooled_ratios() -> None:
    y = _latents()
    y[0] = y[0].mean(0, keepdims=True) + 1e-6 * (y[0] - y[0].mean(0, keepdims=True))  # its candidates ~ the same
    noise = np.random.default_rng(5).normal(size=y.shape)
    r = response_report(y + 0.1 * noise, y)
    assert 0.0 < r["response_unexplained"]["mean"] < 0.1  # ~0.01 pooled; a mean of per-state ratios: ~10^9
    assert r["per_state"]["true_variance"][0] < 1e-10 and len(r["per_state"]["response_error"]) == 6


def test_the_pooled_ratio_and_its_interval() -> None:
    from simdist.evaluation import ratio_bootstrap_ci

    est = ratio_bootstrap_ci([1.0, 2.0, 3.0], [2.0, 4.0, 6.0])
    assert est.mean == est.low == est.high == pytest.approx(0.5)
    spread = ratio_bootstrap_ci([1.0, 0.0, 5.0, 2.0], [1.0, 1.0, 2.0, 1.0])
    assert spread.mean == pytest.approx(1.6) and spread.low < spread.mean < spread.high
    with pytest.raises(ValueError, match="pair"):
        ratio_bootstrap_ci([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="confidence"):
        ratio_bootstrap_ci([1.0], [2.0], confidence=1.5)


def test_mismatched_or_non_finite_latents_are_refused() -> None:
    y = _latents()
    with pytest.raises(ValueError, match="same"):
        response_report(y[:, :3], y)
    bad = y.copy()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        response_report(bad, y)


def test_toy_open_loop_observations_are_the_original_env_stepped() -> None:
    task = make_task("toy-reach", profile="real")  # latency: the clone carries the actions in flight
    rng = np.random.default_rng(0)
    env = stepped_toy_env(task, 3, rng)
    try:
        rows = np.array([2, 0])
        snap = task.snapshot_states(env, rows)
        plan = rng.uniform(-1, 1, (2, 5, 2)).astype(np.float32)
        seen = open_loop_observations(task, snap, np.array([0, 1, 1]), plan[[0, 1, 1]], seed=3)
        full = np.zeros((3, 2), np.float32)
        for t in range(5):
            full[rows] = plan[:, t]
            step = env.step(full)
            np.testing.assert_array_equal(seen["state"][:2, t], step.obs["state"][rows])
    finally:
        env.close()
    np.testing.assert_array_equal(seen["state"][1], seen["state"][2])  # the same candidate twice: the same run


def test_ur5e_open_loop_observations_are_the_original_env_stepped() -> None:
    task = make_task("ur5e-peg", profile="peg-real")
    env = task.make_env(2, 0, real=True)
    try:
        env.reset(seed=0)
        rng = np.random.default_rng(1)
        for _ in range(3):
            env.step(rng.uniform(-0.3, 0.3, (2, 7)).astype(np.float32))
        snap = task.snapshot_states(env, np.array([1, 0]))
        plan = rng.uniform(-0.3, 0.3, (2, 3, 7)).astype(np.float32)
        seen = open_loop_observations(task, snap, np.array([0, 1]), plan, seed=0)
        for t in range(3):
            step = env.step(plan[[1, 0], t])
            for key in ("proprio", "object"):
                np.testing.assert_allclose(seen[key][:, t], step.obs[key][[1, 0]], atol=1e-6)
    finally:
        env.close()


def test_go2_open_loop_observations_are_the_original_env_stepped() -> None:
    task = make_task("go2", profile="ptfe-slope-3deg")  # actuation delay 1 step: the queue is cloned too
    rng = np.random.default_rng(0)
    env = task.make_env(2, 0)
    try:
        env.reset(seed=0)
        for _ in range(30):  # past the 25 standing steps
            env.step(0.2 * rng.standard_normal((2, 12)))
        snap = task.snapshot_states(env, np.array([1, 0]))
        plan = (0.3 * rng.standard_normal((2, 3, 12))).astype(np.float32)
        seen = open_loop_observations(task, snap, np.array([0, 1]), plan, seed=4)
        for t in range(3):
            step = env.step(plan[[1, 0], t])
            for key, value in step.obs.items():
                np.testing.assert_array_equal(seen[key][:, t], value[[1, 0]])
    finally:
        env.close()


def test_toy_response_end_to_end_with_untrained_models() -> None:
    task = make_task("toy-reach", profile="real")
    task.expert_steps = 20
    agent, other = _toy_agent(0), _toy_agent(1)
    cfg = MechanismConfig(states=4, candidates=5, every=2, skip=1, num_envs=2, seed=0)
    report = run_mechanism(task, agent, {"a": agent, "b": other}, cfg, response=True)
    for name in ("a", "b"):
        r = report["models"][name]["response"]
        assert r["states"] == 4 and r["candidates"] == 5
        assert r["true_response"]["mean"] > 0  # the candidates reach different observations
        total = r["offset_error"]["mean"] + r["response_error"]["mean"]
        assert total == pytest.approx(r["latent_error"]["mean"], rel=1e-9)
    assert report["models"]["a"]["response"] != report["models"]["b"]["response"]


def test_response_is_refused_before_any_work_on_a_task_that_cannot_run_candidates(
        capsys: pytest.CaptureFixture[str]) -> None:
    from simdist.tools.mechanism import main

    with pytest.raises(SystemExit):
        main(["--task", "gym:Pendulum-v1", "--real", "lag1", "--model", "a=simdist/go2-slope", "--response"])
    assert "--response: task 'gym:Pendulum-v1' cannot run open-loop candidates" in capsys.readouterr().err
