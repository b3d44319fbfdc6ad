"""Go2Env: spaces, rewards on hand-made states, terminations, randomisation, seeds."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco.batch", reason="Go2Env needs mujoco >= 4")

from simdist.components.tasks.go2 import Go2Env, make_slope_course
from simdist.components.tasks.go2 import randomization as DR
from simdist.components.tasks.go2 import robot as R
from simdist.components.tasks.go2.commands import CMD_HIGH, CMD_LOW, CommandGenerator
from simdist.components.tasks.go2.rewards import (
    TERM_NAMES,
    RewardInputs,
    desired_stance,
    reward_terms,
    reward_weights,
)
from simdist.components.tasks.go2.terrain import make_grid, sub_terrain
from simdist.envs.base import BatchedEnv
from simdist.registry import _REGISTRY


def _inputs(b: int = 2, **kw) -> RewardInputs:
    z3, z12 = np.zeros((b, 3)), np.zeros((b, 12))
    base = dict(lin_vel=z3, ang_vel=z3, gravity=np.tile([0, 0, -1.0], (b, 1)), command=z3,
                joint_pos_rel=z12, joint_acc=z12, torque=z12, action=z12, last_action=z12,
                foot_contact=np.zeros((b, 4), bool), foot_height=np.zeros((b, 4)), time=np.zeros(b))
    base.update(kw)
    return RewardInputs(**base)


def test_protocol_registry_and_shapes() -> None:
    env = Go2Env(4, seed=0)
    assert isinstance(env, BatchedEnv)
    assert _REGISTRY["env"]["go2"] is Go2Env
    assert env.dt == pytest.approx(0.02)
    obs = env.reset()
    expected = {"proprio": 35, "extero": 315, "privileged": 433, "privileged_official": 433, "command": 3}
    assert {k: v.shape for k, v in obs.items()} == {k: (4, n) for k, n in expected.items()}
    assert {k: s.shape for k, s in env.observation_spec.items()} == {k: (n,) for k, n in expected.items()}
    r = env.step(np.zeros((4, 12), np.float32))
    for k, v in r.obs.items():
        assert v.dtype == np.float32 and v.shape == (4, expected[k]) and np.isfinite(v).all()
    assert r.reward.shape == (4,) and r.reward.dtype == np.float32
    assert r.terminated.dtype == bool and r.truncated.dtype == bool
    assert set(r.info["reward_terms"]) == set(TERM_NAMES) and len(TERM_NAMES) == 11
    np.testing.assert_allclose(sum(r.info["reward_terms"].values()), r.reward, rtol=1e-5, atol=1e-7)


def test_perfect_tracking_gives_maximum_tracking_reward() -> None:
    cmd = np.array([[0.5, 0.2, 0.3], [1.0, -0.3, -0.5]])
    t = reward_terms(_inputs(command=cmd, lin_vel=cmd * [1, 1, 0], ang_vel=cmd * [0, 0, 1]))
    np.testing.assert_allclose(t["track_lin_vel_xy_exp"], 1.0)
    np.testing.assert_allclose(t["track_ang_vel_z_exp"], 1.0)
    off = reward_terms(_inputs(command=cmd, lin_vel=cmd * [1, 1, 0] + [0.5, 0, 0]))
    np.testing.assert_allclose(off["track_lin_vel_xy_exp"], np.exp(-0.25 / 0.25))
    w = reward_weights("official")
    assert w["track_lin_vel_xy_exp"] == 1.5 and w["flat_orientation_l2"] == -4.0


def test_penalties_and_gait_terms() -> None:
    t = reward_terms(_inputs(lin_vel=np.array([[0, 0, 2.0]] * 2), gravity=np.array([[0.6, 0, -0.8]] * 2),
                             joint_pos_rel=np.tile([0.1, 1.0, 1.0], (2, 4))))
    np.testing.assert_allclose(t["lin_vel_z_l2"], 4.0)
    np.testing.assert_allclose(t["flat_orientation_l2"], 0.36)
    np.testing.assert_allclose(t["joint_deviation_hip_l1"], 0.4)  # hips only
    # trot schedule at t=0: FR and RL in stance, FL and RR in swing
    stance = desired_stance(np.array([0.0, 0.25]))
    np.testing.assert_array_equal(stance, [[True, False, False, True], [False, True, True, False]])
    cmd = np.array([[0.5, 0, 0], [0.05, 0, 0]])  # the second is below the 0.1 gate
    good = _inputs(command=cmd, foot_contact=np.array([[1, 0, 0, 1]] * 2, bool),
                   foot_height=np.array([[0, 0.09, 0.09, 0]] * 2))
    for mode in ("corrected", "official"):
        t = reward_terms(good, mode)
        np.testing.assert_allclose(t["gait"], [4.0, 0.0])
    np.testing.assert_allclose(reward_terms(good, "corrected")["feet_height_gait"], [0.0, 0.0])
    np.testing.assert_allclose(reward_terms(good, "official")["feet_height_gait"], [2.0, 0.0])
    assert reward_weights("corrected")["feet_height_gait"] == -20.0
    with pytest.raises(ValueError):
        reward_weights("nope")


def test_flipped_base_terminates_and_env_does_not_autoreset() -> None:
    env = Go2Env(2, randomize=False, seed=0)
    env.reset()
    env.qpos[1, 3:7] = [0.0, 1.0, 0.0, 0.0]  # upside down
    env.qpos[1, 2] = 0.6
    env.batch.forward([1])
    r = env.step(np.zeros((2, 12), np.float32))
    assert not r.terminated[0] and r.terminated[1]
    assert r.info["termination"]["tilt"][1]
    r2 = env.step(np.zeros((2, 12), np.float32))
    assert r2.info["episode_step"][1] == 2  # still running until the caller resets it
    env.reset(ids=np.array([1]))
    assert env.episode_step[1] == 0 and env.episode_step[0] == 2


def test_diverged_physics_is_flagged() -> None:
    env = Go2Env(2, randomize=False, seed=0)
    env.reset()
    env.qvel[0, :] = np.nan
    r = env.step(np.zeros((2, 12), np.float32))
    assert r.info["diverged"][0] and r.terminated[0] and not r.info["diverged"][1]
    assert all(np.isfinite(v).all() for v in r.obs.values())
    env.reset(ids=np.array([0]))
    assert not env.step(np.zeros((2, 12), np.float32)).info["diverged"][0]


def test_timeout_truncates() -> None:
    env = Go2Env(2, randomize=False, episode_length_s=0.1, seed=0)
    env.reset()
    flags = [env.step(np.zeros((2, 12), np.float32)).truncated.copy() for _ in range(5)]
    assert not flags[3].any() and flags[4].all()


def test_randomisation_ranges_respected() -> None:
    env = Go2Env(64, randomize=True, seed=3)
    env.reset()
    p = env.params
    assert (p.friction >= 0.2).all() and (p.friction <= 1.2).all() and p.friction.std() > 0.1
    assert (p.restitution >= 0).all() and (p.restitution <= 0.3).all()
    assert (p.mass_delta >= -1).all() and (p.mass_delta <= 3).all()
    for s in (p.kp_scale, p.kd_scale):
        assert (s >= 0.9).all() and (s <= 1.1).all()
    assert (p.joint_friction >= 0).all() and (p.joint_friction <= 0.05).all()
    # the parameters reach the per-env model
    foot = env.foot_geom_ids
    np.testing.assert_allclose(env.m_friction[:, foot, 0], np.repeat(p.friction[:, None], 4, 1))
    np.testing.assert_allclose(env.m_mass[:, env.base_body_id], R.TRUNK_MASS + p.mass_delta)
    np.testing.assert_allclose(env.m_gain[:, :, 0], R.KP * p.kp_scale)
    np.testing.assert_allclose(env.m_bias[:, :, 2], -R.KD * p.kd_scale)
    np.testing.assert_allclose(env.m_frictionloss[:, 6:], p.joint_friction)
    np.testing.assert_allclose(env.m_solref[:, foot[0], 1], DR.restitution_to_dampratio(p.restitution))
    # initial pose: xy within 0.5 m, joints within 5 % of default
    assert (np.abs(env.spawn_pos[:, :2]) <= 0.5).all()
    ratio = env.qpos[:, 7:19] / R.DEFAULT_JOINT_POS
    assert (ratio >= 0.95 - 1e-9).all() and (ratio <= 1.05 + 1e-9).all()
    # privileged multipliers are mapped to [-1, 1]
    priv = env.observations["privileged"][:, -36:]
    assert (np.abs(priv) <= 1 + 1e-6).all()
    nominal = Go2Env(4, randomize=False, seed=3)
    nominal.reset()
    np.testing.assert_allclose(nominal.params.friction, 0.8)
    np.testing.assert_allclose(nominal.spawn_pos[:, :2], 0.0)


def test_reproducible_under_seed() -> None:
    acts = np.random.default_rng(1).standard_normal((10, 8, 12)).astype(np.float32)

    def rollout(env: Go2Env, seed: int) -> np.ndarray:
        env.reset(seed=seed)
        return np.stack([env.step(a).obs["privileged"] for a in acts])

    a, b = Go2Env(8, seed=5), Go2Env(8, seed=5)
    first = rollout(a, 7)
    np.testing.assert_array_equal(first, rollout(b, 7))
    np.testing.assert_array_equal(first, rollout(a, 7))  # reset(seed) replays
    assert not np.array_equal(first, rollout(a, 8))


def test_height_scan_layout_and_values() -> None:
    slope = make_slope_course(slope_deg=10.0, length=5.0, start=-3.0)  # the base stands on the incline
    env = Go2Env(2, terrain=slope, randomize=False, seed=0)
    env.reset()
    tan = np.tan(np.radians(10.0))
    pos = env.base_pos.copy()
    scan = env.height_scan(pos, np.zeros(2)).reshape(2, 15, 21)  # rows y, cols x (IsaacLab order)
    ground0 = tan * (pos[0, 0] + 3.0)
    expected_x = pos[0, 2] - (ground0 + tan * np.linspace(-0.5, 1.5, 21)) - 0.3
    np.testing.assert_allclose(scan[0, 7], expected_x, atol=2e-3)
    np.testing.assert_allclose(scan[0, :, 5], scan[0, 0, 5], atol=1e-5)  # no change along y
    # yawed by +90 deg: scan x axis now points along world +y, so the slope shows along rows
    turned = env.height_scan(pos, np.full(2, np.pi / 2)).reshape(2, 15, 21)
    np.testing.assert_allclose(turned[0, 7, :], turned[0, 7, 0], atol=1e-5)  # scan x = world y: flat
    assert turned[0, 0, 10] < turned[0, -1, 10]  # scan y = -0.7 is world x + 0.7 (uphill)
    ext = env.observations["extero"]
    assert ext.min() >= -2 and ext.max() <= 2


def test_commands_modes() -> None:
    rng = np.random.default_rng(0)
    gen = CommandGenerator(512, 0.02, "random")
    gen.reset(np.arange(512), rng, np.zeros((512, 2)), np.zeros(512))
    for _ in range(600):  # crosses a 10 s resample
        gen.step(rng, np.zeros((512, 2)), np.zeros(512))
        assert (gen.command >= CMD_LOW - 1e-9).all() and (gen.command <= CMD_HIGH + 1e-9).all()
    assert set(np.unique(gen.kind)) >= {0, 1, 3, 4, 5}
    fixed = CommandGenerator(2, 0.02, "fixed")
    fixed.reset(np.arange(2), rng, np.zeros((2, 2)), np.zeros(2))
    np.testing.assert_allclose(fixed.command, [[0.5, 0, 0]] * 2)
    straight = CommandGenerator(1, 0.02, "straight", speed=0.5)
    straight.reset(np.arange(1), rng, np.zeros((1, 2)), np.zeros(1))
    for _ in range(50):
        straight.step(rng, np.array([[0.2, 0.1]]), np.array([0.1]))
    np.testing.assert_allclose(straight.command[0], [0.5 * 1.0 - 0.2, -0.1, -0.1], atol=1e-9)


def test_terrain_grid_and_curriculum() -> None:
    for kind, d, lo, hi in [("pyramid_stairs", 1.0, 0.2, 10), ("boxes", 1.0, 0.05, 0.2),
                            ("random_rough", 0.0, 0.0, 0.011), ("pyramid_slope", 1.0, 1.0, 1.3)]:
        span = np.ptp(sub_terrain(kind, d, size=8.0))
        assert lo <= span <= hi, (kind, span)
    grid = make_grid(num_rows=3, num_cols=6, tile_size=4.0, seed=0)
    x, y = grid.tile_center(np.array([0, 2]), np.array([0, 5]))
    assert grid.col_types[5] == "inverted_pyramid_slope" and grid.height_at(x, y)[1] < -0.3  # hard pit
    env = Go2Env(4, terrain=grid, terrain_mode="curriculum", seed=0)
    env.reset()
    assert (env.terrain_level == 0).all()
    ground = grid.height_at(env.base_pos[:, 0], env.base_pos[:, 1])
    assert np.all(env.base_pos[:, 2] - ground >= R.NOMINAL_BASE_HEIGHT - 1e-3)
    for _ in range(3):
        env.step(np.zeros((4, 12), np.float32))
    env._cos_sum[:] = [3.0, 3.0, 0.0, 1.5]  # scores 1, 1, 0, 0.5 over 3 steps
    env.terrain_level[:] = [0, 2, 1, 1]
    env.reset(ids=np.arange(4))
    assert env.terrain_level[0] == 1 and env.terrain_level[2] == 0 and env.terrain_level[3] == 1
    assert 0 <= env.terrain_level[1] < 3  # beyond the top: a random level


def test_standing_env_survives_zero_action() -> None:
    env = Go2Env(4, randomize=False, command_mode="fixed", fixed_command=(0.0, 0.0, 0.0), seed=0)
    env.reset()
    for _ in range(100):
        r = env.step(np.zeros((4, 12), np.float32))
        assert not r.terminated.any()
    assert (env.base_pos[:, 2] > 0.2).all()
    assert env.observations["proprio"][:, 8].max() < -0.95  # gravity z: level


def test_rsl_rl_vecenv_adapter() -> None:
    pytest.importorskip("rsl_rl")
    import torch

    from simdist.components.tasks.go2.ppo import Go2VecEnv, ppo_config

    venv = Go2VecEnv(Go2Env(4, seed=0))
    assert venv.get_observations()["policy"].shape == (4, 433)
    venv.episode_length_buf = torch.tensor([0, 0, 0, 999])
    obs, rew, done, extras = venv.step(torch.zeros(4, 12))
    assert obs["policy"].shape == (4, 433) and rew.shape == (4,)
    assert done.tolist() == [0, 0, 0, 1] and extras["time_outs"].tolist() == [False, False, False, True]
    assert venv.episode_length_buf[3] == 0  # auto-reset inside the adapter
    assert ppo_config()["algorithm"]["desired_kl"] == 0.01


def test_height_at_is_safe_at_and_beyond_the_terrain_edge() -> None:
    """A robot at (or past, or NaN beyond) the last grid row must not index outside the height field."""
    from simdist.components.tasks.go2.terrain import make_grid

    terrain = make_grid(num_rows=2, num_cols=2, seed=0)
    x0, x1, y0, y1 = terrain.extent
    xs = np.array([x0, x1, x1 + 5.0, x1 - 1e-7, np.nan, (x0 + x1) / 2], dtype=np.float32)
    ys = np.array([y0, y1, y1 + 5.0, y1 - 1e-7, np.nan, (y0 + y1) / 2], dtype=np.float32)
    h = terrain.height_at(xs, ys)
    assert h.shape == xs.shape and np.isfinite(h).all()
    corner = terrain.heights[-1, -1]
    assert h[1] == pytest.approx(corner, abs=1e-5) and h[2] == pytest.approx(corner, abs=1e-5)


def test_straight_commands_draw_a_speed_per_episode_from_a_range() -> None:
    gen = CommandGenerator(64, 0.02, "straight", speed=(0.1, 0.5))
    gen.reset(np.arange(64), np.random.default_rng(0), np.zeros((64, 2)), np.zeros(64))
    assert 0.1 <= gen.speed.min() < 0.2 and 0.4 < gen.speed.max() <= 0.5
    gen.step(np.random.default_rng(0), np.zeros((64, 2)), np.zeros(64))
    np.testing.assert_allclose(gen.command[:, 0], gen.speed * 0.02)  # x_des - x after one step from rest
    with pytest.raises(ValueError, match="straight speed"):
        CommandGenerator(2, 0.02, "straight", speed=(0.5, 0.1))


def test_train_expert_terrain_mix_option() -> None:
    from simdist.components.tasks.go2.terrain import columns_for
    from simdist.components.tasks.go2.train_expert import parse_proportions

    mix = parse_proportions("boxes=0.5,random_rough=0.25, pyramid_slope=0.25")
    assert mix == {"boxes": 0.5, "random_rough": 0.25, "pyramid_slope": 0.25}
    assert columns_for(12, mix).count("boxes") == 6
    for bad, message in [("boxes", "TYPE=WEIGHT"), ("lava=1", "TYPE=WEIGHT"), ("boxes=x", "not a number"),
                         ("boxes=-1", "negative"), ("boxes=0", "sum to zero")]:
        with pytest.raises(SystemExit, match=message):
            parse_proportions(bad)


def test_walk_starts_stand_still_then_walk_straight_from_where_they_stand() -> None:
    rng = np.random.default_rng(0)
    gen = CommandGenerator(256, 0.02, "random", walk_start_prob=0.3, hold_steps=(10, 41))
    gen.reset(np.arange(256), rng, np.zeros((256, 2)), np.zeros(256))
    ws = gen.kind == 6
    assert 0.2 < ws.mean() < 0.4 and (gen.holding == ws).all()
    assert np.all(gen.command[ws] == 0) and (10 <= gen.hold[ws]).all() and (gen.hold[ws] <= 40).all()
    hold0, held_steps = gen.hold.copy(), np.zeros(256, np.int64)
    pos = np.full((256, 2), 0.3)  # the robot settled somewhere: walking starts there, not at the spawn
    for _ in range(45):
        held_steps += gen.holding
        gen.step(rng, pos, np.full(256, 0.2))
    np.testing.assert_array_equal(held_steps[ws], hold0[ws])  # exactly hold steps of zero action
    assert not gen.holding.any()
    walked = (45 - hold0[ws]) * 0.02  # seconds since walking started
    np.testing.assert_allclose(gen.command[ws, 0], gen.speed[ws] * walked, atol=1e-9)
    np.testing.assert_allclose(gen.command[ws, 1:], 0.0, atol=1e-9)  # origin and heading = where it stood
    assert (0.1 <= gen.speed[ws]).all() and (gen.speed[ws] <= 1.0).all()
    straight = CommandGenerator(4, 0.02, "straight", speed=0.3, walk_start_prob=1.0, hold_steps=(25, 26))
    straight.reset(np.arange(4), rng, np.zeros((4, 2)), np.zeros(4))
    assert straight.holding.all() and np.allclose(straight.speed, 0.3)
    with pytest.raises(ValueError, match="walk_start_prob"):
        CommandGenerator(2, 0.02, "fixed", walk_start_prob=0.5)


def test_walk_start_env_asks_for_zero_actions_and_the_engine_obeys(tmp_path) -> None:
    from simdist.components.tasks.go2.data import EpisodeMetaEnv, go2_dataset_spec
    from simdist.data.engine import generate
    from simdist.data.shards import iter_episodes

    env = EpisodeMetaEnv(Go2Env(4, terrain="flat", walk_start_prob=1.0, walk_start_hold=(5, 6),
                                episode_length_s=0.4, seed=0))

    def expert(obs):
        return np.full((4, 12), 0.3, np.float32)

    s = generate(env, expert, [], out_dir=str(tmp_path), spec=go2_dataset_spec(), steps_per_env=40,
                 expert_prob=1.0, seed=0, progress=False)
    assert abs(s["held_fraction"] - 5 / 20) < 1e-9
    eps = list(iter_episodes(tmp_path, shuffle_shards=False, split_by_node=False, split_by_worker=False))
    assert len(eps) == 8
    for ep in eps:
        assert np.all(ep.actions[:5] == 0) and not ep.expert[:5].any()
        np.testing.assert_allclose(ep.commands[:5], 0.0)
        expert_steps = ep.expert[5:]
        np.testing.assert_allclose(ep.actions[5:][expert_steps], 0.3, rtol=1e-6)  # the expert's action
    assert sum(ep.expert.sum() for ep in eps) > 40
