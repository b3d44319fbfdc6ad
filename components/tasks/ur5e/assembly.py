"""What differs between the UR5e tasks: their objects, where they start and where they are when assembled.

:class:`Assembly` is the interface :class:`~.env.UR5eEnv` calls; :class:`PegAssembly` is the 16 mm square
peg and its hole block. The table leg is :class:`~.leg.LegAssembly`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdist.components.tasks.ur5e.profiles import PegProfile
from simdist.components.tasks.ur5e.scene import (
    HOLE_BLOCK_HALF,
    PEG_GRASP_OFFSET,
    PEG_HALF,
    PegGeometry,
    add_peg_objects,
)

#: in-hand noise of the grasped training resets (Factory-style): +-3 mm along the axis, +-5 degrees of yaw
IN_HAND_NOISE = (0.003, np.deg2rad(5.0))


def yaw_quat(yaw: float) -> np.ndarray:
    return np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])


def nearest_square_yaw(yaw: float, reference: float) -> float:
    """``yaw`` shifted by a multiple of 90 degrees to lie within 45 degrees of ``reference`` (square symmetry)."""
    return float(reference + (yaw - reference + np.pi / 4) % (np.pi / 2) - np.pi / 4)


class Assembly:
    """Interface of a task's objects. Subclasses set ``object_body`` (the free body the robot carries),
    ``object_joint`` (its free joint), ``receptacle_mocap`` and ``grasp_offset`` (TCP above the object's
    centre in a nominal grasp)."""

    object_body: str
    object_joint: str
    receptacle_mocap: str
    grasp_offset: float
    half_width: float
    extra_obs_dim: int = 0

    def default_profile(self) -> Any:
        raise NotImplementedError

    def clearance(self, profile: Any) -> float:
        raise NotImplementedError

    def add_to_spec(self, spec: Any, profile: Any) -> None:
        raise NotImplementedError

    def goal_offset(self) -> np.ndarray:
        """The object's centre when assembled, in the receptacle body's frame."""
        raise NotImplementedError

    def receptacle_body(self) -> str:
        raise NotImplementedError

    def object_geoms(self) -> list[str]:
        raise NotImplementedError

    def receptacle_geoms(self) -> list[str]:
        raise NotImplementedError

    # ---- shared behaviour ---------------------------------------------------------------------------
    def bind(self, env: Any) -> None:
        m = env.model
        self.body_id = m.body(self.object_body).id
        self.qadr = int(m.joint(self.object_joint).qposadr[0])
        self.dadr = int(m.joint(self.object_joint).dofadr[0])
        self.mocap_id = int(m.body(self.receptacle_mocap).mocapid[0])
        self.receptacle_id = m.body(self.receptacle_body()).id
        self.object_geom_ids = np.array([m.geom(g).id for g in self.object_geoms()])
        self.receptacle_geom_ids = np.array([m.geom(g).id for g in self.receptacle_geoms()])

    def apply_physics(self, env: Any, ids: np.ndarray) -> None:
        prm = env.params
        env.m_mass[ids, self.body_id] = prm["object_mass"][ids]
        env.m_friction[ids[:, None], self.object_geom_ids[None], 0] = prm["object_friction"][ids, None]
        env.m_friction[ids[:, None], self.receptacle_geom_ids[None], 0] = prm["receptacle_friction"][ids, None]

    def object_pose(self, env: Any) -> tuple[np.ndarray, np.ndarray]:
        return env.body_pose(self.body_id)

    def assembled_pose(self, env: Any) -> tuple[np.ndarray, np.ndarray]:
        pos, rot = env.body_pose(self.receptacle_id)
        return pos + np.einsum("bij,j->bi", rot, self.goal_offset()), rot

    def success_now(self, env: Any, state: dict[str, np.ndarray]) -> np.ndarray:
        from simdist.components.tasks.ur5e.config import SUCCESS_POS_TOL, SUCCESS_TILT_TOL

        return (state["distance"] < SUCCESS_POS_TOL) & (state["tilt"] < SUCCESS_TILT_TOL)

    def extra_obs(self, env: Any) -> np.ndarray:
        return np.zeros((env.num_envs, 0))

    def on_reset(self, env: Any, ids: np.ndarray) -> None:
        return None

    def after_step(self, env: Any) -> None:
        return None

    def place_receptacle(self, env: Any, e: int, pose: np.ndarray) -> None:
        x, y, yaw = pose
        env.mocap_pos[e, self.mocap_id] = (x, y, 0.0)
        env.mocap_quat[e, self.mocap_id] = yaw_quat(yaw)

    def place_object(self, env: Any, e: int, pose: np.ndarray) -> None:
        """Upright on the table at (x, y, yaw)."""
        x, y, yaw = pose
        env.qpos[e, self.qadr:self.qadr + 7] = [x, y, self.rest_height(), *yaw_quat(yaw)]

    def rest_height(self) -> float:
        """The object's centre height standing on the table."""
        raise NotImplementedError

    def place_in_hand(self, env: Any, e: int, tcp: np.ndarray, rot: np.ndarray) -> None:
        """The object upright between the closed fingers, with in-hand noise."""
        rng = env._rng
        yaw = float(np.arctan2(rot[1, 0], rot[0, 0])) + rng.uniform(-1, 1) * IN_HAND_NOISE[1]
        centre = tcp + rot[:, 2] * (self.grasp_offset + rng.uniform(-1, 1) * IN_HAND_NOISE[0])
        env.qpos[e, self.qadr:self.qadr + 7] = [*centre, *yaw_quat(yaw)]

    def grasped_start(self, env: Any, e: int, kind: str, rng: np.random.Generator
                      ) -> tuple[np.ndarray, float, float]:
        """(TCP position, gripper yaw, finger opening) of a grasped training reset of ``kind``."""
        rx, ry, ryaw = env.mocap_pos[e, self.mocap_id, 0], env.mocap_pos[e, self.mocap_id, 1], float(
            2 * np.arctan2(env.mocap_quat[e, self.mocap_id, 3], env.mocap_quat[e, self.mocap_id, 0]))
        goal = np.array([rx, ry, 0.0]) + np.array([0.0, 0.0, self.goal_offset()[2]])
        if kind == "grasped":
            tcp = rng.uniform([0.3, -0.2, 0.1], [0.6, 0.15, 0.25])
            yaw = float(rng.uniform(-np.pi / 4, np.pi / 4))
        elif kind == "near_receptacle":
            lift = rng.uniform(0.005, 0.04)
            tcp = goal + np.array([*rng.uniform(-0.015, 0.015, 2), self.insert_depth() + lift + self.grasp_offset])
            yaw = nearest_square_yaw(ryaw + rng.uniform(-0.2, 0.2), 0.0)
        elif kind == "inserted":
            depth = rng.uniform(0.002, 0.6 * self.insert_depth())
            tcp = goal + np.array([*rng.uniform(-2e-4, 2e-4, 2), self.insert_depth() - depth + self.grasp_offset])
            yaw = nearest_square_yaw(ryaw + rng.uniform(-0.02, 0.02), 0.0)
        else:
            raise ValueError(f"unknown reset kind {kind!r}")
        return tcp, yaw, self.half_width

    def insert_depth(self) -> float:
        """How far the object travels from touching the receptacle's entrance to assembled (m)."""
        raise NotImplementedError


class PegAssembly(Assembly):
    """The 16 mm square peg (60 mm long) and the 30 mm deep through-hole block."""

    object_body, object_joint, receptacle_mocap = "peg", "peg_free", "hole"
    grasp_offset = PEG_GRASP_OFFSET
    half_width = PEG_HALF[0]

    def default_profile(self) -> PegProfile:
        return PegProfile()

    def clearance(self, profile: PegProfile) -> float:
        return float(profile.clearance)

    def add_to_spec(self, spec: Any, profile: PegProfile) -> None:
        add_peg_objects(spec, PegGeometry(clearance=profile.clearance), profile.fixture_stiffness)

    def receptacle_body(self) -> str:
        return "hole_block"

    def goal_offset(self) -> np.ndarray:
        return np.array([0.0, 0.0, PEG_HALF[2]])

    def object_geoms(self) -> list[str]:
        return ["peg_geom"]

    def receptacle_geoms(self) -> list[str]:
        return [f"hole_wall_{a}{k}" for a in ("x", "y") for k in (0, 1)]

    def rest_height(self) -> float:
        return PEG_HALF[2] + 1e-4

    def expert_variants(self) -> list[Any]:
        """Named expert settings beyond the degraded ladder: ``retuned`` (for proxy-real cells)."""
        from simdist.components.tasks.ur5e.expert import retuned_params

        return [retuned_params()]

    def insert_depth(self) -> float:
        return 2 * HOLE_BLOCK_HALF[2]


__all__ = ["Assembly", "PegAssembly", "nearest_square_yaw", "yaw_quat"]
