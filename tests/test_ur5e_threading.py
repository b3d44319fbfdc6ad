"""The table-leg thread mechanism (components/tasks/ur5e/threading.py) under real MuJoCo physics.

The test scene is a floor plane at z = 0, the task objects and a "hand": a body on x/y/z slides and a yaw hinge,
driven by force-capped position actuators (20 N per axis, 28 N m about the axis like a UR5e wrist) and welded to
the leg, stepping in a ``mujoco.batch.Batch`` with the task's contact settings.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mujoco
import mujoco.batch
import numpy as np
import pytest

from simdist.components.tasks.ur5e import threading as th

SUBSTEPS = 10  # physics steps per control step (0.02 s)
DT = 0.002 * SUBSTEPS
TT_POS = np.array([0.45, 0.20, 0.0])
RACK_POS = np.array([0.45, -0.10, 0.0])
HOLE = TT_POS + np.array([th.HOLE_POS[0], th.HOLE_POS[1], th.TABLETOP_TOP])  # hole entrance, world
WRIST_TORQUE = 28.0
HAND_FORCE = 20.0
P = th.ThreadParams()
TIGHTEN = -1.0  # a right-hand thread tightens clockwise seen from above: negative yaw about +z


def _scene(params: th.ThreadParams = P) -> mujoco.MjModel:
    spec = mujoco.MjSpec()
    o = spec.option
    o.timestep = 0.002
    o.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    o.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    o.impratio = 10
    o.solver = mujoco.mjtSolver.mjSOL_NEWTON
    o.iterations = 50
    o.ls_iterations = 20
    spec.default.geom.solref = [0.004, 1.0]
    spec.default.geom.solimp = [0.95, 0.99, 0.001, 0.5, 2.0]
    floor = spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
    floor.contype = floor.conaffinity = th.CONTYPE_DEFAULT
    th.add_table_leg_objects(spec, params, tabletop_pos=TT_POS, rack_pos=RACK_POS)
    hand = spec.worldbody.add_body(name="hand")
    hand.explicitinertial = True
    hand.mass, hand.ipos, hand.iquat, hand.inertia = 0.5, [0, 0, 0], [1, 0, 0, 0], [1e-3, 1e-3, 1e-3]
    hand.gravcomp = 1.0
    for name, axis in (("hand_x", [1, 0, 0]), ("hand_y", [0, 1, 0]), ("hand_z", [0, 0, 1]), ("hand_yaw", [0, 0, 1])):
        kind = mujoco.mjtJoint.mjJNT_HINGE if name == "hand_yaw" else mujoco.mjtJoint.mjJNT_SLIDE
        hand.add_joint(name=name, type=kind, axis=axis)
        act = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        cap = WRIST_TORQUE if name == "hand_yaw" else HAND_FORCE
        act.set_to_position(kp=40.0 if name == "hand_yaw" else 3000.0, dampratio=1.0)
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-cap, cap]
    grip = spec.add_equality(name="grip", type=mujoco.mjtEq.mjEQ_WELD, objtype=mujoco.mjtObj.mjOBJ_BODY,
                             name1="hand", name2=th.LEG_BODY)
    grip.data = [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1] + [0] * (mujoco.mjNEQDATA - 11)
    grip.solref, grip.solimp = [0.004, 1.0], [0.99, 0.999, 0.001, 0.5, 2.0]  # a firm grasp
    return spec.compile()


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    return _scene()


def _yaw(q: np.ndarray) -> np.ndarray:
    return 2.0 * np.arctan2(q[..., 3], q[..., 0])


class Rig:
    """A batch of the test scene with the hand holding the leg, plus its thread logic."""

    def __init__(self, model: mujoco.MjModel, nsim: int) -> None:
        self.batch = mujoco.batch.Batch(model, nsim, nthread=1, persistent=True)
        self.ts = th.ThreadState(model, P)
        self.arr = self.ts.arrays(self.batch)
        self.qpos = self.arr["qpos"]
        self.ctrl = self.batch.bind("ctrl")
        self.hand_q = int(model.joint("hand_x").qposadr[0])
        self.grip = model.equality("grip").id

    def hold_above_hole(self, height: float, yaw: np.ndarray | float = 0.0) -> None:
        """Leg upright with its stud tip ``height`` above the hole entrance, the hand gripping it at rest."""
        n = self.batch.nsim
        yaw = np.broadcast_to(np.asarray(yaw, float), (n,))
        seat, _ = self.ts.assembled_leg_pose(self.arr["mocap_pos"], self.arr["mocap_quat"])
        centre = seat + np.array([0.0, 0.0, height + P.stud_length])
        a = self.ts.leg_qadr
        self.qpos[:, a:a + 3] = centre
        self.qpos[:, a + 3:a + 7] = th.quat_rotz(yaw)
        self.qpos[:, self.hand_q:self.hand_q + 3] = centre
        self.qpos[:, self.hand_q + 3] = yaw
        self.ctrl[:, :3] = centre
        self.ctrl[:, 3] = yaw
        self.batch.forward()

    def run(self, seconds: float, z: Callable[[float], np.ndarray] | None = None,
            yaw: Callable[[float], np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Step ``seconds``; ``z(t)`` / ``yaw(t)`` give the hand targets ((B,) each, t from 0). Returns (T, B)
        histories of engaged, depth, tip depth, leg yaw (unwrapped) and seated."""
        out: dict[str, list[np.ndarray]] = {k: [] for k in ("engaged", "depth", "tip_depth", "yaw", "seated")}
        for k in range(round(seconds / DT)):
            t = k * DT
            if z is not None:
                self.ctrl[:, 2] = z(t)
            if yaw is not None:
                self.ctrl[:, 3] = yaw(t)
            self.batch.step(nstep=SUBSTEPS)
            out["engaged"].append(self.ts.update(**self.arr))
            out["depth"].append(self.ts.depth(self.qpos))
            out["tip_depth"].append(self.ts.tip_in_hole(self.qpos, self.arr["mocap_pos"], self.arr["mocap_quat"])[1])
            out["yaw"].append(_yaw(self.ts.leg_pose(self.qpos)[1]))
            out["seated"].append(self.ts.seated(self.qpos, self.arr["mocap_quat"]))
        assert not np.asarray(self.batch.warning)[:, :, 1].any(), "MuJoCo warnings"  # (lastinfo, number)
        hist = {k: np.array(v) for k, v in out.items()}
        hist["yaw"] = np.unwrap(hist["yaw"], axis=0)
        return hist


SEATED_Z = HOLE[2] + th.LEG_HALF[2]  # the leg centre's height when seated


def _press(t: float) -> float:
    """Hand height target: down onto the hole at 2 cm/s, then 5 mm below the seat (a capped 15 N push)."""
    return max(HOLE[2] + P.stud_length + th.LEG_HALF[2] + 0.001 - 0.02 * t, SEATED_Z - 0.005)


def _twist(direction: np.ndarray, start: float = 0.6, turns: float = 2.5, duration: float = 2.0):
    def yaw(t: float) -> np.ndarray:
        return direction * 2 * math.pi * turns * np.clip((t - start) / duration, 0.0, 1.0)
    return yaw


# ---- (1) push: engages, does not thread ------------------------------------------------------------
def test_push_engages_but_does_not_thread(model: mujoco.MjModel) -> None:
    rig = Rig(model, 2)
    rig.hold_above_hole(0.001, yaw=np.array([0.7, -0.3]))
    hover = HOLE[2] + 0.005 + P.stud_length + th.LEG_HALF[2]
    h = rig.run(1.0, z=lambda t: np.array([_press(t), hover]))
    assert h["engaged"][-1].tolist() == [True, False]
    assert h["depth"][:, 0].max() < 0.0003  # pressing alone does not thread
    assert abs(h["tip_depth"][-1, 0] - P.lead) < 0.0005  # the stud rests at the thread start
    assert np.abs(h["yaw"][:, 0] - 0.7).max() < 0.01  # engaging keeps the leg's yaw (no snap)
    assert h["depth"][:, 1].max() == 0.0 and not h["seated"].any()
    # pushing harder for longer still does not get past the thread start
    h = rig.run(0.5, z=lambda t: np.array([SEATED_Z - 0.02, hover]))
    assert h["depth"][:, 0].max() < 0.0003 and h["tip_depth"][:, 0].max() < P.lead + 0.0006


def test_engaging_in_a_turned_tabletop_keeps_the_leg_pose(model: mujoco.MjModel) -> None:
    rig = Rig(model, 2)
    tt = rig.ts.tabletop_mocap
    rig.arr["mocap_pos"][1, tt] = [0.40, 0.25, 0.0]
    rig.arr["mocap_quat"][1, tt] = th.quat_rotz(np.array(2.5))
    rig.hold_above_hole(0.001, yaw=np.array([-1.2, 0.4]))
    h = rig.run(1.0, z=lambda t: np.full(2, _press(t)))
    assert h["engaged"][-1].all() and h["depth"].max() < 0.0003
    assert np.abs(h["yaw"] - np.array([-1.2, 0.4])).max() < 0.01
    seat, _ = rig.ts.assembled_leg_pose(rig.arr["mocap_pos"], rig.arr["mocap_quat"])
    np.testing.assert_allclose(rig.ts.leg_pose(rig.qpos)[0][:, :2], seat[:, :2], atol=0.0002)


def test_chamfer_guides_an_off_axis_stud(model: mujoco.MjModel) -> None:
    rig = Rig(model, 2)
    rig.hold_above_hole(0.001)
    offset = np.array([[0.002, 0.0, 0.0], [0.0, -0.003, 0.0]])  # inside / outside the 2.5 mm chamfer rim
    a = rig.ts.leg_qadr
    rig.qpos[:, a:a + 3] += offset
    rig.qpos[:, rig.hand_q:rig.hand_q + 3] += offset
    rig.ctrl[:, :3] += offset  # the hand keeps pulling towards the offset (3000 N/m)
    rig.batch.forward()
    h = rig.run(1.0, z=lambda t: np.full(2, _press(t)))
    radial, tip_depth, _ = rig.ts.tip_in_hole(rig.qpos, rig.arr["mocap_pos"], rig.arr["mocap_quat"])
    assert h["engaged"][-1].tolist() == [True, False]
    assert radial[0] < 0.0001 and abs(tip_depth[0] - P.lead) < 0.0005
    assert tip_depth[1] < 0.0005  # the stud stands on the tabletop's top face, beside the hole


# ---- (2) + (4) + (6) twist: one sim tightens, the other loosens ------------------------------------
@pytest.fixture(scope="module")
def twist(model: mujoco.MjModel) -> tuple[Rig, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """sim 0 tightens 2.5 turns while pressing, sim 1 turns the other way; then both hold the wrist torque;
    then the hand lets go."""
    rig = Rig(model, 2)
    rig.hold_above_hole(0.001)
    h = rig.run(3.0, z=lambda t: np.full(2, _press(t)), yaw=_twist(np.array([TIGHTEN, -TIGHTEN])))
    yaw_end = h["yaw"][-1].copy()
    hold = rig.run(0.5, yaw=lambda t: yaw_end + np.array([TIGHTEN, -TIGHTEN]) * 3.0)  # 40*3 > 28: capped
    rig.arr["eq_active"][:, rig.grip] = 0.0  # let go: the seated leg stays put
    free = rig.run(0.5)
    assert free["seated"][:, 0].all() and np.ptp(free["tip_depth"][:, 0]) < 0.0002
    return rig, h, hold


def test_twist_right_way_seats(twist) -> None:
    rig, h, hold = twist
    assert h["seated"][-1, 0] and hold["seated"][-1, 0]
    assert abs(h["depth"][-1, 0] - P.engagement) < 0.0002
    assert abs(h["tip_depth"][-1, 0] - P.stud_length) < 0.0005
    pos, _ = rig.ts.assembled_leg_pose(rig.arr["mocap_pos"], rig.arr["mocap_quat"])
    leg_pos, _ = rig.ts.leg_pose(rig.qpos)
    assert np.linalg.norm(leg_pos[0] - pos[0]) < 0.0005  # the square bottom sits on the tabletop
    turns = (h["yaw"][-1, 0] - h["yaw"][0, 0]) * TIGHTEN / (2 * math.pi)
    assert abs(turns - P.engagement / P.pitch) < 0.15  # it took ~2 turns


def test_twist_wrong_way_does_not_advance(twist) -> None:
    _, h, hold = twist
    assert (h["yaw"][-1, 1] - h["yaw"][0, 1]) * -TIGHTEN > 2 * 2 * math.pi  # it did turn ~2.5 times
    assert h["depth"][:, 1].max() < 0.0005 and hold["depth"][:, 1].max() < 0.0005
    assert h["tip_depth"][:, 1].max() < P.lead + 0.0006
    assert not h["seated"][:, 1].any()


def test_depth_per_turn_matches_pitch_and_does_not_strip(twist) -> None:
    _, h, hold = twist
    d, turns = h["tip_depth"][:, 0], (h["yaw"][:, 0] - h["yaw"][0, 0]) * TIGHTEN / (2 * math.pi)
    threading = (d > P.lead + 0.001) & (d < P.stud_length - 0.001)
    assert threading.sum() > 20
    per_turn = np.polyfit(turns[threading], d[threading], 1)[0]
    assert abs(per_turn - P.pitch) < 0.15 * P.pitch, per_turn
    # at the seat, the full wrist torque neither turns the leg further nor drives it deeper
    assert abs(hold["yaw"][-1, 0] - hold["yaw"][0, 0]) < 0.05
    assert abs(hold["tip_depth"][:, 0] - P.stud_length).max() < 0.0005


def test_batch_sims_are_independent(model: mujoco.MjModel, twist) -> None:
    _, h2, _ = twist
    rig = Rig(model, 1)  # sim 1's motion alone
    rig.hold_above_hole(0.001)
    h1 = rig.run(3.0, z=lambda t: np.full(1, _press(t)), yaw=_twist(np.array([-TIGHTEN])))
    for key in ("depth", "tip_depth", "yaw"):
        np.testing.assert_allclose(h1[key][:, 0], h2[key][:, 1], atol=1e-9, err_msg=key)
    np.testing.assert_array_equal(h1["engaged"][:, 0], h2["engaged"][:, 1])


# ---- (3) unscrewing pulls it out ----------------------------------------------------------------------
def test_unscrew_and_pull_out_disengages(model: mujoco.MjModel) -> None:
    rig = Rig(model, 1)
    rig.hold_above_hole(0.001)
    h = rig.run(1.6, z=lambda t: np.full(1, _press(t)), yaw=_twist(np.array([TIGHTEN]), 0.5, 1.0, 1.0))
    assert h["engaged"][-1, 0] and abs(h["depth"][-1, 0] - P.pitch) < 0.0005  # one turn in
    z0, yaw0 = float(rig.ts.leg_pose(rig.qpos)[0][0, 2]), float(rig.ctrl[0, 3])
    lift = rig.run(2.0, z=lambda t: np.full(1, z0 + 0.002 + 0.01 * t),  # a gentle pull (6 N), then 1 cm/s up
                   yaw=lambda t: np.full(1, yaw0 - TIGHTEN * 2 * math.pi * 1.5 * min(t / 1.2, 1.0)))
    assert not lift["engaged"][-1, 0] and lift["depth"][-1, 0] == 0.0
    assert lift["tip_depth"][-1, 0] < -0.005  # out of the hole
    assert rig.arr["eq_active"][0, rig.ts.lock_eq] == 1.0 and rig.qpos[0, rig.ts.hinge_qadr] == 0.0
    first_out = np.flatnonzero(~lift["engaged"][:, 0])[0]
    assert lift["depth"][:first_out, 0].min() == 0.0  # it came out by unscrewing (slide > release margin)


def test_tilt_release_keeps_stop_under_the_stud(model: mujoco.MjModel) -> None:
    """A leg torn out of line mid-thread disengages; the stop rides up under the stud as it leaves."""
    rig = Rig(model, 1)
    rig.hold_above_hole(0.001)
    rig.run(1.6, z=lambda t: np.full(1, _press(t)), yaw=_twist(np.array([TIGHTEN]), 0.5, 1.0, 1.0))
    a, arr, ts = rig.ts.leg_qadr, rig.arr, rig.ts
    depth_before = ts.depth(rig.qpos)[0]
    tilt = np.array([math.cos(0.1), math.sin(0.1), 0.0, 0.0])  # 0.2 rad about x
    rig.qpos[:, a + 3:a + 7] = th.quat_mul(rig.qpos[:, a + 3:a + 7], tilt)
    assert not ts.update(**arr)[0]
    assert arr["eq_active"][0, ts.lock_eq] == 1.0
    slide = rig.qpos[0, ts.slide_qadr]
    assert -depth_before - 0.001 < slide < 0.0  # the nut stays just below the stud
    assert arr["eq_data"][0, ts.lock_eq, 0] == pytest.approx(rig.qpos[0, ts.hinge_qadr])
    ts.reset([0], rig.qpos, arr["qvel"], arr["eq_active"], arr["eq_data"])
    assert rig.qpos[0, ts.slide_qadr] == 0.0 and arr["eq_data"][0, ts.lock_eq, 0] == 0.0


# ---- (5) the start rack -----------------------------------------------------------------------------
def test_leg_stands_upright_on_rack(model: mujoco.MjModel) -> None:
    rig = Rig(model, 2)
    rig.arr["eq_active"][:, rig.grip] = 0.0  # the hand lets go and waits far above
    rig.qpos[:, rig.hand_q:rig.hand_q + 3] = rig.ctrl[:, :3] = [0.0, 0.0, 0.5]
    racks = np.array([[0.40, -0.12, 0.0], [0.52, -0.05, 0.0]])
    rig.ts.place_leg_on_rack([0, 1], rig.qpos, rig.arr["qvel"], rig.arr["mocap_pos"], racks, [0.0, 0.6])
    rig.batch.forward()
    start, _ = rig.ts.leg_pose(rig.qpos)
    start = start.copy()
    h = rig.run(2.0)
    pos, quat = rig.ts.leg_pose(rig.qpos)
    np.testing.assert_allclose(pos[:, :2], racks[:, :2], atol=0.001)
    np.testing.assert_allclose(pos[:, 2], th.RACK_TOP + th.LEG_HALF[2], atol=0.0005)
    assert np.abs(pos - start).max() < 0.001
    assert rig.ts.tilt(rig.qpos, rig.arr["mocap_quat"]).max() < 0.01
    np.testing.assert_allclose(_yaw(quat), [0.0, 0.6], atol=0.01)
    assert not h["engaged"].any()


# ---- (7) parameters -----------------------------------------------------------------------------------
@pytest.mark.parametrize("field, value", [
    ("pitch", -0.004), ("pitch", 0.0), ("engagement", 0.0), ("radial_clearance", -0.001),
    ("thread_friction", -1.0), ("tilt_limit", 2.0), ("leg_mass", float("nan")), ("engage_radius", 0.01),
    ("catch_tolerance", 0.001),
])
def test_bad_params_raise(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        th.ThreadParams(**{field: value})


def test_model_params_mismatch_raises(model: mujoco.MjModel) -> None:
    with pytest.raises(ValueError, match="pitch"):
        th.ThreadState(model, th.ThreadParams(pitch=0.003))


def test_assembled_pose_and_rack_qpos_helpers() -> None:
    quat = th.quat_rotz(np.array([math.pi / 2]))
    pos, q = th.assembled_leg_pose(np.array([[1.0, 2.0, 0.0]]), quat, yaw=0.1)
    np.testing.assert_allclose(pos[0], [1.0 - th.HOLE_POS[1], 2.0 + th.HOLE_POS[0], th.TABLETOP_TOP + th.LEG_HALF[2]])
    np.testing.assert_allclose(_yaw(q[0]), math.pi / 2 + 0.1)
    qpos = th.leg_qpos_on_rack(np.array([[0.3, 0.1, 0.0]]), 0.4)
    np.testing.assert_allclose(qpos[0, :3], [0.3, 0.1, th.RACK_TOP + th.LEG_HALF[2]])
    np.testing.assert_allclose(_yaw(qpos[0, 3:]), 0.4)
