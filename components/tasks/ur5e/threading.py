"""Table-leg threading for the UR5e table-leg task: an engagement-activated helical constraint.

Real thread geometry is far too slow to simulate, so the thread is a mechanism. Inside the tabletop, on the
hole axis, hangs a small body ``leg_nut`` with a slide (``leg_thread_slide``, along the hole axis, out of the
hole = +) and a hinge (``leg_thread_hinge``, about the axis pointing *into* the hole, so + = clockwise seen from
above = tightening, a right-hand thread), coupled by the joint equality ``leg_thread_coupling``:
``slide = -pitch / (2 pi) * hinge``. The nut carries a thin stop disk (``leg_thread_stop``) just below the thread
start, ``lead`` below the entrance; while the thread is not engaged the joint equality ``leg_thread_lock`` holds
the nut still, so a stud pushed into the hole rests on the stop and cannot go deeper without threading. When the
stud tip is at the thread start, roughly on the axis and upright, :meth:`ThreadState.update` *engages*: it puts
the nut joints at the leg's depth, releases the lock and activates the weld ``leg_thread_weld`` (nut <-> leg,
frames at the stud tip), after which the leg can only move along the helix (the stop moves with it, just below
the tip). Twisting the right way while pressing threads it in; the joint limits at ``slide = -engagement`` are the
seat, where the leg's square bottom also rests on the tabletop. Unscrewing past ``slide > release_margin`` (or a
tilt beyond ``tilt_limit``) disengages; twisting the wrong way at the thread start thus just "clicks".

Frames. The tabletop body's origin is the centre of its bottom face (so ``mocap_pos`` z = 0 rests it on a work
surface at z = 0), its +z is the hole axis, its top face is at z = ``TABLETOP_HALF[2] * 2``. The rack's origin
is likewise the centre of its bottom face. The leg body's origin is the centre of its square box.

Collision bits (``contype`` / ``conaffinity``):

* ``CONTYPE_DEFAULT`` (1): everything ordinary - table/floor, objects, robot. The leg box is 1 / 1; the tabletop
  slab and rack block are 1 / 3 (ordinary contacts, plus the stud).
* ``CONTYPE_THREAD`` (2): the thread parts. The stud is 2 / 3 (touches ordinary geoms *and* thread geoms); the
  hole pocket (chamfer + ring of boxes) and the nut's stop disk are 2 / 2, so they touch only the stud. Robot
  geoms must leave bit 2 out of both fields (e.g. robot 1 / 0, environment 1 / 1): they then never touch them.

Per control step the env calls ``batch.step(...)`` then :meth:`ThreadState.update`; after ``batch.reset(ids)``
it calls :meth:`ThreadState.reset` (``eq_data`` is a model field, which a batch reset does not restore) and
:meth:`ThreadState.place_leg_on_rack`, then ``batch.forward(ids)``. The thread state is read from ``qpos`` /
``mocap_*`` only, so no forward pass is needed before :meth:`ThreadState.update`, and its writes (nut joints,
``eq_active``, ``eq_data``) do not move the leg, so observations computed before it stay valid.

MuJoCo pitfall behind some choices here: a constraint's softness is scaled by an estimate of its inverse inertia
built from the *uncoupled* dofs (``dof_invweight0``), which is wildly off for a 1571 rad/m screw; hence the
coupling is written hinge-first and the seat stop is (also) a hinge limit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import mujoco
import numpy as np

if TYPE_CHECKING:
    import mujoco.batch

# ---- names ------------------------------------------------------------------------------
LEG_BODY = "leg"
LEG_JOINT = "leg_free"
LEG_BOX_GEOM = "leg_box"
LEG_STUD_GEOM = "leg_stud"
LEG_TIP_SITE = "leg_tip"
TABLETOP_BODY = "tabletop"
HOLE_SITE = "tabletop_hole"
NUT_BODY = "leg_nut"
SLIDE_JOINT = "leg_thread_slide"
HINGE_JOINT = "leg_thread_hinge"
STOP_GEOM = "leg_thread_stop"
COUPLING_EQ = "leg_thread_coupling"
WELD_EQ = "leg_thread_weld"
LOCK_EQ = "leg_thread_lock"
RACK_BODY = "leg_rack"

# ---- collision bits ---------------------------------------------------------------------
CONTYPE_DEFAULT = 1
CONTYPE_THREAD = 2

# ---- geometry (m) -----------------------------------------------------------------------
LEG_HALF = (0.015, 0.015, 0.03125)  # 30 x 30 x 62.5 mm square leg
STUD_RADIUS = 0.004  # M8-like stud
TABLETOP_HALF = (0.075, 0.075, 0.010)  # 150 x 150 x 20 mm upside-down tabletop
TABLETOP_TOP = 2 * TABLETOP_HALF[2]  # top face height in the tabletop frame
HOLE_POS = (0.05625, 0.05625)  # hole axis in the tabletop frame
RACK_HALF = (0.0225, 0.0225, 0.006)  # 45 x 45 x 12 mm start rack
RACK_TOP = 2 * RACK_HALF[2]
RACK_GAP_HALF = 0.006  # square cradle for the stud (2 mm clearance each side)
POCKET_SEGMENTS = 12
POCKET_WALL = 0.002  # half radial thickness of the straight pocket boxes
CHAMFER_WALL = 0.001  # half thickness of the chamfer boxes
STOP_GAP = 0.0002  # the stop disk's top is this far below the nut origin (= the engaged stud tip)
STOP_HALF_THICK = 0.0005

_SOLREF_STIFF = (0.004, 1.0)
_SOLIMP_STIFF = (0.99, 0.999, 0.001, 0.5, 2.0)
_RGBA_TABLETOP = (0.80, 0.68, 0.50, 1.0)
_RGBA_POCKET = (0.35, 0.35, 0.38, 1.0)
_RGBA_LEG = (0.85, 0.75, 0.58, 1.0)
_RGBA_STUD = (0.55, 0.55, 0.60, 1.0)
_RGBA_RACK = (0.30, 0.45, 0.65, 1.0)


@dataclass(frozen=True)
class ThreadParams:
    """Thread mechanism parameters (SI units; a right-hand thread)."""

    pitch: float = 0.004  # advance per turn
    engagement: float = 0.008  # threaded length; the seat is at slide = -engagement
    lead: float = 0.002  # unthreaded pilot / entrance chamfer depth: the thread catches at this tip depth
    catch_tolerance: float = 0.0003  # the thread catches once the tip is deeper than lead - this
    radial_clearance: float = 0.0005  # pocket inner radius = STUD_RADIUS + this
    thread_friction: float = 0.05  # hinge frictionloss (N m)
    engage_radius: float = 0.0015  # max radial offset of the tip from the hole axis to catch
    tilt_limit: float = 0.1  # max angle (rad) between leg and hole axes to catch / stay engaged
    release_margin: float = 0.0005  # disengage once slide > this (unscrewed out)
    leg_mass: float = 0.06
    leg_friction: float = 1.0
    stud_friction: float = 0.3
    nut_mass: float = 0.05
    nut_inertia: float = 2e-5
    nut_armature: float = 0.0  # extra rotor inertia of the thread hinge (kg m^2)
    eq_timeconst: float = 0.003  # solref time constant of the weld and the coupling

    def __post_init__(self) -> None:
        positive = ("pitch", "engagement", "radial_clearance", "engage_radius", "tilt_limit", "release_margin",
                    "leg_mass", "nut_mass", "nut_inertia", "eq_timeconst", "catch_tolerance")
        non_negative = ("lead", "thread_friction", "leg_friction", "stud_friction", "nut_armature")
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"ThreadParams.{f.name} must be a finite number, got {v!r}")
            if f.name in positive and v <= 0:
                raise ValueError(f"ThreadParams.{f.name} must be > 0, got {v!r}")
            if f.name in non_negative and v < 0:
                raise ValueError(f"ThreadParams.{f.name} must be >= 0, got {v!r}")
        if self.catch_tolerance >= self.release_margin:
            raise ValueError(f"ThreadParams.catch_tolerance must be < release_margin, got {self.catch_tolerance!r}")
        if self.tilt_limit >= math.pi / 2:
            raise ValueError(f"ThreadParams.tilt_limit must be < pi/2, got {self.tilt_limit!r}")
        if self.engage_radius >= STUD_RADIUS:
            raise ValueError(f"ThreadParams.engage_radius must be < {STUD_RADIUS}, got {self.engage_radius!r}")
        if self.engagement + self.lead > 2 * TABLETOP_HALF[2] - 0.004:
            raise ValueError(f"ThreadParams.engagement + lead must fit in the tabletop, got {self.engagement!r}")

    @property
    def stud_length(self) -> float:
        return self.engagement + self.lead

    @property
    def pocket_radius(self) -> float:
        return STUD_RADIUS + self.radial_clearance

    @property
    def slide_per_rad(self) -> float:
        """Slide advance per hinge radian (m/rad)."""
        return self.pitch / (2 * math.pi)

    @property
    def tip_local(self) -> tuple[float, float, float]:
        """The stud tip in the leg frame."""
        return (0.0, 0.0, -(LEG_HALF[2] + self.stud_length))


# ---- spec construction --------------------------------------------------------------------
def _box(body: mujoco.MjsBody, name: str, pos, half, rgba, contype: int, conaffinity: int,
         quat=(1.0, 0.0, 0.0, 0.0), friction: float = 1.0) -> mujoco.MjsGeom:
    g = body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(half), pos=list(pos), quat=list(quat))
    if name:
        g.name = name
    g.rgba = list(rgba)
    g.contype, g.conaffinity = contype, conaffinity
    g.friction = [friction, 0.005, 0.0001]
    g.mass = 0.0
    return g


def _set_inertial(body: mujoco.MjsBody, mass: float, inertia: Sequence[float]) -> None:
    """Explicit inertial at the body origin (an unset ``ipos`` would otherwise compile to the body's ``pos``)."""
    body.explicitinertial = True
    body.mass = mass
    body.ipos = [0.0, 0.0, 0.0]
    body.iquat = [1.0, 0.0, 0.0, 0.0]
    body.inertia = list(inertia)


def _frame_boxes(x0: float, x1: float, y0: float, y1: float, cx: float, cy: float,
                 gap: float) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """(centre, half) of up to 4 boxes that tile [x0,x1]x[y0,y1] minus the square [cx+-gap]x[cy+-gap]."""
    pieces = [(x0, cx - gap, y0, y1), (cx + gap, x1, y0, y1), (cx - gap, cx + gap, y0, cy - gap),
              (cx - gap, cx + gap, cy + gap, y1)]
    return [(((a + b) / 2, (c + d) / 2), ((b - a) / 2, (d - c) / 2)) for a, b, c, d in pieces
            if b - a > 1e-6 and d - c > 1e-6]


def _add_slab_with_hole(body: mujoco.MjsBody, prefix: str, half, center: tuple[float, float], gap: float,
                        rgba) -> None:
    for i, ((x, y), (hx, hy)) in enumerate(
            _frame_boxes(-half[0], half[0], -half[1], half[1], center[0], center[1], gap)):
        _box(body, f"{prefix}_slab{i}", (x, y, half[2]), (hx, hy, half[2]), rgba, CONTYPE_DEFAULT,
             CONTYPE_DEFAULT | CONTYPE_THREAD)


def _add_pocket(body: mujoco.MjsBody, prefix: str, center: tuple[float, float], top: float, params: ThreadParams,
                depth: float) -> None:
    """A round pocket on +z at ``center``: a 45-degree entrance chamfer ``lead`` deep, then a straight ring."""
    n, r = POCKET_SEGMENTS, params.pocket_radius
    cx, cy = center
    straight = depth - params.lead
    s2 = math.sqrt(0.5)
    for i in range(n):
        th = 2 * math.pi * i / n
        c, s = math.cos(th), math.sin(th)
        qz = (math.cos(th / 2), 0.0, 0.0, math.sin(th / 2))
        rad = r + POCKET_WALL
        pos = (cx + rad * c, cy + rad * s, top - params.lead - straight / 2)
        half = (POCKET_WALL, (r + 2 * POCKET_WALL) * math.tan(math.pi / n), straight / 2)
        _box(body, f"{prefix}_ring{i}", pos, half, _RGBA_POCKET, CONTYPE_THREAD, CONTYPE_THREAD, qz,
             params.stud_friction)
        if params.lead > 0:  # chamfer: inner face from (r, top - lead) to (r + lead, top)
            mr, mz = r + params.lead / 2 + CHAMFER_WALL * s2, top - params.lead / 2 - CHAMFER_WALL * s2
            qy = (math.cos(math.pi / 8), 0.0, math.sin(math.pi / 8), 0.0)  # 45 deg about local y
            quat = _quat_mul_scalar(qz, qy)
            half_c = (CHAMFER_WALL, (r + params.lead + 2 * CHAMFER_WALL) * math.tan(math.pi / n),
                      params.lead * s2)
            _box(body, f"{prefix}_chamfer{i}", (cx + mr * c, cy + mr * s, mz), half_c, _RGBA_POCKET,
                 CONTYPE_THREAD, CONTYPE_THREAD, quat, params.stud_friction)


def _add_tabletop(spec: mujoco.MjSpec, params: ThreadParams, pos) -> mujoco.MjsBody:
    tt = spec.worldbody.add_body(name=TABLETOP_BODY, pos=list(pos), mocap=True)
    gap = params.pocket_radius + params.lead  # slab edge meets the chamfer's outer rim
    _add_slab_with_hole(tt, TABLETOP_BODY, TABLETOP_HALF, HOLE_POS, gap, _RGBA_TABLETOP)
    _add_pocket(tt, "hole", HOLE_POS, TABLETOP_TOP, params, params.stud_length + 0.002)
    tt.add_site(name=HOLE_SITE, pos=[HOLE_POS[0], HOLE_POS[1], TABLETOP_TOP], size=[0.002, 0, 0])
    nut = tt.add_body(name=NUT_BODY, pos=[HOLE_POS[0], HOLE_POS[1], TABLETOP_TOP - params.lead])
    _set_inertial(nut, params.nut_mass, [params.nut_inertia] * 3)
    nut.gravcomp = 1.0  # a free nut stays where it is
    slide = nut.add_joint(name=SLIDE_JOINT, type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, 0, 1])
    slide.limited = mujoco.mjtLimited.mjLIMITED_TRUE
    slide.range = [-params.engagement, 2 * params.release_margin]
    slide.solref_limit = list(_SOLREF_STIFF)
    slide.solimp_limit = list(_SOLIMP_STIFF)
    hinge = nut.add_joint(name=HINGE_JOINT, type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, -1])
    # the seat stop is (also) on the hinge: MuJoCo scales a constraint's softness by the *uncoupled* inverse
    # inertia of its dofs, which for the slide (geared 1571:1 to the hinge) is far too large to stop a screw
    hinge.limited = mujoco.mjtLimited.mjLIMITED_TRUE
    hinge_range = (-2 * params.release_margin / params.slide_per_rad, params.engagement / params.slide_per_rad)
    hinge.range = [math.degrees(v) for v in hinge_range] if spec.compiler.degree else list(hinge_range)
    hinge.solref_limit = list(_SOLREF_STIFF)
    hinge.solimp_limit = list(_SOLIMP_STIFF)
    hinge.frictionloss = params.thread_friction
    hinge.armature = params.nut_armature
    stop = nut.add_geom(name=STOP_GEOM, type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                        size=[params.pocket_radius - 0.0003, STOP_HALF_THICK, 0],
                        pos=[0, 0, -STOP_GAP - STOP_HALF_THICK])
    stop.contype = stop.conaffinity = CONTYPE_THREAD
    stop.rgba = list(_RGBA_POCKET)
    stop.mass = 0.0
    return tt


def _add_leg(spec: mujoco.MjSpec, params: ThreadParams, rack_pos) -> None:
    hx, hy, hz = LEG_HALF
    leg = spec.worldbody.add_body(name=LEG_BODY, pos=[rack_pos[0], rack_pos[1], rack_pos[2] + RACK_TOP + hz])
    leg.add_freejoint(name=LEG_JOINT)
    m = params.leg_mass
    _set_inertial(leg, m, [m / 3 * (hy * hy + hz * hz), m / 3 * (hx * hx + hz * hz), m / 3 * (hx * hx + hy * hy)])
    box = _box(leg, LEG_BOX_GEOM, (0, 0, 0), LEG_HALF, _RGBA_LEG, CONTYPE_DEFAULT, CONTYPE_DEFAULT,
               friction=params.leg_friction)
    box.condim = 4
    half_len = params.stud_length / 2
    stud = leg.add_geom(name=LEG_STUD_GEOM, type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[STUD_RADIUS, half_len, 0],
                        pos=[0, 0, -hz - half_len])
    stud.rgba = list(_RGBA_STUD)
    stud.contype, stud.conaffinity = CONTYPE_THREAD, CONTYPE_DEFAULT | CONTYPE_THREAD
    stud.friction = [params.stud_friction, 0.005, 0.0001]
    stud.condim = 3
    stud.mass = 0.0
    leg.add_site(name=LEG_TIP_SITE, pos=list(params.tip_local), size=[0.0015, 0, 0])


def _add_rack(spec: mujoco.MjSpec, pos) -> None:
    rack = spec.worldbody.add_body(name=RACK_BODY, pos=list(pos), mocap=True)
    _add_slab_with_hole(rack, RACK_BODY, RACK_HALF, (0.0, 0.0), RACK_GAP_HALF, _RGBA_RACK)


def _add_equalities(spec: mujoco.MjSpec, params: ThreadParams) -> None:
    solref = [params.eq_timeconst, 1.0]
    solimp = list(_SOLIMP_STIFF)
    # hinge = -(2 pi / pitch) * slide, i.e. slide = -pitch / (2 pi) * hinge. Written with the hinge as joint1:
    # MuJoCo's softness estimate for a joint equality sums the two dofs' inverse inertias unscaled by the
    # coefficient, which is right (stiff) this way round and 2500x too soft the other way round.
    cpl = spec.add_equality(name=COUPLING_EQ, type=mujoco.mjtEq.mjEQ_JOINT, objtype=mujoco.mjtObj.mjOBJ_JOINT,
                            name1=HINGE_JOINT, name2=SLIDE_JOINT)
    cpl.data = [0.0, -1.0 / params.slide_per_rad, 0, 0, 0] + [0.0] * (mujoco.mjNEQDATA - 5)
    cpl.solref, cpl.solimp = solref, solimp
    weld = spec.add_equality(name=WELD_EQ, type=mujoco.mjtEq.mjEQ_WELD, objtype=mujoco.mjtObj.mjOBJ_BODY,
                             name1=NUT_BODY, name2=LEG_BODY)
    # anchor (leg frame) = stud tip, relpos (nut frame) = nut origin, relquat = aligned, torquescale 1
    weld.data = list(params.tip_local) + [0, 0, 0, 1, 0, 0, 0, 1] + [0.0] * (mujoco.mjNEQDATA - 11)
    weld.solref, weld.solimp = solref, solimp
    weld.active = False
    lock = spec.add_equality(name=LOCK_EQ, type=mujoco.mjtEq.mjEQ_JOINT, objtype=mujoco.mjtObj.mjOBJ_JOINT,
                             name1=HINGE_JOINT)
    lock.data = [0.0] * mujoco.mjNEQDATA  # hinge = data[0] (set per simulation when it disengages deep)
    lock.solref, lock.solimp = solref, solimp
    lock.active = True


def add_table_leg_objects(spec: mujoco.MjSpec, params: ThreadParams = ThreadParams(), *,
                          tabletop_pos: Sequence[float] = (0.45, 0.20, 0.0),
                          rack_pos: Sequence[float] = (0.45, -0.10, 0.0)) -> None:
    """Adds the tabletop (mocap) with hole pocket + nut (stop disk, slide/hinge, coupling and active lock
    equalities), the leg (free, upright on the rack), the rack (mocap) and the inactive weld. Positions are those
    of the bodies' bottom-face centres on a work surface at z = 0. Sets ``spec.compiler.autolimits``; no floor."""
    spec.compiler.autolimits = True
    _add_tabletop(spec, params, tabletop_pos)
    _add_rack(spec, rack_pos)
    _add_leg(spec, params, rack_pos)
    _add_equalities(spec, params)


# ---- vectorised quaternion helpers (w, x, y, z) -------------------------------------------------
def _quat_mul_scalar(a, b) -> tuple[float, float, float, float]:
    return tuple(float(v) for v in quat_mul(np.asarray(a, float), np.asarray(b, float)))


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of (..., 4) quaternions."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def quat_conj(q: np.ndarray) -> np.ndarray:
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate (..., 3) vectors by (..., 4) unit quaternions."""
    u, w = q[..., 1:], q[..., :1]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def quat_zaxis(q: np.ndarray) -> np.ndarray:
    """The rotated +z axis, (..., 3), of (..., 4) unit quaternions."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], -1)


def quat_rotz(angle: np.ndarray) -> np.ndarray:
    """(...,) angles about +z -> (..., 4) quaternions."""
    half = 0.5 * np.asarray(angle, float)
    zero = np.zeros_like(half)
    return np.stack([np.cos(half), zero, zero, np.sin(half)], -1)


def _normalize(q: np.ndarray) -> np.ndarray:
    return q / np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), 1e-12)


# ---- poses ------------------------------------------------------------------------------------
def assembled_leg_pose(tabletop_pos: np.ndarray, tabletop_quat: np.ndarray,
                       yaw: np.ndarray | float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The leg body's world pose (pos (B,3), quat (B,4)) when fully seated in the hole of a tabletop at
    (tabletop_pos (B,3), tabletop_quat (B,4)); ``yaw`` is the leg's turn about the hole axis (square: mod pi/2)."""
    p_t, q_t = np.atleast_2d(tabletop_pos), _normalize(np.atleast_2d(tabletop_quat))
    local = np.array([HOLE_POS[0], HOLE_POS[1], TABLETOP_TOP + LEG_HALF[2]])
    pos = p_t + quat_rotate(q_t, np.broadcast_to(local, p_t.shape))
    yaw = np.broadcast_to(np.asarray(yaw, float), (len(p_t),))
    return pos, quat_mul(q_t, quat_rotz(yaw))


def leg_qpos_on_rack(rack_pos: np.ndarray, leg_yaw: np.ndarray | float = 0.0) -> np.ndarray:
    """(n, 7) free-joint qpos that stands the leg upright, stud down, in the (square, centred) cradle of racks at
    ``rack_pos`` (n, 3; bottom-face centres); ``leg_yaw`` (n,) is the leg's world yaw."""
    rack_pos = np.atleast_2d(np.asarray(rack_pos, float))
    n = len(rack_pos)
    leg_yaw = np.broadcast_to(np.asarray(leg_yaw, float), (n,))
    out = np.empty((n, 7))
    out[:, :3] = rack_pos + np.array([0.0, 0.0, RACK_TOP + LEG_HALF[2]])
    out[:, 3:] = quat_rotz(leg_yaw)
    return out


# ---- runtime -------------------------------------------------------------------------------------
class ThreadState:
    """The thread's engagement logic, vectorised over the B simulations of a ``mujoco.batch.Batch``.

    Array arguments are the batch's live arrays (first axis = simulation), written in place: ``qpos``, ``qvel``,
    ``eq_active``, ``mocap_pos``, ``mocap_quat`` from ``Batch.bind`` and ``eq_data`` from
    ``Batch.expand("eq_data")`` (the weld's relative pose and the lock's angle are per simulation).
    :meth:`arrays` collects them. Everything is computed from the state (free joint + mocap pose), so no
    forward pass is needed between a state write and :meth:`update`.
    """

    def __init__(self, model: mujoco.MjModel, params: ThreadParams = ThreadParams()) -> None:
        self.params = params
        self.leg_body = model.body(LEG_BODY).id
        self.tabletop_body = model.body(TABLETOP_BODY).id
        self.rack_body = model.body(RACK_BODY).id
        self.tabletop_mocap = int(model.body_mocapid[self.tabletop_body])
        self.rack_mocap = int(model.body_mocapid[self.rack_body])
        leg_j = model.joint(LEG_JOINT)
        self.leg_qadr, self.leg_dadr = int(leg_j.qposadr[0]), int(leg_j.dofadr[0])
        slide, hinge = model.joint(SLIDE_JOINT), model.joint(HINGE_JOINT)
        self.slide_qadr, self.slide_dadr = int(slide.qposadr[0]), int(slide.dofadr[0])
        self.hinge_qadr, self.hinge_dadr = int(hinge.qposadr[0]), int(hinge.dofadr[0])
        self.weld_eq = model.equality(WELD_EQ).id
        self.lock_eq = model.equality(LOCK_EQ).id
        self.coupling_eq = model.equality(COUPLING_EQ).id
        self._tip_local = np.array(params.tip_local)
        self._entrance_local = np.array([HOLE_POS[0], HOLE_POS[1], TABLETOP_TOP])
        self._check_model(model)

    def _check_model(self, model: mujoco.MjModel) -> None:
        c1 = model.eq_data[self.coupling_eq, 1]
        if not np.isclose(c1, -1.0 / self.params.slide_per_rad, rtol=1e-6):
            raise ValueError(f"model's thread coupling {c1} does not match ThreadParams.pitch={self.params.pitch}")
        lo = model.jnt_range[model.joint(SLIDE_JOINT).id, 0]
        if not np.isclose(lo, -self.params.engagement):
            raise ValueError(f"model's slide range {lo} does not match ThreadParams.engagement")

    @staticmethod
    def arrays(batch: mujoco.batch.Batch) -> dict[str, np.ndarray]:
        """The live arrays :meth:`update` needs, from a ``mujoco.batch.Batch`` (expands ``eq_data``)."""
        out = {n: batch.bind(n) for n in ("qpos", "qvel", "eq_active", "mocap_pos", "mocap_quat")}
        out["eq_data"] = batch.expand("eq_data")
        return out

    # ---- geometry -------------------------------------------------------------------------------
    def leg_pose(self, qpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(B,3) position and (B,4) unit quaternion of the leg body, from its free joint."""
        a = self.leg_qadr
        return qpos[:, a:a + 3], _normalize(qpos[:, a + 3:a + 7])

    def tabletop_pose(self, mocap_pos: np.ndarray, mocap_quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return mocap_pos[:, self.tabletop_mocap], _normalize(mocap_quat[:, self.tabletop_mocap])

    def tip_in_hole(self, qpos: np.ndarray, mocap_pos: np.ndarray,
                    mocap_quat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(radial offset of the stud tip from the hole axis, tip depth below the entrance, tilt), each (B,)."""
        p_l, q_l = self.leg_pose(qpos)
        p_t, q_t = self.tabletop_pose(mocap_pos, mocap_quat)
        z_l = quat_zaxis(q_l)
        tip = p_l + z_l * self._tip_local[2]  # the tip is on the leg axis
        rel = quat_rotate(quat_conj(q_t), tip - p_t) - self._entrance_local
        cos = np.einsum("bi,bi->b", z_l, quat_zaxis(q_t))
        return np.hypot(rel[:, 0], rel[:, 1]), -rel[:, 2], np.arccos(np.clip(cos, -1.0, 1.0))

    def tilt(self, qpos: np.ndarray, mocap_quat: np.ndarray) -> np.ndarray:
        """(B,) angle between the leg axis and the hole axis (rad)."""
        z_l = quat_zaxis(self.leg_pose(qpos)[1])
        z_t = quat_zaxis(_normalize(mocap_quat[:, self.tabletop_mocap]))
        return np.arccos(np.clip(np.einsum("bi,bi->b", z_l, z_t), -1.0, 1.0))

    # ---- state queries -------------------------------------------------------------------------
    def engaged(self, eq_active: np.ndarray) -> np.ndarray:
        return eq_active[:, self.weld_eq] > 0.5

    def depth(self, qpos: np.ndarray) -> np.ndarray:
        """(B,) how far the leg has threaded in (m, 0..engagement)."""
        return np.clip(-qpos[:, self.slide_qadr], 0.0, self.params.engagement)

    def seated(self, qpos: np.ndarray, mocap_quat: np.ndarray) -> np.ndarray:
        """(B,) fully threaded (slide <= -(engagement - 1 mm)) and upright (tilt < 0.025 rad)."""
        deep = qpos[:, self.slide_qadr] <= -(self.params.engagement - 0.001)
        return deep & (self.tilt(qpos, mocap_quat) < 0.025)

    def assembled_leg_pose(self, mocap_pos: np.ndarray, mocap_quat: np.ndarray,
                           yaw: np.ndarray | float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """The leg's seated world pose for each simulation's tabletop mocap pose."""
        return assembled_leg_pose(*self.tabletop_pose(mocap_pos, mocap_quat), yaw)

    # ---- transitions ---------------------------------------------------------------------------
    def update(self, qpos: np.ndarray, qvel: np.ndarray, eq_active: np.ndarray, mocap_pos: np.ndarray,
               mocap_quat: np.ndarray, eq_data: np.ndarray) -> np.ndarray:
        """Engage / disengage every simulation as its leg dictates; returns (B,) engaged.

        Call once per control step, after the physics step and before reading observations."""
        p = self.params
        radial, tip_depth, tilt = self.tip_in_hole(qpos, mocap_pos, mocap_quat)
        active = self.engaged(eq_active)
        slide = qpos[:, self.slide_qadr]
        pulled_out = active & (slide > p.release_margin)
        tilted = active & ~pulled_out & (tilt > p.tilt_limit)
        catch = (~active & (radial <= p.engage_radius) & (tilt <= p.tilt_limit)
                 & (tip_depth >= p.lead - p.catch_tolerance))
        if pulled_out.any():
            self._disengage(np.flatnonzero(pulled_out), np.zeros(int(pulled_out.sum())), qpos, qvel, eq_active,
                            eq_data)
        # a free nut below the thread start (after a tilt release) rides up with the stud, never down
        follow = tilted | (~active & ~catch & (slide < 0.0))
        if follow.any():
            ids = np.flatnonzero(follow)
            under_tip = np.clip(p.lead - tip_depth, -p.engagement, 0.0)
            self._disengage(ids, np.where(tilted, under_tip, np.maximum(slide, under_tip))[ids], qpos, qvel,
                            eq_active, eq_data)
        if catch.any():
            self._engage(np.flatnonzero(catch), tip_depth, qpos, qvel, eq_active, mocap_quat, eq_data)
        return self.engaged(eq_active)

    def _set_nut(self, ids: np.ndarray, slide: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        hinge = -slide / self.params.slide_per_rad
        qpos[ids, self.slide_qadr], qpos[ids, self.hinge_qadr] = slide, hinge
        qvel[ids, self.slide_dadr] = qvel[ids, self.hinge_dadr] = 0.0
        return hinge

    def _engage(self, ids: np.ndarray, tip_depth: np.ndarray, qpos: np.ndarray, qvel: np.ndarray,
                eq_active: np.ndarray, mocap_quat: np.ndarray, eq_data: np.ndarray) -> None:
        p = self.params
        hinge0 = self._set_nut(ids, np.clip(p.lead - tip_depth[ids], -p.engagement, 0.0), qpos, qvel)
        q_t = _normalize(mocap_quat[ids, self.tabletop_mocap])
        q_rel = quat_mul(quat_conj(q_t), self.leg_pose(qpos[ids])[1])  # leg in the tabletop frame
        yaw = 2.0 * np.arctan2(q_rel[:, 3], q_rel[:, 0])  # its twist about the hole axis
        # nut frame = tabletop turned by -hinge0 about +z (the hinge axis is -z); the weld keeps the leg's yaw and
        # puts the tip on the axis, upright (a snap of at most engage_radius / tilt_limit)
        eq_data[ids, self.weld_eq, 3:6] = 0.0
        eq_data[ids, self.weld_eq, 6:10] = quat_rotz(yaw + hinge0)
        eq_active[ids, self.weld_eq] = 1.0
        eq_active[ids, self.lock_eq] = 0.0

    def _disengage(self, ids: np.ndarray, slide: np.ndarray, qpos: np.ndarray, qvel: np.ndarray,
                   eq_active: np.ndarray, eq_data: np.ndarray) -> None:
        eq_data[ids, self.lock_eq, 0] = self._set_nut(ids, slide, qpos, qvel)
        eq_active[ids, self.weld_eq] = 0.0
        eq_active[ids, self.lock_eq] = 1.0

    def reset(self, ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray, eq_active: np.ndarray,
              eq_data: np.ndarray) -> None:
        """Disengage ``ids`` and put their nut joints (and the lock) at 0."""
        ids = np.asarray(ids, dtype=np.int64).ravel()
        self._disengage(ids, np.zeros(len(ids)), qpos, qvel, eq_active, eq_data)

    def place_leg_on_rack(self, ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray, mocap_pos: np.ndarray,
                          rack_pos: np.ndarray, leg_yaw: np.ndarray | float = 0.0) -> None:
        """Move the racks of simulations ``ids`` to ``rack_pos`` (len(ids), 3; bottom-face centres) and stand
        their legs upright on them, turned ``leg_yaw``, at rest."""
        ids = np.asarray(ids, dtype=np.int64).ravel()
        rack_pos = np.broadcast_to(np.asarray(rack_pos, float), (len(ids), 3))
        mocap_pos[ids, self.rack_mocap] = rack_pos
        a, d = self.leg_qadr, self.leg_dadr
        qpos[ids, a:a + 7] = leg_qpos_on_rack(rack_pos, leg_yaw)
        qvel[ids, d:d + 6] = 0.0
