"""The MjSpec-built Go2: joint order, ranges, masses, PD actuators, standing at home pose."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from simdist.components.tasks.go2 import robot as R


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    return R.build_go2_spec().compile()


def test_joint_and_actuator_order(model: mujoco.MjModel) -> None:
    names = [model.joint(i).name for i in range(1, model.njnt)]
    assert names == list(R.JOINT_NAMES)
    assert names[:3] == ["FR_hip_joint", "FR_thigh_joint", "FR_calf_joint"]
    assert [n.split("_")[0] for n in names[::3]] == ["FR", "FL", "RR", "RL"]
    assert model.nu == 12
    # actuator i drives joint i+1 (joint 0 is the free joint), so ctrl is in Unitree order
    np.testing.assert_array_equal(model.actuator_trnid[:, 0], np.arange(1, 13))
    # joint qpos addresses follow the same order
    np.testing.assert_array_equal(model.jnt_qposadr[1:], np.arange(7, 19))


def test_joint_ranges_in_radians(model: mujoco.MjModel) -> None:
    rng = model.jnt_range[1:].reshape(4, 3, 2)
    for leg in range(4):
        np.testing.assert_allclose(rng[leg, 0], [-1.0472, 1.0472], atol=1e-6)
        np.testing.assert_allclose(rng[leg, 2], [-2.7227, -0.83776], atol=1e-6)
    for leg in (0, 1):
        np.testing.assert_allclose(rng[leg, 1], [-1.5708, 3.4907], atol=1e-6)
    for leg in (2, 3):
        np.testing.assert_allclose(rng[leg, 1], [-0.5236, 4.5379], atol=1e-6)
    assert model.jnt_limited[1:].all()


def test_masses(model: mujoco.MjModel) -> None:
    assert model.body_mass.sum() == pytest.approx(15.206, abs=0.01)
    assert model.body("base").mass[0] == pytest.approx(6.921)
    for leg in R.LEGS:
        assert model.body(f"{leg}_hip").mass[0] == pytest.approx(0.678)
        assert model.body(f"{leg}_thigh").mass[0] == pytest.approx(1.152)
        assert model.body(f"{leg}_calf").mass[0] == pytest.approx(0.154 + 0.087, abs=0.01)
    np.testing.assert_allclose(model.body("FR_hip").pos, [0.1934, -0.0465, 0.0])
    np.testing.assert_allclose(model.body("RL_thigh").pos, [0.0, 0.0955, 0.0])
    np.testing.assert_allclose(model.body("FL_calf").pos, [0.0, 0.0, -0.213])


def test_pd_actuators_and_dynamics_options(model: mujoco.MjModel) -> None:
    np.testing.assert_allclose(model.actuator_gainprm[:, 0], R.KP)
    np.testing.assert_allclose(model.actuator_biasprm[:, :3], np.tile([0.0, -R.KP, -R.KD], (12, 1)))
    np.testing.assert_allclose(model.actuator_forcerange, np.tile([-23.5, 23.5], (12, 1)))
    assert model.opt.timestep == pytest.approx(0.005)
    np.testing.assert_allclose(model.dof_armature[6:], 0.01)
    np.testing.assert_allclose(model.dof_damping[6:], 0.1)
    foot = model.geom("FR_foot")
    assert foot.size[0] == pytest.approx(0.022)
    assert foot.priority[0] == 1


def test_torque_clamp(model: mujoco.MjModel) -> None:
    data = mujoco.MjData(model)
    data.qpos[:] = R.home_qpos(model)
    data.ctrl[:] = R.DEFAULT_JOINT_POS + 5.0  # huge position error
    mujoco.mj_forward(model, data)
    assert np.abs(data.actuator_force).max() == pytest.approx(R.TORQUE_LIMIT)


def test_stands_ten_seconds_with_zero_action(model: mujoco.MjModel) -> None:
    data = mujoco.MjData(model)
    data.qpos[:] = R.home_qpos(model)
    data.ctrl[:] = R.DEFAULT_JOINT_POS  # action 0
    mujoco.mj_forward(model, data)
    min_height, max_tilt = np.inf, 0.0
    for _ in range(int(10.0 / model.opt.timestep)):
        mujoco.mj_step(model, data)
        w, x, y, _z = data.qpos[3:7]
        up_z = 1 - 2 * (x * x + y * y)  # body z axis . world z
        min_height = min(min_height, data.qpos[2])
        max_tilt = max(max_tilt, np.degrees(np.arccos(np.clip(up_z, -1, 1))))
    assert min_height > 0.2
    assert max_tilt < 10.0
    assert np.isfinite(data.qpos).all()
