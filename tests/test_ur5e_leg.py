"""The ur5e-table-leg task under real physics: the leg assembly in UR5eEnv (rack start, tabletop placement, thread
state, success), its scripted expert (grasp, carry, thread, regrasp), the leg profiles and the task's evaluation."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from simdist.components.tasks.ur5e import threading as th
from simdist.components.tasks.ur5e.assembly import PegAssembly
from simdist.components.tasks.ur5e.env import SUCCESS_HOLD, ArmEnvConfig, UR5eEnv
from simdist.components.tasks.ur5e.expert import REGRASP_TURN, TWIST, make_expert
from simdist.components.tasks.ur5e.grids import GRIDS, sample_training_starts
from simdist.components.tasks.ur5e.leg import LegAssembly, rack_footprint, tabletop_footprint
from simdist.components.tasks.ur5e.leg_expert import LegExpert
from simdist.components.tasks.ur5e.profiles import LegProfile
from simdist.profiles import ProfileError
from simdist.tasks import make_task


def _yaw(q: np.ndarray) -> np.ndarray:
    return 2.0 * np.arctan2(q[..., 3], q[..., 0])


def _open_still(n: int) -> np.ndarray:
    action = np.zeros((n, 7))
    action[:, 6] = -1.0
    return action


def _roll(env: UR5eEnv, expert, steps: int, seed: int, phases: set | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Run ``expert`` from a seeded reset: per env, success and the step it finished at (0: never)."""
    n = env.num_envs
    obs = env.reset(seed=seed)
    done, success, length = np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, np.int64)
    for t in range(steps):
        step = env.step(expert(obs))
        obs = step.obs
        if phases is not None:
            phases.update(expert.phase[~done].tolist())
        fin = (step.terminated | step.truncated) & ~done
        success[fin], length[fin] = step.info["success"][fin], t + 1
        done |= fin
        if done.all():
            break
    return success, length


def _place_in_thread(env: UR5eEnv, e: int, depth: float | None) -> None:
    """Env ``e``'s leg upright on the hole axis, threaded ``depth`` (m; engaged there) or, with None, teleported
    to the seated pose with the thread left at its start (not engaged)."""
    asm = env.assembly
    seat, _ = asm.ts.assembled_leg_pose(env.mocap_pos[e:e + 1], env.mocap_quat[e:e + 1])
    lift = 0.0 if depth is None else asm.thread.engagement - depth
    env.qpos[e, asm.qadr:asm.qadr + 7] = [*(seat[0] + [0.0, 0.0, lift]), 1.0, 0.0, 0.0, 0.0]
    env.qvel[e, asm.dadr:asm.dadr + 6] = 0.0
    if depth is not None:
        asm.ts.update(**{k: v[e:e + 1] for k, v in asm.arrays.items()})


def test_the_leg_stands_on_its_rack_after_reset():
    env = UR5eEnv(LegAssembly(), 3, ArmEnvConfig(grid="wide"), seed=0)
    obs = env.reset(seed=0)
    asm = env.assembly
    leg = env.qpos[:, asm.qadr:asm.qadr + 7].copy()
    np.testing.assert_allclose(leg[:, :2], env.starts[:, :2], atol=1e-9)
    np.testing.assert_allclose(leg[:, 2], th.RACK_TOP + th.LEG_HALF[2])
    np.testing.assert_allclose(_yaw(leg[:, 3:]), env.starts[:, 2], atol=1e-9)
    np.testing.assert_allclose(env.mocap_pos[:, asm.rack_mocap, :2], env.starts[:, :2], atol=1e-9)
    assert obs["object"].shape == (3, 29) and not obs["object"][:, 27:].any()  # depth 0, not engaged
    for _ in range(5):
        step = env.step(_open_still(3))
    moved = np.linalg.norm(env.qpos[:, asm.qadr:asm.qadr + 3] - leg[:, :3], axis=1)
    assert moved.max() < 5e-4 and asm.ts.tilt(env.qpos, env.mocap_quat).max() < 0.01
    assert not step.obs["object"][:, 28].any() and not step.info["diverged"].any()
    env.close()


def test_the_tabletop_hole_is_at_the_receptacle_and_clear_of_every_start():
    env = UR5eEnv(LegAssembly(), 2, ArmEnvConfig(grid="narrow"), seed=0)
    env.reset(seed=0)
    hole = env.site_xpos[:, env.model.site(th.HOLE_SITE).id]
    np.testing.assert_allclose(hole[:, :2], env.starts[:, 3:5], atol=1e-9)
    goal, rot = env.assembly.assembled_pose(env)
    np.testing.assert_allclose(goal, hole + [0.0, 0.0, th.LEG_HALF[2]], atol=1e-9)
    np.testing.assert_allclose(rot[:, :, 2], np.tile([0.0, 0.0, 1.0], (2, 1)), atol=1e-12)
    env.close()
    starts = np.concatenate([sample_training_starts(np.random.default_rng(0), 5000), GRIDS["wide"].lattice(),
                             GRIDS["narrow"].lattice()])
    racks = np.stack([rack_footprint(*s[:3]) for s in starts])
    tops = np.stack([tabletop_footprint(*s[3:]) for s in starts])
    # a horizontal line separates every rack from its tabletop (with room for the fingers)
    assert (tops[:, :, 1].min(1) - racks[:, :, 1].max(1)).min() > 0.05


@pytest.mark.parametrize("grid", ["narrow", "wide"])
def test_the_expert_threads_the_leg_on_lattice_cells(grid):
    env = UR5eEnv(LegAssembly(), 4, ArmEnvConfig(grid=grid), seed=1)
    success, length = _roll(env, make_expert(env.assembly), 160, seed=1)
    assert success.all(), success
    assert (length < 140).all(), length
    env.close()


def test_the_expert_regrasps_when_wrist_3_runs_out():
    env = UR5eEnv(LegAssembly(), 2, ArmEnvConfig(grid="wide"), seed=0)
    expert = make_expert(env.assembly)
    no_wind = LegExpert(replace(expert.p, prewind=False), env.assembly)  # starts twisting mid-range
    phases: set[int] = set()
    success, length = _roll(env, no_wind, 180, seed=0, phases=phases)
    assert success.all() and REGRASP_TURN in phases, (success, phases)
    env.close()


def test_under_twisting_leaves_the_leg_unseated():
    env = UR5eEnv(LegAssembly(), 2, ArmEnvConfig(grid="narrow"), seed=0)
    success, _ = _roll(env, make_expert(env.assembly, "under_twist"), 140, seed=0)
    assert not success.any()
    env.close()


def test_success_needs_the_leg_threaded_home():
    env = UR5eEnv(LegAssembly(), 3, ArmEnvConfig(grid="narrow"), seed=0)
    env.reset(seed=0)
    asm = env.assembly
    _place_in_thread(env, 0, 0.0)  # pushed onto the thread start, not twisted
    _place_in_thread(env, 1, None)  # in the seated pose, but the thread never turned
    _place_in_thread(env, 2, asm.thread.engagement)  # threaded home
    env.batch.forward()
    state = env._state()
    assert asm.success_now(env, state).tolist() == [False, False, True]
    assert state["distance"][1] < 1e-6  # the tolerance test alone would pass it
    np.testing.assert_allclose(asm.extra_obs(env), [[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]], atol=1e-9)
    asm.place_object(env, 1, env.starts[1, :3])  # back onto the rack (its stud is inside the stop)
    env.batch.forward()
    ok = []
    for _ in range(SUCCESS_HOLD):
        step = env.step(_open_still(3))
        ok.append(step.info["success"].tolist())
    assert ok[-2] == [False] * 3 and ok[-1] == [False, False, True] and step.truncated[2]
    assert step.info["distance"][0] > 0.007 and step.obs["object"][0, 28] == 1.0  # resting on the thread start
    env.close()


def test_training_resets_grasp_the_leg_and_inserted_ones_engage_the_thread():
    env = UR5eEnv(LegAssembly(), 6, ArmEnvConfig(reset_mix=(0.0, 1.0, 1.0, 1.0)), seed=2)
    obs = env.reset(seed=2)
    asm = env.assembly
    kinds = env.reset_kind.copy()
    assert set(kinds.tolist()) == {1, 2, 3}
    inserted = kinds == 3
    assert (obs["object"][inserted, 28] == 1.0).all() and (obs["object"][~inserted, 28] == 0.0).all()
    assert (obs["object"][inserted, 27] <= 0.6 + 1e-6).all()
    # every grasped leg hangs between the fingers; the empty rack is at the start pose
    grip = np.zeros((6, 7))
    grip[:, 6] = 1.0
    for _ in range(3):
        step = env.step(grip)
    tcp, _ = env.tcp_pose()
    leg = env.qpos[:, asm.qadr:asm.qadr + 3]
    assert np.abs(tcp[:, :2] - leg[:, :2]).max() < 0.004
    assert np.abs(tcp[:, 2] - leg[:, 2] - asm.grasp_offset).max() < 0.006
    assert not step.info["diverged"].any()
    np.testing.assert_allclose(env.mocap_pos[:, asm.rack_mocap, :2], env.starts[:, :2])
    env.close()
    # from a leg half threaded in the hand, the expert takes over twisting (its phase inferred from the state)
    env = UR5eEnv(LegAssembly(), 2, ArmEnvConfig(reset_mix=(0.0, 0.0, 0.0, 1.0)), seed=0)
    expert = make_expert(env.assembly)
    phases: set[int] = set()
    success, length = _roll(env, expert, 100, seed=0, phases=phases)
    assert success.all() and TWIST in phases and length.max() < 90, (success, length)
    env.close()


def test_the_leg_profiles_load_and_are_range_checked():
    task = make_task("ur5e-table-leg")
    assert {"sim", "table-leg-real", "table-leg-sticky"} <= set(task.profiles())
    assert task.profile_name == "table-leg-real"
    sim, real, sticky = (task.load_profile(n) for n in ("sim", "table-leg-real", "table-leg-sticky"))
    assert isinstance(real, LegProfile) and sim.thread_friction == LegProfile().thread_friction
    assert real.thread_friction >= 3 * sim.thread_friction and real.pitch_error != 0.0
    assert real.latency_substeps == 20 and real.joint_friction > 0 and real.pad_friction < sim.pad_friction
    assert sticky.thread_friction > sim.thread_friction and sticky.radial_clearance < sim.radial_clearance
    for bad, key in (({"thread_friction": 10.0}, "thread_friction"), ({"pitch_error": 0.01}, "pitch_error"),
                     ({"radial_clearance": 0.0}, "radial_clearance"), ({"thread_pitch": 0.004}, "unknown")):
        with pytest.raises(ProfileError, match=key):
            task.load_profile(bad)


def test_a_leg_profile_changes_the_thread_and_the_leg():
    nominal = UR5eEnv(LegAssembly(), 2, ArmEnvConfig(), seed=0)
    nominal.reset(seed=0)
    prof = make_task("ur5e-table-leg").load_profile({"thread_friction": 0.3, "pitch_error": -0.001,
                                                     "radial_clearance": 0.001, "object_mass": 0.1})
    other = UR5eEnv(LegAssembly(), 2, ArmEnvConfig(), profile=prof, seed=0)
    other.reset(seed=0)
    for env, friction in ((nominal, 0.05), (other, 0.3)):
        asm = env.assembly
        np.testing.assert_allclose(asm.m_frictionloss[:, asm.hinge_dof], friction)
    coupling = other.model.equality(th.COUPLING_EQ).id
    assert other.model.eq_data[coupling, 1] == pytest.approx(-2 * np.pi / 0.003)
    assert other.model.geom("hole_ring0").pos[0] > nominal.model.geom("hole_ring0").pos[0]  # a wider pocket
    assert other.assembly.thread.pitch == pytest.approx(0.003) and other.assembly.clearance(prof) == 0.001
    np.testing.assert_allclose(other.m_mass[:, other.assembly.body_id], 0.1)
    assert ((nominal.params["object_mass"] >= 0.04) & (nominal.params["object_mass"] <= 0.12)).all()
    nominal.close()
    other.close()


def test_make_expert_knows_the_legs_retuned_variant():
    expert = make_expert(LegAssembly(), "retuned")
    assert isinstance(expert, LegExpert) and expert.p.integral > 0 and expert.p.twist_turns > 2.2
    assert make_expert(LegAssembly(), "under_twist").p.twist_turns < 1.0
    assert not isinstance(make_expert(PegAssembly(), "retuned"), LegExpert)  # the peg's own
    with pytest.raises(ValueError, match="unknown scripted policy 'nope'"):
        make_expert(LegAssembly(), "nope")
    assert isinstance(make_task("ur5e-table-leg").builtin_agent("scripted:retuned"), LegExpert)


def test_the_table_leg_task_evaluates_the_expert():
    task = make_task("ur5e-table-leg", profile=None, grid="narrow")
    result = task.evaluate(make_expert(task.assembly()), trials=1, seed=0, num_envs=10)
    assert len(result.values) == 20 and sorted(result.details["cell"]) == list(range(20))
    assert sum(result.success) >= 19 and not any(result.diverged)
    times = [t for t in result.details["time_to_success_s"] if t is not None]
    assert max(times) < 30.0
