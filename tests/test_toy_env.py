"""The ``toy-reach`` MuJoCo task and its scripted policies."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simdist.components.tasks.toy_reach import (
    ToyReachEnv,
    expert_policy,
    reward_fn,
    suboptimal_policies,
)
from simdist.components.tasks.toy_reach import pointmass as pm
from simdist.envs.base import BatchedEnv
from simdist.registry import create


def rollout(env: ToyReachEnv, policy, steps: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    obs = env.reset(seed=seed)
    if hasattr(policy, "reset"):
        policy.reset(np.arange(env.num_envs))
    states, rewards = [obs["state"]], []
    for _ in range(steps):
        res = env.step(policy(obs))
        obs = res.obs
        states.append(obs["state"])
        rewards.append(res.reward)
    return np.stack(states), np.stack(rewards)


def test_protocol_shapes_and_registry() -> None:
    env = create("env", "toy-reach", num_envs=5, seed=1)
    assert isinstance(env, BatchedEnv)
    assert env.dt == pytest.approx(0.1)
    obs = env.reset()
    assert set(obs) == {"state"} and obs["state"].shape == (5, 4) and obs["state"].dtype == np.float32
    res = env.step(np.zeros((5, 2), np.float32))
    assert res.obs["state"].shape == (5, 4)
    assert res.reward.shape == (5,) and res.reward.dtype == np.float32
    assert res.terminated.dtype == bool and res.truncated.dtype == bool
    assert res.info["diverged"].shape == (5,)
    assert env.action_spec.shape == (2,) and env.action_spec.low == -1.0 and env.action_spec.high == 1.0
    with pytest.raises(ValueError):
        ToyReachEnv(2, variant="mars")


def test_seed_reproducibility_and_partial_reset() -> None:
    a, b = ToyReachEnv(4, seed=0), ToyReachEnv(4, seed=123)
    rng = np.random.default_rng(0)
    acts = rng.uniform(-1, 1, (20, 4, 2)).astype(np.float32)
    traj = []
    for env in (a, b):
        obs = [env.reset(seed=7)["state"]]
        obs += [env.step(u).obs["state"] for u in acts]
        traj.append(np.stack(obs))
    np.testing.assert_array_equal(traj[0], traj[1])
    assert not np.allclose(a.reset(seed=8)["state"], traj[0][0])

    before = a.reset(seed=3)["state"].copy()
    after = a.reset(ids=np.array([1]))["state"]
    np.testing.assert_array_equal(after[[0, 2, 3]], before[[0, 2, 3]])
    assert not np.allclose(after[1], before[1])


def test_truncation_without_auto_reset() -> None:
    env = ToyReachEnv(3, seed=0, episode_length=10)
    obs = env.reset(seed=0)
    for t in range(10):
        res = env.step(expert_policy()(obs))
        obs = res.obs
        assert res.truncated.all() == (t == 9)
    assert not res.terminated.any()
    # step after the limit keeps going from the same state (no auto-reset)
    nxt = env.step(np.zeros((3, 2))).obs["state"]
    assert np.abs(nxt[:, :2] - obs["state"][:, :2]).max() < 0.05


def test_real_variant_physics_differ() -> None:
    sim, real = ToyReachEnv(4, variant="sim", seed=0), ToyReachEnv(4, variant="real", seed=0)
    assert np.all(real.mass == 1.0)  # before reset, nominal
    sim.reset(seed=5)
    real.reset(seed=5)
    assert (sim.mass.max() < 1.3) and np.all(real.mass == pm.REAL_MASS)
    pos = np.zeros((4, 2))
    s_obs, r_obs = sim.set_state(pos, pos, goal=pos), real.set_state(pos, pos, goal=pos)
    np.testing.assert_array_equal(s_obs["state"], r_obs["state"])
    u = np.tile([[0.6, 0.3]], (4, 1))
    for _ in range(25):
        s, r = sim.step(u).obs["state"], real.step(u).obs["state"]
    assert np.abs(s - r).max() > 0.1
    # zero action: the real puck drifts down the slope, the sim one stays
    sim.set_state(pos, pos)
    real.set_state(pos, pos)
    for _ in range(25):
        s, r = sim.step(np.zeros((4, 2))).obs["state"], real.step(np.zeros((4, 2))).obs["state"]
    assert np.abs(s[:, :2]).max() < 1e-6 and r[:, 0].min() > 0.1


def test_domain_randomisation_range_excludes_real() -> None:
    env = ToyReachEnv(64, seed=0)
    env.reset(seed=0)
    assert pm.SIM_MASS[0] <= env.mass.min() and env.mass.max() <= pm.SIM_MASS[1] < pm.REAL_MASS
    assert env.mass.std() > 0.05 and env.friction.std() > 0.005
    meta = env.episode_meta(np.array([0, 3]))
    assert meta[1]["mass"] == pytest.approx(env.mass[3]) and meta[0]["variant"] == "sim"


def test_expert_reaches_goal_in_sim_and_beats_suboptimal() -> None:
    env = ToyReachEnv(16, seed=0)
    states, rewards = rollout(env, expert_policy(), 60, seed=1)
    dist = np.linalg.norm(states[-1, :, :2], axis=1)
    assert dist.max() < 0.1
    assert np.abs(states[-1, :, 2:]).max() < 0.05
    expert_return = rewards.sum(0).mean()
    for pol in suboptimal_policies():
        assert rollout(env, pol, 60, seed=1)[1].sum(0).mean() < expert_return, pol.name
    # the unknown slope leaves a steady-state error in "real"
    real_states, real_rewards = rollout(ToyReachEnv(16, variant="real", seed=0), expert_policy(), 60, seed=1)
    assert np.linalg.norm(real_states[-1, :, :2], axis=1).mean() > 2 * dist.mean()
    assert real_rewards.sum(0).mean() < expert_return


def test_reward_on_hand_made_states() -> None:
    rel = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 0.0]])
    act = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, -1.0]])
    np.testing.assert_allclose(reward_fn(rel, act), 0.1 * np.array([3.0, 3.0 - 5.0, 3.0 - 0.2]), rtol=1e-6)
    env = ToyReachEnv(2, seed=0)
    env.reset(seed=0)
    pos, vel = np.array([[0.3, 0.0], [1.99, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]])
    env.set_state(pos, vel, goal=np.zeros((2, 2)))
    res = env.step(np.zeros((2, 2)))
    assert res.reward[0] == pytest.approx(0.1 * (3.0 - 0.3), abs=5e-3)
    assert not res.terminated[0] and res.terminated[1] and not res.truncated[1]


def test_lagged_policy_resets_per_env() -> None:
    lag = next(p for p in suboptimal_policies() if p.name == "pd_lag")
    s1 = {"state": np.ones((2, 4), np.float32)}
    s2 = {"state": np.zeros((2, 4), np.float32)}
    first = lag(s1)
    assert np.allclose(lag(s2), first)  # still acting on the old observation
    lag.reset(np.array([1]))
    out = lag(s2)
    np.testing.assert_allclose(out[1], 0.0)
    np.testing.assert_allclose(out[0], first[0])


def test_variants_are_profiles(tmp_path: Path) -> None:
    from simdist.components.tasks.toy_reach.profiles import ToyProfile, builtin_profiles, load_profile
    from simdist.profiles import ProfileError
    from simdist.tasks import make_task

    assert builtin_profiles() == ["lag", "real", "sim"]
    real, sim = load_profile("real"), load_profile("sim")
    assert (real.tilt, real.mass_scale * pm.NOMINAL_MASS, real.friction) == (pm.REAL_TILT, pm.REAL_MASS,
                                                                              pm.REAL_FRICTION)
    assert (sim.tilt, sim.mass_scale, sim.friction) == (0.0, None, None)
    a, b = ToyReachEnv(3, variant="real", seed=0), ToyReachEnv(3, profile=real, seed=0)
    np.testing.assert_array_equal(a.reset(seed=2)["state"], b.reset(seed=2)["state"])
    np.testing.assert_array_equal(a.step(np.ones((3, 2))).obs["state"], b.step(np.ones((3, 2))).obs["state"])
    # a custom profile: heavier only; friction keeps the simulator's randomisation
    path = tmp_path / "heavy.yaml"
    path.write_text("mass_scale: 2.0\ntilt: -0.1\n")
    env = ToyReachEnv(8, profile=path, seed=0)
    env.reset(seed=0)
    assert env.variant == "heavy" and np.all(env.mass == 2.0)
    assert pm.SIM_FRICTION[0] <= env.friction.min() < env.friction.max() <= pm.SIM_FRICTION[1]
    assert env.models[0].opt.gravity[0] == pytest.approx(9.81 * np.sin(-0.1))
    assert env.episode_meta(np.array([0]))[0]["tilt"] == -0.1
    assert make_task("toy-reach", profile=str(path)).profile_name == "heavy"
    path.write_text("mass_scale: 0\n")
    with pytest.raises(ProfileError, match=r"heavy.yaml: mass_scale = 0 is out of range \(0, 10\]"):
        make_task("toy-reach", profile=str(path))
    with pytest.raises(ProfileError, match="unknown reality profile 'mars'; built-ins: lag, real, sim"):
        make_task("toy-reach", profile="mars")
    with pytest.raises(ProfileError, match="tilt = 1 is out of range"):
        ToyProfile(tilt=1)
