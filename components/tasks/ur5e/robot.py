"""MjSpec builder for a UR5e with a parallel-jaw gripper under Cartesian impedance control.

Physical figures (masses, inertias, link offsets, joint ranges) are those of MuJoCo Menagerie
``universal_robots_ur5e/ur5e.xml``, retyped as numbers; the model is built here with ``mujoco.MjSpec``
and never loaded from that XML. The gripper is a parallel-jaw stand-in for the Robotiq 2F-85 (two slide
fingers coupled by a joint equality, 85 mm stroke, 22 x 6.4 x 37.5 mm pads, the TCP 0.1303 m from the
gripper base, as SimDist's ``ee_link``).

Control runs in MuJoCo, with no Python per physics substep: six ``position`` actuators with a site
transmission from the ``tcp`` site to the ``target_site`` of a mocap body give
``tau = J^T (Kp e - Kd xdot)`` (OmniReset's OSC without inertia decoupling); the robot's bodies are
gravity-compensated (as the real UR compensates itself) and the joints carry the UR5e's torque limits
(150 / 28 N m) as ``actuatorfrcrange``, so the Cartesian actuators cannot exceed them. The contact recipe
(2 ms steps, implicitfast, elliptic cones, impratio 10, Newton 50 / 20, solref 0.004, solimp
0.95 / 0.99 / 0.001, margin 0, 3 no-slip iterations) is the one measured for sub-millimetre insertion;
:data:`CONTACT_RECIPES` also holds a cheaper one without the no-slip pass (``fast``: a stiffer gripper and
grippier pads hold the object instead).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import mujoco
import numpy as np

JOINT_NAMES: tuple[str, ...] = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                                "wrist_2_joint", "wrist_3_joint")
EE_ACTUATORS: tuple[str, ...] = ("ee_x", "ee_y", "ee_z", "ee_rx", "ee_ry", "ee_rz")
TORQUE_LIMITS = np.array([150.0, 150.0, 150.0, 28.0, 28.0, 28.0])
VELOCITY_LIMIT = np.pi  # rad/s, every joint
TCP_OFFSET = 0.1303  # m, gripper base to TCP along the approach axis
GRIPPER_STROKE = 0.0425  # m per finger (85 mm between the pads when open)
PAD_HALF = (0.011, 0.0032, 0.01875)  # 22 x 6.4 x 37.5 mm
PHYSICS_DT = 0.002

# Collision filtering: robot geoms touch the environment (conaffinity 1) but never each other.
ROBOT_CONTYPE, ROBOT_CONAFFINITY = 1, 0
ENV_CONTYPE, ENV_CONAFFINITY = 1, 1

# ---- Menagerie ur5e.xml figures: (name, pos in parent, quat in parent, mass, ipos, iquat, diaginertia)
_LINKS = (
    ("shoulder_link", (0, 0, 0.163), (1, 0, 0, 0), 3.7, (0, 0, 0), (1, 0, 0, 0), (0.0102675, 0.0102675, 0.00666)),
    ("upper_arm_link", (0, 0.138, 0), (1, 0, 1, 0), 8.393, (0, 0, 0.2125), (1, 0, 0, 0),
     (0.133886, 0.133886, 0.0151074)),
    ("forearm_link", (0, -0.131, 0.425), (1, 0, 0, 0), 2.275, (0, 0, 0.196), (1, 0, 0, 0),
     (0.0311796, 0.0311796, 0.004095)),
    ("wrist_1_link", (0, 0, 0.392), (1, 0, 1, 0), 1.219, (0, 0.127, 0), (1, 0, 0, 0),
     (0.0025599, 0.0025599, 0.0021942)),
    ("wrist_2_link", (0, 0.127, 0), (1, 0, 0, 0), 1.219, (0, 0, 0.1), (1, 0, 0, 0), (0.0025599, 0.0025599, 0.0021942)),
    ("wrist_3_link", (0, 0, 0.1), (1, 0, 0, 0), 0.1889, (0, 0.0771683, 0), (1, 0, 0, 1),
     (0.000132134, 9.90863e-05, 9.90863e-05)),
)
_AXES = ((0, 0, 1), (0, 1, 0), (0, 1, 0), (0, 1, 0), (0, 0, 1), (0, 1, 0))
_RANGES = ((-2 * np.pi, 2 * np.pi),) * 2 + ((-np.pi, np.pi),) + ((-2 * np.pi, 2 * np.pi),) * 3
# collision capsules/cylinders on the links that can reach the table and objects (Menagerie's set)
_COLLISION = {
    "forearm_link": [("capsule", (0.038, 0.19), (0, 0, 0.2), (1, 0, 0, 0))],
    "wrist_1_link": [("capsule", (0.04, 0.07), (0, 0.05, 0), (1, 1, 0, 0))],
    "wrist_2_link": [("capsule", (0.04, 0.06), (0, 0, 0.04), (1, 0, 0, 0)),
                     ("capsule", (0.04, 0.04), (0, 0.02, 0.1), (1, 1, 0, 0))],
    "wrist_3_link": [("cylinder", (0.04, 0.02), (0, 0.08, 0), (1, 1, 0, 0))],
}


@dataclass(frozen=True)
class ControllerGains:
    """Cartesian impedance gains (translation N/m, rotation N m/rad) and damping ratios.

    Defaults are OmniReset's real-robot values (Kp 1000 / 50, zeta 1); ``kv = 2 zeta sqrt(kp * inertia)``
    with ``inertia`` the effective mass (kg) or rotational inertia (kg m^2) the damping is sized for.
    """

    kp_pos: float = 1000.0
    kp_rot: float = 50.0
    zeta_pos: float = 1.0
    zeta_rot: float = 1.0
    mass_pos: float = 4.0
    inertia_rot: float = 0.1

    @property
    def kv_pos(self) -> float:
        return 2.0 * self.zeta_pos * float(np.sqrt(self.kp_pos * self.mass_pos))

    @property
    def kv_rot(self) -> float:
        return 2.0 * self.zeta_rot * float(np.sqrt(self.kp_rot * self.inertia_rot))


@dataclass(frozen=True)
class ContactRecipe:
    """How the grasp is held: no-slip iterations, the gripper actuator's stiffness (N/m) and the factor on the
    pads' friction (a profile's ``pad_friction`` is given for the ``noslip`` recipe's 1.2 pads);
    ``friction_solimp``: every joint's dry-friction impedance (None: MuJoCo's 0.9 / 0.95, under which joint
    friction creeps unless no-slip iterations make it exact)."""

    noslip_iterations: int
    grip_kp: float
    pad_scale: float
    friction_solimp: tuple[float, float, float] | None = None


#: ``noslip``: 3 no-slip iterations hold a grasped object when the target jumps (the calibrated physics);
#: ``fast``: none (about 30 % cheaper per physics step), a 8000 N/m gripper and pads at 2.0 instead of 1.2;
#: ``fast-stiff``: ``fast`` with joint dry friction (stiction, the thread) made stiff, so that it does not
#: creep without the no-slip pass (0.2 N m against 0.24 turns a joint 2 mrad in 1 s under ``fast``, 0.2 here;
#: stiffer still, 0.999, lets the solver drift the wrong way near the breakaway torque)
CONTACT_RECIPES: dict[str, ContactRecipe] = {
    "noslip": ContactRecipe(noslip_iterations=3, grip_kp=4000.0, pad_scale=1.0),
    "fast": ContactRecipe(noslip_iterations=0, grip_kp=8000.0, pad_scale=2.0 / 1.2),
    "fast-stiff": ContactRecipe(noslip_iterations=0, grip_kp=8000.0, pad_scale=2.0 / 1.2,
                                friction_solimp=(0.99, 0.999, 0.001)),
}


def contact_recipe(name: str) -> ContactRecipe:
    """The contact recipe ``name`` (``ValueError`` naming the ``contacts`` option and the recipes)."""
    if name not in CONTACT_RECIPES:
        raise ValueError(f"contacts must be one of {sorted(CONTACT_RECIPES)}, got {name!r}")
    return CONTACT_RECIPES[name]

def stiction_creep(contacts: str, friction: float = 0.24, torque: float = 0.2, seconds: float = 1.0) -> float:
    """How far (rad) a hinge of ``friction`` N m dry friction (armature 0.1) turns in ``seconds`` under a constant
    ``torque`` below it, with contact recipe ``contacts``'s solver options (exact friction would give 0)."""
    recipe = contact_recipe(contacts)
    spec = mujoco.MjSpec()
    set_contact_options(spec, recipe.noslip_iterations, recipe.friction_solimp)
    body = spec.worldbody.add_body(name="link")
    body.add_joint(name="hinge", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1], frictionloss=friction,
                   armature=0.1)
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.1, 0.02, 0.02], mass=1.0, contype=0, conaffinity=0)
    model = spec.compile()
    data = mujoco.MjData(model)
    data.qfrc_applied[0] = torque
    for _ in range(int(round(seconds / model.opt.timestep))):
        mujoco.mj_step(model, data)
    return float(data.qpos[0])


@dataclass(frozen=True)
class RobotConfig:
    """What the robot builder takes: joint armature/damping/friction, the controller, the gripper."""

    armature: float = 0.1
    joint_damping: float = 1.0
    joint_friction: float = 0.0
    gains: ControllerGains = field(default_factory=ControllerGains)
    grip_force: float = 40.0  # N, the gripper actuator's force limit
    grip_kp: float = 4000.0
    grip_kv: float = 20.0
    pad_friction: float = 1.2
    gripper_mass: float = 0.9
    noslip_iterations: int = 3
    friction_solimp: tuple[float, float, float] | None = None

    @classmethod
    def for_contacts(cls, contacts: str = "noslip", pad_friction: float = 1.2, **kw: float) -> RobotConfig:
        """The config under contact recipe ``contacts``; ``pad_friction`` is in the ``noslip`` recipe's terms."""
        rec = contact_recipe(contacts)
        return cls(grip_kp=rec.grip_kp, pad_friction=pad_friction * rec.pad_scale,
                   noslip_iterations=rec.noslip_iterations, friction_solimp=rec.friction_solimp, **kw)


def set_contact_options(spec: mujoco.MjSpec, noslip_iterations: int = 3,
                        friction_solimp: tuple[float, float, float] | None = None) -> None:
    """The measured contact recipe for sub-millimetre insertion (MANIPULATION.md 2.3); ``noslip_iterations``
    0 and ``friction_solimp`` (every joint's dry-friction impedance, the default for joints added later) are the
    ``fast`` recipes' (:data:`CONTACT_RECIPES`)."""
    spec.compiler.degree = False
    spec.compiler.autolimits = True
    opt = spec.option
    opt.timestep = PHYSICS_DT
    opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    opt.impratio = 10.0
    opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
    opt.iterations = 50
    opt.ls_iterations = 20
    # without no-slip iterations a grasped peg slips in the 4000 N/m, mu 1.2 grip when the target jumps (13/20 -> 20/20)
    opt.noslip_iterations = noslip_iterations
    g = spec.default.geom
    g.solref = [0.004, 1.0]
    g.solimp = [0.95, 0.99, 0.001, 0.5, 2.0]
    g.margin = 0.0
    g.contype, g.conaffinity = ENV_CONTYPE, ENV_CONAFFINITY
    if friction_solimp is not None:
        spec.default.joint.solimp_friction = [*friction_solimp, 0.5, 2.0]


def _inertial(body: mujoco.MjsBody, mass: float, ipos, iquat, inertia) -> None:
    body.explicitinertial = True
    body.mass, body.ipos, body.iquat, body.inertia = mass, ipos, iquat, inertia
    body.gravcomp = 1.0


def _robot_geom(body: mujoco.MjsBody, **kw) -> mujoco.MjsGeom:
    g = body.add_geom(**kw)
    g.contype, g.conaffinity = ROBOT_CONTYPE, ROBOT_CONAFFINITY
    g.mass = 0.0  # inertia comes from the explicit inertials
    g.group = 3
    g.rgba = [0.55, 0.6, 0.65, 1.0]
    return g


def _visual(body: mujoco.MjsBody, **kw) -> mujoco.MjsGeom:
    g = body.add_geom(**kw)
    g.contype = g.conaffinity = 0
    g.mass = 0.0
    g.group = 2
    return g


_GEOM = {"capsule": mujoco.mjtGeom.mjGEOM_CAPSULE, "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER}


def _add_arm(spec: mujoco.MjSpec, cfg: RobotConfig) -> mujoco.MjsBody:
    base = spec.worldbody.add_body(name="base", quat=[1, 0, 0, 1])
    _inertial(base, 4.0, (0, 0, 0), (1, 0, 0, 0), (0.00443333156, 0.00443333156, 0.0072))
    _visual(base, type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.075, 0.04, 0], pos=[0, 0, 0.04],
            rgba=[0.1, 0.1, 0.1, 1])
    parent = base
    for (name, pos, quat, mass, ipos, iquat, inertia), axis, rng, jname, limit in zip(
            _LINKS, _AXES, _RANGES, JOINT_NAMES, TORQUE_LIMITS):
        body = parent.add_body(name=name, pos=pos, quat=quat)
        _inertial(body, mass, ipos, iquat, inertia)
        j = body.add_joint(name=jname, type=mujoco.mjtJoint.mjJNT_HINGE, axis=axis, range=rng)
        j.armature = cfg.armature
        j.damping = [cfg.joint_damping, 0.0, 0.0]
        j.frictionloss = cfg.joint_friction
        j.actfrclimited = mujoco.mjtLimited.mjLIMITED_TRUE
        j.actfrcrange = [-limit, limit]
        for kind, size, gpos, gquat in _COLLISION.get(name, []):
            _robot_geom(body, type=_GEOM[kind], size=[*size, 0], pos=gpos, quat=gquat)
        if name in ("upper_arm_link", "forearm_link"):
            _visual(body, type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=[0.05 if name == "upper_arm_link" else 0.038,
                                                                      0.2, 0], pos=[0, 0, 0.2],
                    rgba=[0.49, 0.68, 0.8, 1])
        parent = body
    return parent


def _add_gripper(wrist3: mujoco.MjsBody, cfg: RobotConfig) -> None:
    """Gripper base on wrist 3's flange (its z axis along the flange normal), two slide fingers, the TCP."""
    grip = wrist3.add_body(name="gripper_base", pos=[0, 0.1, 0], quat=[-1, 1, 0, 0])
    finger_mass = 0.05
    _inertial(grip, cfg.gripper_mass - 2 * finger_mass, (0, 0, 0.05), (1, 0, 0, 0), (1.5e-3, 1.5e-3, 1.0e-3))
    _robot_geom(grip, type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.037, 0.035, 0], pos=[0, 0, 0.035])
    _robot_geom(grip, type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.02, 0.05, 0.01], pos=[0, 0, 0.08])
    grip.add_site(name="tcp", pos=[0, 0, TCP_OFFSET], size=[0.005, 0, 0], rgba=[1, 0, 0, 1], group=4)
    for side, sign in (("left", 1.0), ("right", -1.0)):
        finger = grip.add_body(name=f"{side}_finger", pos=[0, 0, 0])
        _inertial(finger, finger_mass, (0, sign * 0.02, 0.11), (1, 0, 0, 0), (1e-5, 1e-5, 1e-5))
        finger.add_joint(name=f"{side}_slide", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, sign, 0],
                         range=[0.0, GRIPPER_STROKE], armature=0.01, damping=[2.0, 0, 0])
        _robot_geom(finger, type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.011, 0.004, 0.02],
                    pos=[0, sign * 0.008, 0.095])
        pad = _robot_geom(finger, name=f"{side}_pad", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(PAD_HALF),
                          pos=[0, sign * PAD_HALF[1], TCP_OFFSET])
        pad.condim, pad.priority = 4, 1
        pad.friction = [cfg.pad_friction, 0.005, 0.0001]
        pad.rgba = [0.2, 0.2, 0.2, 1.0]


def _add_controller(spec: mujoco.MjSpec, cfg: RobotConfig) -> None:
    target = spec.worldbody.add_body(name="target", mocap=True)
    target.add_site(name="target_site", size=[0.004, 0, 0], rgba=[0, 1, 0, 0.5], group=4)
    g = cfg.gains
    for k, name in enumerate(EE_ACTUATORS):
        kp, kv = (g.kp_pos, g.kv_pos) if k < 3 else (g.kp_rot, g.kv_rot)
        a = spec.add_actuator(name=name, target="tcp", refsite="target_site", trntype=mujoco.mjtTrn.mjTRN_SITE)
        gear = [0.0] * 6
        gear[k] = 1.0
        a.gear = gear
        a.gaintype, a.biastype = mujoco.mjtGain.mjGAIN_FIXED, mujoco.mjtBias.mjBIAS_AFFINE
        a.gainprm[0] = kp
        a.biasprm[:3] = [0.0, -kp, -kv]
        a.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
    grip = spec.add_actuator(name="grip", target="left_slide", trntype=mujoco.mjtTrn.mjTRN_JOINT)
    grip.gaintype, grip.biastype = mujoco.mjtGain.mjGAIN_FIXED, mujoco.mjtBias.mjBIAS_AFFINE
    grip.gainprm[0] = cfg.grip_kp
    grip.biasprm[:3] = [0.0, -cfg.grip_kp, -cfg.grip_kv]
    grip.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
    grip.ctrlrange = [0.0, GRIPPER_STROKE]
    grip.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
    grip.forcerange = [-cfg.grip_force, cfg.grip_force]
    spec.add_equality(name="finger_coupling", type=mujoco.mjtEq.mjEQ_JOINT, name1="right_slide",
                      name2="left_slide", data=[0, 1, 0, 0, 0] + [0] * 7, solref=[0.004, 1.0])


def build_robot_spec(config: RobotConfig | None = None) -> mujoco.MjSpec:
    """A spec with the contact options, the arm at the world origin, the gripper and the Cartesian controller.

    Scenes add their table and objects to it. Actuator order: ``ee_x ... ee_rz`` (ctrl is unused: the
    mocap ``target`` sets the reference), then ``grip`` (ctrl = finger opening, 0 closed .. 0.0425 open).
    """
    cfg = config or RobotConfig()
    spec = mujoco.MjSpec()
    spec.modelname = "ur5e"
    set_contact_options(spec, cfg.noslip_iterations, cfg.friction_solimp)
    wrist3 = _add_arm(spec, cfg)
    _add_gripper(wrist3, cfg)
    _add_controller(spec, cfg)
    return spec


# ---- poses ------------------------------------------------------------------------------------------

#: TCP orientation pointing down (z along world -z), fingers opening along world y at yaw 0
DOWN = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]])
#: a joint configuration near which the downward IK is solved (elbow up, wrist down)
SEED_QPOS = np.array([-1.5708, -1.7, 1.9, -1.77, -1.5708, 0.0])


def yaw_down(yaw: float) -> np.ndarray:
    """The downward TCP orientation turned by ``yaw`` about world z."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ DOWN


def solve_ik(model: mujoco.MjModel, pos: np.ndarray, rot: np.ndarray, q0: np.ndarray | None = None,
             iters: int = 200, tol: float = 1e-6) -> np.ndarray:
    """Joint positions (6) putting the ``tcp`` site at ``pos`` with orientation ``rot`` (damped least squares).

    Raises ``ValueError`` when the pose is out of reach (residual above 1 mm / 0.01 rad).
    """
    data = mujoco.MjData(model)
    arm = np.array([model.joint(n).qposadr[0] for n in JOINT_NAMES])
    dofs = np.array([model.joint(n).dofadr[0] for n in JOINT_NAMES])
    site = model.site("tcp").id
    q = np.array(SEED_QPOS if q0 is None else q0, float)
    jp, jr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    for _ in range(iters):
        data.qpos[arm] = q
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        err_p = pos - data.site_xpos[site]
        err_r = rotation_error(rot, data.site_xmat[site].reshape(3, 3))
        err = np.concatenate([err_p, err_r])
        if np.linalg.norm(err) < tol:
            break
        mujoco.mj_jacSite(model, data, jp, jr, site)
        jac = np.vstack([jp[:, dofs], jr[:, dofs]])
        q = q + jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(6), err)
    if np.linalg.norm(err_p) > 1e-3 or np.linalg.norm(err_r) > 1e-2:
        raise ValueError(f"TCP pose {np.round(pos, 3).tolist()} is out of the UR5e's reach (IK residual "
                         f"{np.linalg.norm(err_p) * 1000:.1f} mm, {np.linalg.norm(err_r):.3f} rad)")
    return q


@lru_cache(maxsize=64)
def home_qpos(pos: tuple[float, float, float] = (0.45, 0.0, 0.25), yaw: float = 0.0) -> np.ndarray:
    """Arm joints for the TCP at ``pos`` pointing down at ``yaw`` (cached; on the default robot's kinematics)."""
    model = build_robot_spec().compile()
    return solve_ik(model, np.array(pos), yaw_down(yaw))


def rotation_error(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    """Rotation vector (world frame) taking ``current`` to ``target`` (3x3 matrices)."""
    return rotmat_to_rotvec(target @ current.T)


def rotvec_to_rotmat(v: np.ndarray) -> np.ndarray:
    """Rodrigues: (..., 3) rotation vectors to (..., 3, 3) matrices."""
    v = np.asarray(v, float)
    theta = np.linalg.norm(v, axis=-1, keepdims=True)[..., None]
    k = v / np.maximum(theta[..., 0], 1e-12)
    kx, ky, kz = k[..., 0], k[..., 1], k[..., 2]
    zero = np.zeros_like(kx)
    km = np.stack([np.stack([zero, -kz, ky], -1), np.stack([kz, zero, -kx], -1), np.stack([-ky, kx, zero], -1)], -2)
    eye = np.broadcast_to(np.eye(3), km.shape)
    return eye + np.sin(theta) * km + (1 - np.cos(theta)) * (km @ km)


def rotmat_to_rotvec(r: np.ndarray) -> np.ndarray:
    """(..., 3, 3) rotation matrices to (..., 3) rotation vectors (angle in [0, pi])."""
    return quat_to_rotvec(rotmat_to_quat(r))


def quat_to_rotvec(q: np.ndarray) -> np.ndarray:
    """(..., 4) quaternions (w, x, y, z) to (..., 3) rotation vectors."""
    q = np.asarray(q, float)
    q = q * np.where(q[..., :1] < 0, -1.0, 1.0)
    v, w = q[..., 1:], q[..., 0]
    s = np.linalg.norm(v, axis=-1)
    scale = np.where(s > 1e-12, 2.0 * np.arctan2(s, w) / np.maximum(s, 1e-12), 2.0)
    return v * scale[..., None]


def quat_to_rotmat(q: np.ndarray) -> np.ndarray:
    """(..., 4) quaternions (w, x, y, z) to (..., 3, 3) matrices."""
    q = np.asarray(q, float)
    q = q / np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), 1e-12)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def rotmat_to_quat(r: np.ndarray) -> np.ndarray:
    """(..., 3, 3) matrices to (..., 4) quaternions (w, x, y, z), w >= 0 (Shepperd's method, vectorised)."""
    r = np.asarray(r, float)
    m00, m11, m22 = r[..., 0, 0], r[..., 1, 1], r[..., 2, 2]
    cands = np.stack([
        np.stack([1 + m00 + m11 + m22, r[..., 2, 1] - r[..., 1, 2], r[..., 0, 2] - r[..., 2, 0],
                  r[..., 1, 0] - r[..., 0, 1]], -1),
        np.stack([r[..., 2, 1] - r[..., 1, 2], 1 + m00 - m11 - m22, r[..., 0, 1] + r[..., 1, 0],
                  r[..., 0, 2] + r[..., 2, 0]], -1),
        np.stack([r[..., 0, 2] - r[..., 2, 0], r[..., 0, 1] + r[..., 1, 0], 1 - m00 + m11 - m22,
                  r[..., 1, 2] + r[..., 2, 1]], -1),
        np.stack([r[..., 1, 0] - r[..., 0, 1], r[..., 0, 2] + r[..., 2, 0], r[..., 1, 2] + r[..., 2, 1],
                  1 - m00 - m11 + m22], -1),
    ], -2)  # (..., 4 candidates, 4): candidate k has 4 q_k^2 on its k-th entry
    k = np.argmax(np.stack([1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22],
                           -1), axis=-1)
    best = np.take_along_axis(cands, k[..., None, None].repeat(4, -1), axis=-2)[..., 0, :]
    q = best / np.linalg.norm(best, axis=-1, keepdims=True)
    return q * np.where(q[..., :1] < 0, -1.0, 1.0)
