"""The UR5e work cell: the table, the three cameras and the peg-insertion objects, added to the robot's spec.

The table top is level with the robot base (z = 0), as on the real cell. The hole block is a mocap body, so
its pose is physics state and each batched simulation can have its own; it is built from four boxes (a
mesh would collide as its convex hull, a solid block), with a square through hole of ``16 + 2 c`` mm for a
clearance ``c`` per side, so a seated peg stands on the table.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

PEG_HALF = (0.008, 0.008, 0.03)  # 16 x 16 x 60 mm
HOLE_BLOCK_HALF = (0.03, 0.03, 0.015)  # 60 x 60 x 30 mm
#: the TCP sits this far above the peg's centre in a nominal grasp (pads clear the block when seated)
PEG_GRASP_OFFSET = 0.022
#: camera placements (OmniReset's front/side/wrist cameras): position, look-at point, vertical fov (deg); both
#: frame the Wide grid (x 0.28-0.63, y -0.23-0.13), the hole block at (0.45, 0.25) and the gripper up to z 0.35
CAMERAS = {
    "front": ((1.077, -0.168, 0.449), (0.45, 0.03, 0.1), 50.0),
    "side": ((0.832, 0.588, 0.281), (0.45, 0.05, 0.08), 50.0),
}
WRIST_CAMERA_FOVY = 70.0


@dataclass(frozen=True)
class PegGeometry:
    """Peg-in-hole geometry: ``clearance`` per side (m), peg mass (kg) and friction."""

    clearance: float = 0.0005
    peg_mass: float = 0.03
    peg_friction: float = 1.0
    hole_friction: float = 0.4
    table_friction: float = 0.45

    def __post_init__(self) -> None:
        if not 0.0 < self.clearance < 0.005:
            raise ValueError(f"clearance must be in (0, 5 mm), got {self.clearance}")
        if not 0.001 <= self.peg_mass <= 2.0:
            raise ValueError(f"peg_mass must be in [0.001, 2] kg, got {self.peg_mass}")


def look_at(pos: np.ndarray, target: np.ndarray, up: np.ndarray = (0.0, 0.0, 1.0)) -> np.ndarray:
    """Quaternion of a MuJoCo camera at ``pos`` looking at ``target`` (camera -z forward, +y towards ``up``),
    both in the camera's parent frame."""
    fwd = np.asarray(target, float) - np.asarray(pos, float)
    fwd /= np.linalg.norm(fwd)
    right = np.cross(fwd, np.asarray(up, float))
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    mat = np.column_stack([right, up, -fwd])
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, mat.ravel())
    return quat


def add_table(spec: mujoco.MjSpec, friction: float) -> None:
    """The table plane at z = 0, a light and the fixed cameras (front, side)."""
    table = spec.worldbody.add_geom(name="table", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[1.0, 1.0, 0.05],
                                    rgba=[0.62, 0.55, 0.45, 1.0])
    table.friction = [friction, 0.005, 0.0001]
    spec.worldbody.add_light(name="top", pos=[0.4, 0.0, 1.5], dir=[0, 0, -1], castshadow=False)
    for name, (pos, target, fovy) in CAMERAS.items():
        spec.worldbody.add_camera(name=name, pos=list(pos), quat=list(look_at(np.array(pos), np.array(target))),
                                  fovy=fovy)


def add_wrist_camera(spec: mujoco.MjSpec) -> None:
    """A camera on the gripper base looking along the approach axis past the fingers: in the base's frame (z:
    approach, fingers along y) it sits on the housing's -x side and tilts in towards a point 12 cm beyond the
    TCP (0.13 m out), image up away from the fingers, so the fingertips and a grasped object are in the lower
    half of the view and the table ahead in the upper."""
    pos, target = np.array([-0.05, 0.0, 0.06]), np.array([0.0, 0.0, 0.25])
    quat = look_at(pos, target, up=np.array([-1.0, 0.0, 0.0]))
    spec.body("gripper_base").add_camera(name="wrist", pos=list(pos), quat=list(quat), fovy=WRIST_CAMERA_FOVY)


def _box(body: mujoco.MjsBody, name: str, half, pos, friction: float, rgba) -> mujoco.MjsGeom:
    g = body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=list(half), pos=list(pos), rgba=rgba)
    g.friction = [friction, 0.005, 0.0001]
    g.condim = 4
    return g


def add_peg_objects(spec: mujoco.MjSpec, geom: PegGeometry, fixture_stiffness: float | None = None) -> None:
    """The free peg (``peg``, joint ``peg_free``) and the hole block (body ``hole_block``, frame at the table)
    under the mocap ``hole``; with ``fixture_stiffness`` (N/m) the block sits on x/y springs (+-10 mm)."""
    peg = spec.worldbody.add_body(name="peg", pos=[0.45, -0.05, PEG_HALF[2]])
    peg.add_freejoint(name="peg_free")
    g = _box(peg, "peg_geom", PEG_HALF, (0, 0, 0), geom.peg_friction, [0.2, 0.7, 0.3, 1.0])
    g.mass = geom.peg_mass

    mount = spec.worldbody.add_body(name="hole", mocap=True, pos=[0.45, 0.25, 0.0])
    block = mount.add_body(name="hole_block")
    if fixture_stiffness is not None:
        block.explicitinertial = True
        block.mass, block.inertia = 0.5, [1e-3, 1e-3, 1e-3]
        damping = 2.0 * np.sqrt(fixture_stiffness * 0.5) * 0.3
        for axis, name in (([1, 0, 0], "fixture_x"), ([0, 1, 0], "fixture_y")):
            block.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_SLIDE, axis=axis, range=[-0.01, 0.01],
                            stiffness=[fixture_stiffness, 0, 0], damping=[damping, 0, 0])
    w = PEG_HALF[0] + geom.clearance  # half width of the opening
    bx, by, bz = HOLE_BLOCK_HALF
    green = [0.15, 0.5, 0.25, 1.0]
    long_half = (bx, (by - w) / 2, bz)  # two walls over the full length in x
    short_half = ((bx - w) / 2, w, bz)  # two walls between them in y
    for k, s in enumerate((1.0, -1.0)):
        _box(block, f"hole_wall_y{k}", long_half, (0, s * (w + long_half[1]), bz), geom.hole_friction, green)
        _box(block, f"hole_wall_x{k}", short_half, (s * (w + short_half[0]), 0, bz), geom.hole_friction, green)
