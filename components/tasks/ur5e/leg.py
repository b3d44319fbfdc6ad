"""The table-leg task's objects for :class:`~.env.UR5eEnv`: a 30 mm square leg on a rack, threaded into a tabletop.

The leg (free body ``leg``, a 30 x 30 x 62.5 mm box with an M8-like stud) starts standing stud-down in the
cradle of a small rack (mocap ``leg_rack``); the grid moves the rack, so the start pose (x, y, yaw) is the
rack's and the leg's. The receptacle is the upside-down tabletop (mocap ``tabletop``, 150 mm square), turned
by :data:`TABLETOP_TURN` about its corner hole so that the hole lands on the grid's receptacle pose and the
slab lies on the far side of it, away from the robot and the starts (x 0.42-0.59 m, y 0.22-0.39 m over the
receptacle jitter; every training start's rack stays below y = 0.157 m, at least 65 mm away; see
:func:`tabletop_footprint` and :func:`rack_footprint`). The thread is :mod:`.threading`'s engagement-activated
helix: the stud pushed into the hole rests on the thread start until the leg is twisted (clockwise seen from
above, 2 turns of a 4 mm pitch); :class:`LegAssembly` runs its :class:`~.threading.ThreadState` after every
control step.

Success (MANIPULATION.md 2.9) is the thread's ``seated`` (slide within 1 mm of the seat, tilt < 0.025 rad)
*and* the shared tolerance test (within 2.5 mm of the seated pose, ``|roll| + |pitch| < 0.025`` rad; yaw
ignored), held 5 steps. The object observation group gets two extras: the threaded depth as a fraction of
the engagement (index 27) and the engaged flag (index 28).

The scripted expert is :class:`~.leg_expert.LegExpert`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdist.components.tasks.ur5e.assembly import IN_HAND_NOISE, Assembly, yaw_quat
from simdist.components.tasks.ur5e.grids import GRIDS, RECEPTACLE_XY
from simdist.components.tasks.ur5e.profiles import LegProfile
from simdist.components.tasks.ur5e.threading import (
    HOLE_POS,
    LEG_BODY,
    LEG_BOX_GEOM,
    LEG_HALF,
    LEG_JOINT,
    RACK_BODY,
    RACK_HALF,
    RACK_TOP,
    TABLETOP_BODY,
    TABLETOP_HALF,
    TABLETOP_TOP,
    ThreadParams,
    ThreadState,
    add_table_leg_objects,
)

#: the tabletop's yaw about its hole relative to the receptacle pose: its slab lies towards +x, +y of the hole
TABLETOP_TURN = np.pi
#: the TCP sits this far above the leg's centre in a nominal grasp (the pads stay on the leg's faces and clear
#: the rack when grasping and the tabletop when seated)
LEG_GRASP_OFFSET = 0.01
#: nominal thread pitch (m per turn); a profile's ``pitch_error`` adds to it
NOMINAL_PITCH = ThreadParams().pitch


def thread_params(profile: LegProfile) -> ThreadParams:
    """The thread mechanism's parameters on ``profile`` (pitch + error, radial clearance, thread friction)."""
    return ThreadParams(pitch=NOMINAL_PITCH + float(profile.pitch_error),
                        radial_clearance=float(profile.radial_clearance),
                        thread_friction=float(profile.thread_friction))


def tabletop_pose(x: float, y: float, yaw: float) -> tuple[np.ndarray, np.ndarray]:
    """(position, quaternion) of the tabletop body whose hole is at (x, y) with the receptacle yaw ``yaw``."""
    turn = yaw + TABLETOP_TURN
    c, s = np.cos(turn), np.sin(turn)
    hx, hy = HOLE_POS
    return np.array([x - (c * hx - s * hy), y - (s * hx + c * hy), 0.0]), yaw_quat(turn)


def tabletop_footprint(x: float, y: float, yaw: float) -> np.ndarray:
    """(4, 2) corners of the tabletop's slab for a receptacle pose."""
    pos, _ = tabletop_pose(x, y, yaw)
    turn = yaw + TABLETOP_TURN
    c, s = np.cos(turn), np.sin(turn)
    hx, hy = TABLETOP_HALF[:2]
    local = np.array([[hx, hy], [-hx, hy], [-hx, -hy], [hx, -hy]])
    return pos[:2] + local @ np.array([[c, s], [-s, c]])


def rack_footprint(x: float, y: float, yaw: float) -> np.ndarray:
    """(4, 2) corners of the rack for a start pose."""
    c, s = np.cos(yaw), np.sin(yaw)
    hx, hy = RACK_HALF[:2]
    local = np.array([[hx, hy], [-hx, hy], [-hx, -hy], [hx, -hy]])
    return np.array([x, y]) + local @ np.array([[c, s], [-s, c]])


class LegAssembly(Assembly):
    """The FurnitureBench-like square leg, its start rack and the tabletop with the threaded corner hole."""

    object_body, object_joint, receptacle_mocap = LEG_BODY, LEG_JOINT, TABLETOP_BODY
    grasp_offset = LEG_GRASP_OFFSET
    half_width = LEG_HALF[0]
    extra_obs_dim = 2  # threaded depth fraction (object obs 27), engaged flag (28)
    threaded = True

    def __init__(self) -> None:
        self._pending: dict[int, tuple[str, np.ndarray, float]] = {}

    # ---- construction ------------------------------------------------------------------------------
    def default_profile(self) -> LegProfile:
        return LegProfile()

    def clearance(self, profile: LegProfile) -> float:
        return float(profile.radial_clearance)

    def thread_turns(self) -> float:
        """Turns from the thread start to the seat on the nominal thread (what the expert plans with)."""
        return ThreadParams().engagement / NOMINAL_PITCH

    def add_to_spec(self, spec: Any, profile: LegProfile) -> None:
        params = thread_params(profile)
        tt_pos, tt_quat = tabletop_pose(*RECEPTACLE_XY, 0.0)
        wide = GRIDS["wide"]
        add_table_leg_objects(spec, params, tabletop_pos=tt_pos, rack_pos=(*wide.center, 0.0))
        spec.body(TABLETOP_BODY).quat = list(tt_quat)

    def receptacle_body(self) -> str:
        return TABLETOP_BODY

    def goal_offset(self) -> np.ndarray:
        return np.array([HOLE_POS[0], HOLE_POS[1], TABLETOP_TOP + LEG_HALF[2]])

    def object_geoms(self) -> list[str]:
        return [LEG_BOX_GEOM]

    def receptacle_geoms(self) -> list[str]:
        return self._slab_names

    def bind(self, env: Any) -> None:
        m = env.model
        tt = m.body(TABLETOP_BODY).id
        self._slab_names = [m.geom(g).name for g in range(m.ngeom)
                            if m.geom_bodyid[g] == tt and m.geom(g).name.startswith(f"{TABLETOP_BODY}_slab")]
        super().bind(env)
        self.thread = thread_params(env.profile)
        self.ts = ThreadState(m, self.thread)
        self.arrays = ThreadState.arrays(env.batch)
        self.rack_mocap = int(m.body(RACK_BODY).mocapid[0])
        self.hinge_dof = self.ts.hinge_dadr
        self.m_frictionloss = env.batch.expand("dof_frictionloss")
        self._pending = {}

    # ---- physics -------------------------------------------------------------------------------------
    def apply_physics(self, env: Any, ids: np.ndarray) -> None:
        """The base's mass and friction (the leg's mass range is twice the peg's: U(0.04, 0.12) kg, nominal
        0.06, unless the profile fixes it) plus the profile's thread friction on the thread hinge."""
        prm = env.params
        if env.profile.object_mass is None:
            prm["object_mass"][ids] *= 2.0
        super().apply_physics(env, ids)
        self.m_frictionloss[ids, self.hinge_dof] = float(env.profile.thread_friction)

    # ---- poses ---------------------------------------------------------------------------------------
    def assembled_pose(self, env: Any) -> tuple[np.ndarray, np.ndarray]:
        from simdist.components.tasks.ur5e.robot import quat_to_rotmat

        pos, quat = self.ts.assembled_leg_pose(env.mocap_pos, env.mocap_quat)
        return pos, quat_to_rotmat(quat)

    def rest_height(self) -> float:
        return RACK_TOP + LEG_HALF[2]

    def insert_depth(self) -> float:
        return ThreadParams().stud_length

    def success_now(self, env: Any, state: dict[str, np.ndarray]) -> np.ndarray:
        return self.ts.seated(env.qpos, env.mocap_quat) & super().success_now(env, state)

    def extra_obs(self, env: Any) -> np.ndarray:
        depth = self.ts.depth(env.qpos) / self.thread.engagement
        return np.column_stack([depth, self.ts.engaged(env.eq_active).astype(float)])

    def after_step(self, env: Any) -> None:
        self.ts.update(**self.arrays)

    # ---- resets (between batch.reset and batch.forward, per env) ------------------------------------
    def place_receptacle(self, env: Any, e: int, pose: np.ndarray) -> None:
        """The tabletop with its hole at (x, y), turned ``yaw``; also resets env ``e``'s thread (disengaged, nut
        at the thread start), which must follow the batch reset and precede the leg's placement."""
        a = self.arrays
        self.ts.reset(np.array([e]), a["qpos"], a["qvel"], a["eq_active"], a["eq_data"])
        pos, quat = tabletop_pose(*pose)
        env.mocap_pos[e, self.mocap_id] = pos
        env.mocap_quat[e, self.mocap_id] = quat
        self._pending.pop(e, None)

    def _place_rack(self, env: Any, e: int, x: float, y: float, yaw: float) -> None:
        env.mocap_pos[e, self.rack_mocap] = (x, y, 0.0)
        env.mocap_quat[e, self.rack_mocap] = yaw_quat(yaw)

    def place_object(self, env: Any, e: int, pose: np.ndarray) -> None:
        """The rack at (x, y, yaw) with the leg standing upright in its cradle, turned ``yaw``."""
        x, y, yaw = (float(v) for v in pose)
        self._place_rack(env, e, x, y, yaw)
        a = self.arrays
        self.ts.place_leg_on_rack(np.array([e]), a["qpos"], a["qvel"], env.mocap_pos, np.array([[x, y, 0.0]]), yaw)

    def grasped_start(self, env: Any, e: int, kind: str, rng: np.random.Generator
                      ) -> tuple[np.ndarray, float, float]:
        """(TCP position, gripper yaw, finger opening) of a grasped reset: ``grasped`` (anywhere above the work
        area), ``near_receptacle`` (stud tip 5-40 mm above the hole, +-15 mm off its axis) or ``inserted``
        (engaged and threaded 0-60 % of the way). The empty rack stays at the start pose."""
        self._place_rack(env, e, *(float(v) for v in env.starts[e, :3]))
        pull = self.grasp_offset + rng.uniform(-1, 1) * IN_HAND_NOISE[0]
        yaw = float(rng.uniform(-np.pi / 4, np.pi / 4))
        seat, _ = self.ts.assembled_leg_pose(env.mocap_pos[e:e + 1], env.mocap_quat[e:e + 1])
        seat = seat[0]
        p = self.thread
        if kind == "grasped":
            centre = rng.uniform([0.3, -0.2, 0.1], [0.6, 0.15, 0.25]) - np.array([0.0, 0.0, self.grasp_offset])
        elif kind == "near_receptacle":
            centre = seat + np.array([*rng.uniform(-0.015, 0.015, 2), p.stud_length + rng.uniform(0.005, 0.04)])
        elif kind == "inserted":
            depth = rng.uniform(0.0, 0.6 * p.engagement)
            centre = seat + np.array([0.0, 0.0, p.engagement - depth])
        else:
            raise ValueError(f"unknown reset kind {kind!r}")
        leg_yaw = yaw + float(rng.uniform(-1, 1) * IN_HAND_NOISE[1])
        self._pending[e] = (kind, centre, leg_yaw)
        return centre + np.array([0.0, 0.0, pull]), yaw, self.half_width

    def place_in_hand(self, env: Any, e: int, tcp: np.ndarray, rot: np.ndarray) -> None:
        """The leg upright between the closed fingers (pose drawn by :meth:`grasped_start`, in-hand noise
        included); an ``inserted`` leg is engaged in the thread at its depth."""
        kind, centre, leg_yaw = self._pending.pop(e)
        a = self.arrays
        a["qpos"][e, self.qadr:self.qadr + 7] = [*centre, *yaw_quat(leg_yaw)]
        a["qvel"][e, self.dadr:self.dadr + 6] = 0.0
        if kind == "inserted":  # the thread catches at the leg's depth (views: only env e is touched)
            self.ts.update(**{k: v[e:e + 1] for k, v in a.items()})

    # ---- the expert --------------------------------------------------------------------------------
    def expert_class(self) -> type:
        from simdist.components.tasks.ur5e.leg_expert import LegExpert

        return LegExpert

    def expert_variants(self) -> list[Any]:
        """Extra named scripted policies for :func:`~.expert.make_expert` (``retuned``: for ``table-leg-real``)."""
        from simdist.components.tasks.ur5e.leg_expert import leg_expert_variants

        return leg_expert_variants()


__all__ = ["LEG_GRASP_OFFSET", "LegAssembly", "TABLETOP_TURN", "rack_footprint", "tabletop_footprint",
           "tabletop_pose", "thread_params"]
