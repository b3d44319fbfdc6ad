"""The official environment's conventions in the Go2 env: the foot term the official experts read (PhysX's
incoming joint wrench on the foot, in the foot's frame) and the IsaacLab DC-motor torque-speed limit."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

import simdist.components.tasks.go2.robot as R
from simdist import build_controller, make_task
from simdist.components.tasks.go2.env import PRIVILEGED_WRENCH, Go2Env
from simdist.components.tasks.go2.kinematics import base_to_foot

OFFICIAL_EXPERT = Path(__file__).resolve().parents[1] / "hub" / "experts" / "go2-official"


def test_base_to_foot_is_the_calf_frame_of_the_mujoco_model():
    env = Go2Env(1, randomize=False, seed=0, nthread=1)
    data = mujoco.MjData(env.model)
    rng = np.random.default_rng(0)
    data.qpos[:3] = [0.1, -0.2, 0.4]
    quat = rng.normal(size=4)
    data.qpos[3:7] = quat / np.linalg.norm(quat)
    data.qpos[7:19] = R.DEFAULT_JOINT_POS + rng.uniform(-0.4, 0.4, 12)
    mujoco.mj_kinematics(env.model, data)
    base = data.xmat[env.model.body("base").id].reshape(3, 3)
    v = rng.normal(size=(1, 4, 3))
    got = base_to_foot(data.qpos[None, 7:19], v)[0]
    for i, leg in enumerate(R.LEGS):
        calf = data.xmat[env.model.body(f"{leg}_calf").id].reshape(3, 3)
        np.testing.assert_allclose(got[i], (base.T @ calf).T @ v[0, i], atol=1e-12)


def test_official_foot_term_carries_the_robot_as_the_calf_pushes_down():
    env = Go2Env(2, randomize=False, command_mode="fixed", fixed_command=(0.0, 0.0, 0.0), seed=0, nthread=1)
    env.reset()
    for _ in range(50):
        env.step(np.zeros((2, 12), np.float32))
    obs = env.observations
    ours = obs["privileged"][:, PRIVILEGED_WRENCH].reshape(2, 4, 6)
    official = obs["privileged_official"][:, PRIVILEGED_WRENCH].reshape(2, 4, 6)
    rest = np.ones(433, bool)
    rest[PRIVILEGED_WRENCH] = False
    np.testing.assert_array_equal(obs["privileged"][:, rest], obs["privileged_official"][:, rest])
    # standing level: the ground pushes each foot up (base frame +z); the calf pushes it down with the same
    # force (less the foot's weight), which in the foot frame has the same length
    assert (ours[..., 2] > 2.0).all()
    q = (obs["privileged"][:, 12:24] + R.DEFAULT_JOINT_POS)
    expected = base_to_foot(q, -ours[..., :3] + [0.0, 0.0, 0.1 * 9.81 * 0.04])
    np.testing.assert_allclose(official[..., :3], expected, atol=2e-3)  # standing level: base ≈ world axes
    total = np.linalg.norm(ours[..., :3].sum(1), axis=1) * 10
    mass = env.model.body_subtreemass[env.model.body("base").id]
    np.testing.assert_allclose(total, mass * 9.81, rtol=0.05)


def test_the_official_expert_reads_the_official_group_and_walks():
    expert = build_controller(f"expert:{OFFICIAL_EXPERT}")
    assert expert.obs_key == "privileged_official"
    task = make_task("go2", terrain="flat", course_length=2.0, speeds=(0.5,), time_factor=1.0, max_steps=150)
    result = task.evaluate(expert, trials=2, seed=0)
    assert min(result.values) > 0.5  # 3 s walking at 0.5 m/s, no fall

    def contact_reader(obs):  # the same expert fed simdist's contact term instead: it falls
        priv = obs["privileged_official"].copy()
        priv[:, PRIVILEGED_WRENCH] = obs["privileged"][:, PRIVILEGED_WRENCH]
        return expert({**obs, "privileged_official": priv})

    assert max(task.evaluate(contact_reader, trials=2, seed=0).values) < 0.3


def test_velocity_limit_is_the_dc_motor_torque_speed_line():
    env = Go2Env(3, randomize=False, command_mode="fixed", seed=0, nthread=1, velocity_limit=30.0)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        env.step(rng.normal(0, 3, (3, 12)).astype(np.float32))
        lo, hi = env.m_forcerange[:, :, 0], env.m_forcerange[:, :, 1]  # the range of the last physics step
        assert (env.actuator_force <= hi + 1e-9).all() and (env.actuator_force >= lo - 1e-9).all()
    env._torque_speed_limit()
    v = env.qvel[:, 6:18]
    np.testing.assert_allclose(env.m_forcerange[:, :, 1], np.clip(R.TORQUE_LIMIT * (1 - v / 30.0), 0, R.TORQUE_LIMIT))
    np.testing.assert_allclose(env.m_forcerange[:, :, 0], np.clip(R.TORQUE_LIMIT * (-1 - v / 30.0), -R.TORQUE_LIMIT, 0))
    assert np.abs(env.m_forcerange[:, :, 1] - R.TORQUE_LIMIT).max() > 0.5  # the limit moved with the speed
    with pytest.raises(ValueError, match="velocity_limit"):
        Go2Env(1, velocity_limit=0.0)


def test_a_profile_sets_the_velocity_limit():
    env = Go2Env(1, profile={"course": "flat", "course_length": 5.0, "velocity_limit": 30.0}, seed=0, nthread=1)
    assert env.velocity_limit == 30.0
    assert Go2Env(1, seed=0, nthread=1).velocity_limit is None
