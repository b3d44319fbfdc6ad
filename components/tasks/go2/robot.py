"""MjSpec builder for the Unitree Go2 (primitive collision geoms, PD position actuators).

Physical figures (masses, inertias, link offsets, joint ranges) are those of MuJoCo
Menagerie ``unitree_go2/go2_mjx.xml``, retyped as numbers; the model is built here with
``mujoco.MjSpec`` and never loaded from that XML. Collision uses primitives (box trunk,
head sphere, thigh/calf capsules, foot spheres r 0.022) and robot geoms collide only
with the environment, never with each other.

Joint and actuator order is Unitree's: FR, FL, RR, RL x (hip, thigh, calf).
Each actuator is a ``general`` actuator with an affine bias, i.e. a PD controller
evaluated at every physics substep: ``tau = clip(Kp (q* - q) - Kd qdot, +-23.5)``.
"""

from __future__ import annotations

import mujoco
import numpy as np

LEGS: tuple[str, ...] = ("FR", "FL", "RR", "RL")
PARTS: tuple[str, ...] = ("hip", "thigh", "calf")
JOINT_NAMES: tuple[str, ...] = tuple(f"{leg}_{part}_joint" for leg in LEGS for part in PARTS)
FOOT_NAMES: tuple[str, ...] = tuple(f"{leg}_foot" for leg in LEGS)
THIGH_BODIES: tuple[str, ...] = tuple(f"{leg}_thigh" for leg in LEGS)

#: Isaac default pose in Unitree order (hips +-0.1, front thighs 0.8, rear 1.0, calves -1.5).
DEFAULT_JOINT_POS = np.array(
    [-0.1, 0.8, -1.5, 0.1, 0.8, -1.5, -0.1, 1.0, -1.5, 0.1, 1.0, -1.5], dtype=np.float64
)
KP = 25.0
KD = 0.5
TORQUE_LIMIT = 23.5
ACTION_SCALE = 0.25
VELOCITY_LIMIT = 30.0  # rad/s; informational (MuJoCo has no joint speed clamp)
PHYSICS_DT = 0.005
N_SUBSTEPS = 4
CONTROL_DT = PHYSICS_DT * N_SUBSTEPS  # 0.02 s -> 50 Hz
FOOT_RADIUS = 0.022
ARMATURE = 0.01
JOINT_DAMPING = 0.1  # small, so that Kd = 0.5 dominates (Menagerie uses 2)
FOOT_FRICTION = 0.8
NOMINAL_BASE_HEIGHT = 0.34  # spawn height of the base above ground at the default pose

# ---- Menagerie go2_mjx.xml figures -------------------------------------------------
TRUNK_MASS = 6.921
TRUNK_IPOS = (0.021112, 0.0, -0.005366)
TRUNK_IQUAT = (-0.000543471, 0.713435, -0.00173769, 0.700719)
TRUNK_INERTIA = (0.107027, 0.0980771, 0.0244531)
HIP_MASS = 0.678
HIP_INERTIA = (0.00088403, 0.000596003, 0.000479967)
THIGH_MASS = 1.152
THIGH_INERTIA = (0.00594973, 0.00584149, 0.000878787)
CALF_MASS = 0.241352  # calf 0.154 + foot ~0.087 in the Menagerie figure
CALF_INERTIA = (0.0014901, 0.00146356, 5.31397e-05)
HIP_X, HIP_Y = 0.1934, 0.0465
THIGH_Y = 0.0955
LINK_LENGTH = 0.213
HIP_RANGE = (-1.0472, 1.0472)
FRONT_THIGH_RANGE = (-1.5708, 3.4907)
REAR_THIGH_RANGE = (-0.5236, 4.5379)
CALF_RANGE = (-2.7227, -0.83776)
TOTAL_MASS = TRUNK_MASS + 4 * (HIP_MASS + THIGH_MASS + CALF_MASS)  # ~15.21 kg

# Per-leg inertial frames (pos, quat), mirrored as in Menagerie.
_HIP_IFRAME = {
    "FL": ((-0.0054, 0.00194, -0.000105), (0.497014, 0.499245, 0.505462, 0.498237)),
    "FR": ((-0.0054, -0.00194, -0.000105), (0.498237, 0.505462, 0.499245, 0.497014)),
    "RL": ((0.0054, 0.00194, -0.000105), (0.505462, 0.498237, 0.497014, 0.499245)),
    "RR": ((0.0054, -0.00194, -0.000105), (0.499245, 0.497014, 0.498237, 0.505462)),
}
_THIGH_LEFT = ((-0.00374, -0.0223, -0.0327), (0.829533, 0.0847635, -0.0200632, 0.551623))
_THIGH_RIGHT = ((-0.00374, 0.0223, -0.0327), (0.551623, -0.0200632, 0.0847635, 0.829533))
_CALF_LEFT = ((0.00629595, -0.000622121, -0.141417), (0.710672, 0.00154099, -0.00450087, 0.703508))
_CALF_RIGHT = ((0.00629595, 0.000622121, -0.141417), (0.703508, -0.00450087, 0.00154099, 0.710672))

# Collision filtering: robot geoms (contype 1, conaffinity 0) touch only geoms with
# conaffinity 1 (the terrain), never each other.
ROBOT_CONTYPE, ROBOT_CONAFFINITY = 1, 0
WORLD_CONTYPE, WORLD_CONAFFINITY = 0, 1


def _set_inertial(body: mujoco.MjsBody, mass: float, ipos, iquat, inertia) -> None:
    body.explicitinertial = True
    body.mass = mass
    body.ipos = ipos
    body.iquat = iquat
    body.inertia = inertia


def _collision_geom(body: mujoco.MjsBody, name: str = "", **kw) -> mujoco.MjsGeom:
    g = body.add_geom(**kw)
    if name:
        g.name = name
    g.contype, g.conaffinity = ROBOT_CONTYPE, ROBOT_CONAFFINITY
    g.condim = 3
    g.group = 3
    g.mass = 0.0  # inertia comes from the explicit inertials
    return g


def _add_joint(body: mujoco.MjsBody, name: str, axis, rng: tuple[float, float]) -> None:
    j = body.add_joint()
    j.name = name
    j.type = mujoco.mjtJoint.mjJNT_HINGE
    j.axis = axis
    j.range = rng
    j.limited = mujoco.mjtLimited.mjLIMITED_TRUE
    j.armature = ARMATURE
    try:
        j.damping = [JOINT_DAMPING, 0.0, 0.0]  # a 3-vector in mujoco >= 4
    except TypeError:  # mujoco 3.x: a scalar
        j.damping = JOINT_DAMPING
    j.frictionloss = 0.0


def _add_leg(base: mujoco.MjsBody, leg: str) -> None:
    sx = 1.0 if leg[0] == "F" else -1.0
    sy = 1.0 if leg[1] == "L" else -1.0
    hip = base.add_body(name=f"{leg}_hip", pos=[sx * HIP_X, sy * HIP_Y, 0.0])
    _set_inertial(hip, HIP_MASS, *_HIP_IFRAME[leg], HIP_INERTIA)
    _add_joint(hip, f"{leg}_hip_joint", [1, 0, 0], HIP_RANGE)

    thigh = hip.add_body(name=f"{leg}_thigh", pos=[0.0, sy * THIGH_Y, 0.0])
    tpos, tquat = _THIGH_LEFT if sy > 0 else _THIGH_RIGHT
    _set_inertial(thigh, THIGH_MASS, tpos, tquat, THIGH_INERTIA)
    _add_joint(thigh, f"{leg}_thigh_joint", [0, 1, 0], FRONT_THIGH_RANGE if sx > 0 else REAR_THIGH_RANGE)
    _collision_geom(
        thigh, f"{leg}_thigh_col", type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=[0.022, 0, 0],
        fromto=[-0.012, 0, -0.04, -0.012, 0, -0.17],
    )

    calf = thigh.add_body(name=f"{leg}_calf", pos=[0.0, 0.0, -LINK_LENGTH])
    cpos, cquat = _CALF_LEFT if sy > 0 else _CALF_RIGHT
    _set_inertial(calf, CALF_MASS, cpos, cquat, CALF_INERTIA)
    _add_joint(calf, f"{leg}_calf_joint", [0, 1, 0], CALF_RANGE)
    _collision_geom(
        calf, f"{leg}_calf_col", type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=[0.013, 0, 0],
        fromto=[0.006, 0, -0.02, 0.018, 0, -0.17],
    )
    foot = _collision_geom(
        calf, f"{leg}_foot", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[FOOT_RADIUS, 0, 0],
        pos=[-0.002, 0, -LINK_LENGTH],
    )
    foot.priority = 1  # foot material decides friction/solref against the terrain
    foot.friction = [FOOT_FRICTION, 0.02, 0.01]
    calf.add_site(name=f"{leg}_foot_site", pos=[-0.002, 0, -LINK_LENGTH], size=[0.01, 0, 0])


def _add_actuators(spec: mujoco.MjSpec) -> None:
    for name in JOINT_NAMES:
        a = spec.add_actuator()
        a.name = name.removesuffix("_joint")
        a.target = name
        a.trntype = mujoco.mjtTrn.mjTRN_JOINT
        a.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        a.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        a.gainprm[0] = KP
        a.biasprm[:3] = [0.0, -KP, -KD]
        a.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        a.forcerange = [-TORQUE_LIMIT, TORQUE_LIMIT]
        a.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE


def _add_contact_sensor(spec: mujoco.MjSpec, name: str, objtype, objname: str, torque: bool) -> None:
    """Net contact force (world frame; 3, or 6 with torque) on a geom or body, against anything.

    MuJoCo reports the force that the object exerts on the others; negate it for the
    force the object receives.
    """
    s = spec.add_sensor()
    s.name = name
    s.type = mujoco.mjtSensor.mjSENS_CONTACT
    s.objtype = objtype
    s.objname = objname
    s.intprm[:3] = [6 if torque else 2, 3, 1]  # data=force(|torque), reduce=netforce, num=1


#: sensordata layout: 4 feet x (force 3, torque 3), base force 3, 4 thighs x force 3.
SENSOR_FOOT = slice(0, 24)
SENSOR_BASE = slice(24, 27)
SENSOR_THIGHS = slice(27, 39)


def _add_sensors(spec: mujoco.MjSpec) -> None:
    for leg in LEGS:
        _add_contact_sensor(spec, f"{leg}_foot_force", mujoco.mjtObj.mjOBJ_GEOM, f"{leg}_foot", True)
    _add_contact_sensor(spec, "base_force", mujoco.mjtObj.mjOBJ_BODY, "base", False)
    for leg in LEGS:
        _add_contact_sensor(spec, f"{leg}_thigh_force", mujoco.mjtObj.mjOBJ_BODY, f"{leg}_thigh", False)


def _set_options(spec: mujoco.MjSpec) -> None:
    spec.compiler.degree = False  # MjSpec defaults to degrees
    spec.option.timestep = PHYSICS_DT
    spec.option.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL
    spec.option.solver = mujoco.mjtSolver.mjSOL_NEWTON
    spec.option.iterations = 10
    spec.option.ls_iterations = 5
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER


def build_go2_spec(floor: bool = True, floor_friction: float = 1.0) -> mujoco.MjSpec:
    """Build the Go2 (and, with ``floor=True``, a flat ground plane) as an ``MjSpec``.

    Terrain modules add their own ground with ``floor=False``. The base body is named
    ``"base"`` with a free joint at its origin; the head sphere and trunk box are on it.
    """
    spec = mujoco.MjSpec()
    spec.modelname = "go2"
    _set_options(spec)
    if floor:
        g = spec.worldbody.add_geom(
            name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05]
        )
        g.contype, g.conaffinity = WORLD_CONTYPE, WORLD_CONAFFINITY
        g.friction = [floor_friction, 0.005, 0.0001]
        g.condim = 3

    base = spec.worldbody.add_body(name="base", pos=[0, 0, NOMINAL_BASE_HEIGHT])
    _set_inertial(base, TRUNK_MASS, TRUNK_IPOS, TRUNK_IQUAT, TRUNK_INERTIA)
    base.add_freejoint(name="root")
    _collision_geom(base, "trunk", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.1881, 0.047, 0.057])
    _collision_geom(base, "head", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.05, 0, 0], pos=[0.285, 0, 0.01])
    base.add_site(name="imu", pos=[-0.02557, 0, 0.04232], size=[0.01, 0, 0])
    for leg in LEGS:
        _add_leg(base, leg)
    _add_actuators(spec)
    _add_sensors(spec)
    return spec


def home_qpos(model: mujoco.MjModel, height: float = NOMINAL_BASE_HEIGHT) -> np.ndarray:
    """Generalised position at the default pose: base at ``height``, identity orientation."""
    q = np.zeros(model.nq)
    q[2] = height
    q[3] = 1.0
    q[7:19] = DEFAULT_JOINT_POS
    return q
