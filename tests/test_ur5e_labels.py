"""The UR5e value-label gate: prefix-then-continuation equals the one-shot continuation, TD(λ) targets, the
oracle's ceiling, and the command's bad input."""

from __future__ import annotations

import numpy as np
import pytest

from results.ur5e import label_gate as L
from simdist.components.tasks.ur5e.assembly import PegAssembly
from simdist.components.tasks.ur5e.env import ArmEnvConfig, UR5eEnv
from simdist.components.tasks.ur5e.expert import make_expert
from simdist.components.tasks.ur5e.value import continuation_returns, run_prefix, snapshot
from simdist.rows import take_rows


def make_env(n: int, seed: int) -> UR5eEnv:
    return UR5eEnv(PegAssembly(), n, ArmEnvConfig(reset_mix=(1, 0, 0, 0)), seed=seed)


def test_the_prefix_return_plus_the_continuation_from_its_end_state_is_the_one_shot_return():
    env = make_env(4, 0)
    obs = env.reset(seed=0)
    expert = make_expert(PegAssembly())
    for _ in range(6):
        obs = env.step(expert(obs)).obs
    snap = snapshot(env, np.arange(4))
    env.close()
    prefix = np.random.default_rng(0).uniform(-1, 1, (4, 5, 7)).astype(np.float32)
    one_shot = continuation_returns(make_env, lambda: make_expert(PegAssembly()), snap, prefix=prefix, horizon=30)
    ret, end, end_obs, ended = run_prefix(make_env, snap, prefix)
    rest = continuation_returns(make_env, lambda: make_expert(PegAssembly()), end, horizon=25)
    assert not ended.any() and end_obs["proprio"].shape == (4, 29)
    np.testing.assert_allclose(ret + 0.99 ** 5 * rest, one_shot, rtol=1e-4, atol=1e-4)
    # a bootstrap adds the discounted value of the rows still running after the horizon
    boot = continuation_returns(make_env, lambda: make_expert(PegAssembly()), end, horizon=25,
                                bootstrap=lambda o: np.full(len(o["proprio"]), 10.0))
    np.testing.assert_allclose(boot - rest, 10.0 * 0.99 ** 25, rtol=1e-5)


def test_lambda_returns_are_monte_carlo_at_lambda_one_and_td0_at_zero():
    r = np.array([[1.0], [2.0], [3.0]])
    tr = {"r": r, "tail": np.zeros_like(r), "done": np.array([[False], [False], [True]])}
    v = np.full_like(r, 100.0)
    np.testing.assert_allclose(L.lambda_returns(tr, v, 0.5, 1.0)[:, 0], [1 + 0.5 * 2 + 0.25 * 3, 2 + 0.5 * 3, 3])
    np.testing.assert_allclose(L.lambda_returns(tr, v, 0.5, 0.0)[:, 0], [51, 52, 3])


@pytest.mark.slow
def test_the_ceiling_ranks_perfectly_and_the_gate_reports_every_method(tmp_path):
    from simdist.tasks import make_task

    task = make_task("ur5e-peg", profile="sim", grid="narrow")
    report = L.run_gate(task, L.GateConfig(states=3, candidates=4, num_envs=3), cache=tmp_path, critic_envs=2,
                        critic_steps=20, larger=2, td_envs=2, td_steps=20, mc_horizons=(3,))
    ceiling = report["methods"]["ceiling: Monte-Carlo V^e to the end"]
    assert ceiling["spearman"]["mean"] == pytest.approx(1.0)
    assert len(report["methods"]) == 9  # none, the ceiling, 4 critics, 2 TD(λ), one n-step MC
    assert report["cheapest_passing"] is not None
    assert (tmp_path / "critic-states-4x20.npz").is_file()


def test_bad_options_exit_2(capsys):
    with pytest.raises(SystemExit) as err:
        L.main(["--states", "0", "--out", "x.json"])
    assert err.value.code == 2 and "states" in capsys.readouterr().err


@pytest.mark.slow
def test_the_continuation_value_option_labels_a_tiny_dataset(tmp_path):
    from simdist.components.tasks.ur5e.data import generate_ur5e
    from simdist.data.shards import iter_episodes
    from simdist.tasks import make_task

    task = make_task("ur5e-peg", profile=None)
    kw = dict(num_envs=4, transitions=300, seed=0, progress=False, critic_envs=4, critic_steps=20, critic_epochs=5)
    generate_ur5e(task, str(tmp_path / "critic"), **kw)
    summary = generate_ur5e(task, str(tmp_path / "mc"), values="continuation", value_horizon=3, **kw)
    assert summary["episodes"] > 0
    a = next(iter(iter_episodes(str(tmp_path / "critic"), shuffle_shards=False)))
    b = next(iter(iter_episodes(str(tmp_path / "mc"), shuffle_shards=False)))
    np.testing.assert_array_equal(a.actions, b.actions)  # the same episode, other labels
    assert np.isfinite(b.values).all() and not np.allclose(a.values, b.values)
    with pytest.raises(ValueError, match="values"):
        generate_ur5e(task, str(tmp_path / "bad"), values="oracle", **kw)


def test_a_continuation_steps_only_the_rows_still_running_and_labels_each_row_as_alone():
    env = make_env(2, 0)
    env.reset(seed=0)
    before = env.qpos.copy()
    env.active = np.array([True, False])
    env.step(np.ones((2, 7), np.float32))
    assert not np.allclose(env.qpos[0], before[0]) and np.array_equal(env.qpos[1], before[1])
    env.active = None
    expert = make_expert(PegAssembly())
    obs = env.reset(seed=1)
    for _ in range(4):
        obs = env.step(expert(obs)).obs
    env.step(np.array([[0, 0, 1, 0, 0, 0, -1], [1, -1, -1, 0, 0, 0, 1]], np.float32))  # the rows part ways
    snap = snapshot(env, np.arange(2))
    env.close()
    both = continuation_returns(make_env, lambda: make_expert(PegAssembly()), snap, horizon=40)
    alone = [continuation_returns(make_env, lambda: make_expert(PegAssembly()), take_rows(snap, np.array([i])),
                                  horizon=40)[0] for i in range(2)]
    np.testing.assert_allclose(both, alone, rtol=1e-6)
