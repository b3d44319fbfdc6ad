"""The UR5e cell: robot and controller, grids, success test, peg expert, profiles and the task plug-in."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from simdist.components.tasks.ur5e import robot as R
from simdist.components.tasks.ur5e.assembly import PegAssembly
from simdist.components.tasks.ur5e.env import SUCCESS_HOLD, ArmEnvConfig, UR5eEnv, roll_pitch
from simdist.components.tasks.ur5e.expert import make_expert, suboptimal_params
from simdist.components.tasks.ur5e.grids import GRIDS, get_grid
from simdist.profiles import ProfileError
from simdist.tasks import make_task


def _arm_on_table():
    spec = R.build_robot_spec()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[1, 1, 0.05])
    model = spec.compile()
    data = mujoco.MjData(model)
    data.qpos[:6] = R.home_qpos()
    data.ctrl[model.actuator("grip").id] = R.GRIPPER_STROKE
    mujoco.mj_forward(model, data)
    tcp = model.site("tcp").id
    data.mocap_pos[0] = data.site_xpos[tcp]
    data.mocap_quat[0] = R.rotmat_to_quat(data.site_xmat[tcp].reshape(3, 3))
    return model, data, tcp


def test_robot_matches_the_ur5e_figures():
    model = R.build_robot_spec().compile()
    masses = [model.body(n).mass[0] for n in ("shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link",
                                               "wrist_2_link", "wrist_3_link")]
    assert masses == pytest.approx([3.7, 8.393, 2.275, 1.219, 1.219, 0.1889])
    limits = [model.jnt_actfrcrange[model.joint(j).id, 1] for j in R.JOINT_NAMES]
    assert limits == [150, 150, 150, 28, 28, 28]
    assert model.jnt_range[model.joint("elbow_joint").id, 1] == pytest.approx(np.pi)
    grip = model.body("gripper_base").id
    tcp = model.site("tcp")
    assert tcp.bodyid[0] == grip and tcp.pos[2] == pytest.approx(0.1303)
    assert model.opt.timestep == 0.002 and model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    assert model.opt.impratio == 10 and model.opt.noslip_iterations == 3


def test_the_arm_holds_a_pose_for_10_s_and_tracks_a_2_cm_step():
    model, data, tcp = _arm_on_table()
    start = data.site_xpos[tcp].copy()
    drift = 0.0
    for _ in range(5000):  # 10 s
        mujoco.mj_step(model, data)
        drift = max(drift, float(np.linalg.norm(data.site_xpos[tcp] - start)))
    assert drift < 1e-4
    data.mocap_pos[0] = start + [0.02, 0.0, 0.0]
    xs = []
    for _ in range(500):  # 1 s
        mujoco.mj_step(model, data)
        xs.append(data.site_xpos[tcp][0] - start[0])
    xs = np.array(xs)
    assert xs[99] > 0.012  # 60 % of the step within one 5 Hz period
    assert abs(xs[-1] - 0.02) < 0.001 and xs.max() < 0.023  # settles, little overshoot


def test_rotation_conversions_round_trip():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(50, 3))
    v *= (rng.uniform(0, 3.0, 50) / np.linalg.norm(v, axis=1))[:, None]
    m = R.rotvec_to_rotmat(v)
    np.testing.assert_allclose(R.rotmat_to_rotvec(m), v, atol=1e-9)
    np.testing.assert_allclose(R.quat_to_rotmat(R.rotmat_to_quat(m)), m, atol=1e-9)


def test_grids_have_fixed_lattices_of_20_cells_inside_their_squares():
    for grid in GRIDS.values():
        lat = grid.lattice()
        assert lat.shape == (20, 6)
        np.testing.assert_array_equal(lat, grid.lattice())
        half = grid.side / 2
        assert (np.abs(lat[:, :2] - grid.center) < half).all()
        assert np.ptp(lat[:, 0]) == pytest.approx(grid.side * 3 / 4) and np.ptp(lat[:, 1]) == pytest.approx(
            grid.side * 4 / 5)
        assert (np.abs(lat[:, 3:5] - [0.45, 0.25]) <= 0.005).all()
    assert GRIDS["narrow"].side == 0.02 and GRIDS["wide"].side == 0.35
    with pytest.raises(ValueError, match="--grid 'huge'"):
        get_grid("huge")


def test_roll_pitch_ignores_yaw():
    yaw = R.rotvec_to_rotmat(np.array([[0.0, 0.0, 1.2]]))
    assert roll_pitch(yaw)[0] == pytest.approx(0.0, abs=1e-12)
    tilted = yaw @ R.rotvec_to_rotmat(np.array([[0.02, 0.0, 0.0]]))
    assert roll_pitch(tilted)[0] == pytest.approx(0.02, abs=1e-6)


def _peg_env(**kw):
    return UR5eEnv(PegAssembly(), 2, ArmEnvConfig(**kw), seed=0)


def test_success_needs_the_peg_seated_upright_for_5_steps():
    env = _peg_env(grid="narrow")
    env.reset(seed=0)
    asm = env.assembly
    goal, _ = asm.assembled_pose(env)
    # env 0: seated in the hole; env 1: standing on the block's rim next to the opening
    env.qpos[0, asm.qadr:asm.qadr + 7] = [*goal[0], 1, 0, 0, 0]
    env.qpos[1, asm.qadr:asm.qadr + 7] = [*(goal[1] + [0.02, 0.0, 0.0305]), 1, 0, 0, 0]
    env.batch.forward()
    action = np.zeros((2, 7))
    action[:, 6] = -1.0
    ok = []
    for _ in range(SUCCESS_HOLD):
        step = env.step(action)
        ok.append(step.info["success"].copy())
    assert not ok[SUCCESS_HOLD - 2][0] and ok[-1][0] and step.truncated[0]
    assert not any(o[1] for o in ok) and step.info["distance"][1] > 0.0025
    env.close()


def test_success_tolerances_on_hand_made_states():
    asm = PegAssembly()
    state = {"distance": np.array([0.0024, 0.0026, 0.001, 0.001]), "tilt": np.array([0.02, 0.0, 0.024, 0.026])}
    assert asm.success_now(None, state).tolist() == [True, False, True, False]


def test_observations_and_reward_terms():
    env = _peg_env()
    obs = env.reset(seed=0)
    assert {k: v.shape for k, v in obs.items()} == {"proprio": (2, 29), "object": (2, 27), "privileged": (2, 8),
                                                    "physics": (2, env.model.nq + 14)}
    step = env.step(np.zeros((2, 7)))
    assert set(step.info["reward_terms"]) == {"reach", "align", "success", "action", "action_rate",
                                              "joint_velocity", "abnormal"}
    total = sum(step.info["reward_terms"].values())
    np.testing.assert_allclose(total, step.reward, rtol=1e-5, atol=1e-6)
    env.close()


@pytest.mark.parametrize("grid", ["narrow", "wide"])
def test_the_peg_expert_inserts_on_lattice_cells(grid):
    env = UR5eEnv(PegAssembly(), 5, ArmEnvConfig(grid=grid), seed=3)
    expert = make_expert(env.assembly)
    obs = env.reset(seed=3)
    done = np.zeros(5, bool)
    success = np.zeros(5, bool)
    for _ in range(150):
        step = env.step(expert(obs))
        obs = step.obs
        fin = (step.terminated | step.truncated) & ~done
        success[fin] = step.info["success"][fin]
        done |= fin
        if done.all():
            break
    assert success.all(), success
    env.close()


def test_ten_degraded_variants_with_distinct_names():
    names = [p.name for p in suboptimal_params()]
    assert len(names) == 10 == len(set(names)) and "expert" not in names
    with pytest.raises(ValueError, match="unknown scripted policy 'nope'"):
        make_expert(PegAssembly(), "nope")


def test_peg_profiles_are_checked_and_built():
    task = make_task("ur5e-peg")
    assert "peg-real" in task.profiles() and task.profile_name == "peg-real"
    real = task.load_profile("peg-real")
    assert real.clearance < 0.0005 and real.latency_substeps == 20
    with pytest.raises(ProfileError, match="clearance"):
        task.load_profile({"clearance": 0.01})
    with pytest.raises(ProfileError, match="unknown"):
        task.load_profile({"friction_of_the_moon": 1.0})


def test_a_profile_changes_the_physics():
    stiff = UR5eEnv(PegAssembly(), 1, ArmEnvConfig(), seed=0)
    soft = UR5eEnv(PegAssembly(), 1, ArmEnvConfig(),
                   profile=make_task("ur5e-peg").load_profile({"clearance": 0.0002, "joint_friction": 2.0,
                                                               "fixture_stiffness": 500.0}), seed=0)
    walls = [stiff.model.geom("hole_wall_x0"), soft.model.geom("hole_wall_x0")]
    assert walls[1].pos[0] < walls[0].pos[0]  # a tighter hole
    assert soft.model.dof_frictionloss[soft.arm_dadr].tolist() == [2.0] * 6
    assert soft.model.joint("fixture_x").stiffness[0] == 500.0
    stiff.close()
    soft.close()


def test_the_contact_recipe_is_an_option_and_noslip_stays_the_default():
    lacquered = make_task("ur5e-peg").load_profile({"pad_friction": 0.5})
    envs = {c: UR5eEnv(PegAssembly(), 1, ArmEnvConfig(contacts=c), seed=0) for c in ("noslip", "fast", "fast-stiff")}
    envs["default"] = UR5eEnv(PegAssembly(), 1, ArmEnvConfig(), seed=0)
    envs["fast-lacquered"] = UR5eEnv(PegAssembly(), 1, ArmEnvConfig(contacts="fast"), profile=lacquered, seed=0)
    try:
        got = {k: (e.model.opt.noslip_iterations, float(e.model.actuator("grip").gainprm[0]),
                   float(e.model.geom("left_pad").friction[0]), float(e.model.geom("right_pad").friction[0]))
               for k, e in envs.items()}
        solimp = {k: e.model.dof_solimp[e.arm_dadr, 0].tolist() for k, e in envs.items()}
    finally:
        for e in envs.values():
            e.close()
    assert got["default"] == got["noslip"] == (3, 4000.0, 1.2, 1.2)
    assert got["fast"] == pytest.approx((0, 8000.0, 2.0, 2.0))
    assert got["fast-lacquered"][2] == pytest.approx(0.5 * 2.0 / 1.2)  # a profile's pads scale with the recipe
    assert got["fast-stiff"] == got["fast"]
    assert solimp["noslip"] == solimp["fast"] == [0.9] * 6
    assert solimp["fast-stiff"] == [0.99] * 6  # joint friction that does not creep without the no-slip pass
    assert make_task("ur5e-peg").contacts == "noslip" and make_task("ur5e-peg").describe()["contacts"] == "noslip"


def test_a_bad_contact_recipe_is_refused_before_any_work(capsys):
    import argparse

    from simdist import cli
    from simdist.tasks import task_class

    with pytest.raises(ValueError, match="contacts must be one of \\['fast', 'fast-stiff', 'noslip'\\], got 'soft'"):
        make_task("ur5e-peg", contacts="soft")
    with pytest.raises(ValueError, match="contacts"):
        R.RobotConfig.for_contacts("soft")
    for command in ("evaluate", "generate"):
        with pytest.raises(SystemExit) as exit_:
            cli.main([command, "--task", "ur5e-table-leg", "--contacts", "soft", "--out", "unused"])
        assert exit_.value.code == 2 and "--contacts: invalid choice: 'soft'" in capsys.readouterr().err
        parser = argparse.ArgumentParser()
        cls = task_class("ur5e-table-leg")
        cls.add_arguments(parser, command)
        assert cls.from_args(parser.parse_args(["--contacts", "fast"]), command).contacts == "fast"
        assert cls.from_args(parser.parse_args([]), command).contacts == "noslip"
