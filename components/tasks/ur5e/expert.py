"""Scripted privileged experts for the UR5e tasks and a ladder of degraded variants.

The expert reads the observation groups (``proprio`` and ``object``: the object and its assembled pose in
the TCP frame) and runs a per-env phase machine, batched in numpy (MANIPULATION.md 3.1): approach above
the object with the yaw aligned (mod 90 degrees), descend, close, lift, carry above the assembled pose
correcting for the in-hand offset, align the object's yaw, descend in small steps, an Archimedean spiral
search when the descent stalls, and release once the object is within the success tolerance. For the
table leg :class:`~.leg_expert.LegExpert` then twists the wrist to thread the leg, regrasping when wrist 3
nears its joint limit (its own phases after the insertion: ``twist``, ``regrasp_*``).

The degraded variants (:func:`suboptimal_experts`) change one or two parameters each (speed cap, aim bias,
no or small spiral, clumsy, late close, yaw offset, hesitation, sluggish yaw, under-twisting) and
span the skill levels the data needs, as the paper's PPO checkpoints do.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from simdist.components.tasks.ur5e.robot import GRIPPER_STROKE

APPROACH, DESCEND, CLOSE, LIFT, CARRY, INSERT, RELEASE, TWIST, REGRASP_OPEN, REGRASP_TURN, DONE = range(11)
PHASES = ("approach", "descend", "close", "lift", "carry", "insert", "release", "twist", "regrasp_open",
          "regrasp_turn", "done")


@dataclass(frozen=True)
class Scene:
    """One step's observation in the world frame, batched: the TCP, the object and its assembled pose (``goal``),
    and the object in the goal's frame (``rel``)."""

    proprio: np.ndarray
    objs: np.ndarray
    tcp: np.ndarray
    rot: np.ndarray
    obj: np.ndarray
    obj_rot: np.ndarray
    goal: np.ndarray
    goal_rot: np.ndarray
    rel: np.ndarray


@dataclass(frozen=True)
class ExpertParams:
    """Knobs of the scripted expert (defaults: the expert)."""

    name: str = "expert"
    speed: float = 1.0  # cap on |action| per dimension (1: full scale)
    aim_bias: tuple[float, float] = (0.0, 0.0)  # constant xy error of the carry target (m)
    spiral: bool = True
    spiral_step: float = 0.0005  # arc length per stalled step along the spiral (m)
    spiral_pitch: float = 0.001  # radius growth per turn (m): about twice the clearance
    spiral_max: float = 0.004
    release_at: float = 0.0025  # release when the object is this close to assembled (m)
    close_delay: int = 1  # control steps the gripper stays closed before lifting
    yaw_offset: float = 0.0  # rad added to the alignment yaw
    hesitate: float = 0.0  # probability of a zero action on a step
    yaw_gain: float = 1.0  # rotational gain (below 1: sluggish)
    descend_step: float = 0.003  # m per step during insertion
    lift_height: float = 0.14  # TCP height for the carry (m)
    integral: float = 0.0  # integral gain on the position error (beats joint stiction; 0: proportional only)
    perception_offset: tuple[float, float] = (0.0, 0.0)  # a known xy calibration error of the receptacle (m)
    twist: bool = False  # thread the object after inserting it (table leg)
    twist_turns: float = 2.2  # turns to twist before giving up (under-twisting variants: fewer)
    regrasp: bool = True
    seed: int = 0


class ScriptedExpert:
    """A batched, deterministic (given ``seed``) scripted expert: ``expert(obs) -> actions (B, 7)``."""

    def __init__(self, params: ExpertParams, assembly: Any, control_hz: int = 5) -> None:
        from simdist.components.tasks.ur5e.config import ArmEnvConfig

        self.p = params
        self.name = params.name
        self.scale = ArmEnvConfig(control_hz=control_hz).action_scale
        self.grasp_offset, self.insert_depth = assembly.grasp_offset, assembly.insert_depth()
        # the gripper opening (fraction of the stroke, proprio 21) below which the fingers hold the object
        self.held_opening = (2 * assembly.half_width + 0.003) / (2 * GRIPPER_STROKE)
        self._rng = np.random.default_rng(params.seed)
        self.phase = np.zeros(0, np.int64)

    # ---- state --------------------------------------------------------------------------------------
    def _ensure(self, n: int) -> None:
        if len(self.phase) != n:
            self.phase = np.zeros(n, np.int64)
            self.timer = np.zeros(n, np.int64)
            self.stall = np.zeros(n, np.int64)
            self.spiral_t = np.zeros(n)
            self.best_z = np.full(n, np.inf)
            self.twisted = np.zeros(n)
            self.integ = np.zeros((n, 3))
            self.fresh = np.ones(n, bool)

    def reset(self, ids: np.ndarray | None = None, seed: int | None = None) -> None:
        """Start over in envs ``ids`` (all: None); ``seed`` restarts the hesitation stream."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if len(self.phase) == 0:
            return
        ids = np.arange(len(self.phase)) if ids is None else np.asarray(ids, np.int64)
        self.phase[ids] = APPROACH
        self.fresh[ids] = True
        for a in (self.timer, self.stall, self.spiral_t, self.twisted, self.integ):
            a[ids] = 0
        self.best_z[ids] = np.inf

    # ---- acting -------------------------------------------------------------------------------------
    def __call__(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        s = self._observe(obs)
        tcp, rot, obj, goal, rel = s.tcp, s.rot, s.obj, s.goal, s.rel
        n, p = len(tcp), self.p
        obj_yaw = _yaw(s.obj_rot)
        goal_yaw = _yaw(s.goal_rot) + p.yaw_offset
        tcp_yaw = _yaw(rot)

        target = tcp.copy()
        yaw_t = tcp_yaw.copy()
        grip = np.ones(n)  # +1 close, -1 open
        ph = self.phase
        self.timer += 1
        self._grasp(ph, tcp, obj, obj_yaw, tcp_yaw, target, yaw_t, grip)
        m = ph == CARRY
        if m.any():
            off = tcp[m, :2] - obj[m, :2]
            target[m, :2] = goal[m, :2] + off + np.asarray(p.aim_bias)
            # the object's bottom 15 mm above the entrance
            target[m, 2] = goal[m, 2] + self.insert_depth + 0.015 + (tcp[m, 2] - obj[m, 2])
            yaw_t[m] = tcp_yaw[m] + _wrap(_square_yaw(goal_yaw[m], obj_yaw[m]) - obj_yaw[m])
            xy_ok = np.linalg.norm(obj[:, :2] - goal[:, :2] - np.asarray(p.aim_bias), axis=1) < 0.0015
            yaw_ok = np.abs(_wrap(_square_yaw(goal_yaw, obj_yaw) - obj_yaw)) < 0.03
            z_ok = np.abs(tcp[:, 2] - target[:, 2]) < 0.005
            self._go(m & xy_ok & yaw_ok & z_ok, INSERT)
        m = ph == INSERT
        if m.any():
            self._insert(m, tcp, obj, goal, rel, target, yaw_t, tcp_yaw, obj_yaw, goal_yaw)
        m = ph == RELEASE
        if m.any():
            grip[m] = -1
            target[m, 2] = tcp[m, 2] + 0.01
            self._go(m & (self.timer > 2), DONE)
        m = ph == DONE
        if m.any():
            grip[m] = -1
            target[m, 2] = np.maximum(tcp[m, 2] + 0.005, tcp[m, 2])
            target[m, 2] = np.minimum(target[m, 2], 0.2)

        return self._action(s, target, yaw_t, tcp_yaw, grip)

    # ---- the steps every scripted expert shares -------------------------------------------------------
    def _observe(self, obs: dict[str, np.ndarray]) -> Scene:
        """The observation in the world frame; envs whose episode starts here start over, and the phase of a
        fresh env is inferred from its state (:meth:`_infer_phase`)."""
        proprio, objs = np.asarray(obs["proprio"], float), np.asarray(obs["object"], float)
        self._ensure(len(proprio))
        if "privileged" in obs:  # an episode's first observation has all its time left: start over there
            fresh = np.flatnonzero(np.asarray(obs["privileged"])[:, 7] >= 1.0 - 1e-6)
            if len(fresh):
                self.reset(fresh)
        tcp = proprio[:, 12:15]
        rot = _rot_from6d(proprio[:, 15:21])
        obj = tcp + np.einsum("bij,bj->bi", rot, objs[:, 0:3])
        obj_rot = rot @ _rot_from6d(objs[:, 3:9])
        goal = tcp + np.einsum("bij,bj->bi", rot, objs[:, 9:12])
        goal_rot = rot @ _rot_from6d(objs[:, 12:18])
        rel = objs[:, 18:21]  # object in the goal frame
        if any(self.p.perception_offset):  # a recalibrated cell: the goal where it really is
            goal[:, :2] -= np.asarray(self.p.perception_offset)
            rel = np.einsum("bji,bj->bi", goal_rot, obj - goal)
        if self.fresh.any():
            self._infer_phase(self.fresh.copy(), tcp, rot, obj, rel, proprio[:, 21], objs)
            self.fresh[:] = False
        return Scene(proprio, objs, tcp, rot, obj, obj_rot, goal, goal_rot, rel)

    #: the grasp's descent ends only with the fingers centred on the object (within 3 mm) as well
    centred_descent = False

    def _grasp(self, ph: np.ndarray, tcp: np.ndarray, obj: np.ndarray, obj_yaw: np.ndarray, tcp_yaw: np.ndarray,
               target: np.ndarray, yaw_t: np.ndarray, grip: np.ndarray) -> None:
        """The top-down grasp (``approach``, ``descend``, ``close``, ``lift``): above the object with the yaw
        aligned to ``obj_yaw`` mod 90 degrees, down, close, up to the carry height."""
        p = self.p
        m = ph == APPROACH
        if m.any():
            yaw_t[m] = _square_yaw(obj_yaw[m], tcp_yaw[m])
            target[m] = obj[m] + np.array([0, 0, 0.08 + self.grasp_offset])
            grip[m] = -1
            near = m & (np.linalg.norm(tcp[:, :2] - obj[:, :2], axis=1) < 0.004) & (
                np.abs(_wrap(yaw_t - tcp_yaw)) < 0.05) & (np.abs(tcp[:, 2] - target[:, 2]) < 0.02)
            self._go(near, DESCEND)
        m = ph == DESCEND
        if m.any():
            yaw_t[m] = _square_yaw(obj_yaw[m], tcp_yaw[m])
            target[m] = obj[m] + np.array([0, 0, self.grasp_offset])
            grip[m] = -1
            down = m & (np.abs(tcp[:, 2] - target[:, 2]) < 0.002)
            if self.centred_descent:
                down &= np.linalg.norm(tcp[:, :2] - obj[:, :2], axis=1) < 0.003
            self._go(down, CLOSE)
        m = ph == CLOSE
        if m.any():
            target[m, 2] = tcp[m, 2]
            self._go(m & (self.timer > p.close_delay + 1), LIFT)
        m = ph == LIFT
        if m.any():
            target[m, 2] = p.lift_height
            self._go(m & (tcp[:, 2] > p.lift_height - 0.01), CARRY)

    #: the phases in which the object is kept upright instead of the TCP (it is in the hand)
    held_phases: tuple[int, ...] = (CARRY, INSERT, TWIST)

    def _integral(self, err: np.ndarray) -> np.ndarray:
        """``err`` plus the integral action: the error the arm does not close (stiction), accumulated; reset by
        phase changes."""
        self.integ = np.clip(self.integ + err, -0.02, 0.02)
        contact = np.isin(self.phase, (INSERT, TWIST))
        self.integ[contact, 2] = 0.0  # in contact the push stays light
        self.integ[contact & (self.stall > 2), :2] = 0.0  # and no wind-up against the spiral search
        return err + self.p.integral * self.integ

    def _action(self, s: Scene, target: np.ndarray, yaw_t: np.ndarray, tcp_yaw: np.ndarray,
                grip: np.ndarray) -> np.ndarray:
        """The action towards ``target`` and ``yaw_t`` with ``grip``: capped at the speed, held still on a
        hesitation."""
        p, n = self.p, len(s.tcp)
        act = np.zeros((n, 7))
        err = target - s.tcp
        if p.integral > 0:
            err = self._integral(err)
        act[:, :3] = err / self.scale[:3]
        yaw_err = _wrap(yaw_t - tcp_yaw) * p.yaw_gain
        # keep the TCP pointing down; while the object is in the hand, keep it upright instead (in-hand tilt)
        tilt = _tilt_correction(s.rot)
        held = np.isin(self.phase, self.held_phases)
        tilt[held] = _tilt_correction(-s.obj_rot[held])
        act[:, 3:5] = tilt[:, :2] / self.scale[3:5]
        act[:, 5] = yaw_err / self.scale[5]
        act[:, :6] = np.clip(act[:, :6], -p.speed, p.speed)
        act[:, 6] = grip
        if p.hesitate > 0:
            hold = self._rng.random(n) < p.hesitate
            act[hold, :6] = 0.0
        return act.astype(np.float32)

    def _track_descent(self, m: np.ndarray, obj: np.ndarray) -> None:
        """In envs ``m``: the lowest object height so far and the steps since it last went 0.5 mm lower."""
        z_obj = obj[:, 2]
        progressed = z_obj < self.best_z - 0.0005
        self.best_z = np.where(m & progressed, z_obj, self.best_z)
        self.stall = np.where(m & ~progressed, self.stall + 1, np.where(m, 0, self.stall))

    def _infer_phase(self, rows: np.ndarray, tcp: np.ndarray, rot: np.ndarray, obj: np.ndarray, rel: np.ndarray,
                     opening: np.ndarray, objs: np.ndarray) -> None:
        """The phase to start in from the state alone (an episode's first step, or an arbitrary state the
        expert takes over, as for value labels): carrying or inserting when the object is in the hand,
        releasing or done when it is assembled, twisting when a thread is engaged, else approaching."""
        grasp_point = tcp + rot[:, :, 2] * self.grasp_offset
        in_hand = (np.linalg.norm(obj - grasp_point, axis=1) < 0.012) & (opening < self.held_opening)
        assembled = np.linalg.norm(rel, axis=1) < self.p.release_at
        inside = (np.linalg.norm(rel[:, :2], axis=1) < 0.004) & (rel[:, 2] < self.insert_depth + 0.003)
        engaged = objs[:, 28] > 0.5 if objs.shape[1] > 28 else np.zeros(len(rel), bool)
        phase = np.select([assembled & in_hand & ~engaged, assembled, in_hand & engaged & self.p.twist,
                           in_hand & inside, in_hand], [RELEASE, DONE, TWIST, INSERT, CARRY], APPROACH)
        self.phase[rows] = phase[rows]
        self.timer[rows] = 0

    def _go(self, mask: np.ndarray, phase: int) -> None:
        if mask.any():
            self.integ[mask] = 0.0
            self.phase[mask] = phase
            self.timer[mask] = 0
            self.stall[mask] = 0
            self.best_z[mask] = np.inf

    def _servo_down(self, m: np.ndarray, tcp: np.ndarray, obj: np.ndarray, goal: np.ndarray,
                    target: np.ndarray) -> None:
        """Envs ``m`` descending onto the goal: the xy target is the goal (+ bias, + the in-hand offset) plus the
        search spiral's offset once the descent stalls (:meth:`_spiral`)."""
        offset = tcp[m, :2] - obj[m, :2]
        self._track_descent(m, obj)
        spiral = self._spiral(m & (self.stall > 2)) if self.p.spiral else np.zeros((len(tcp), 2))
        target[m, :2] = goal[m, :2] + offset + np.asarray(self.p.aim_bias) + spiral[m]

    def _spiral(self, run: np.ndarray) -> np.ndarray:
        """The search offset (n, 2), advanced one step in envs ``run``: an Archimedean spiral r = pitch theta / 2 pi
        walked at a constant arc length per step."""
        p = self.p
        radius = p.spiral_pitch * self.spiral_t / (2 * np.pi)
        self.spiral_t = np.where(run, self.spiral_t + p.spiral_step / np.maximum(radius, 0.0005), self.spiral_t)
        radius = np.minimum(p.spiral_pitch * self.spiral_t / (2 * np.pi), p.spiral_max)
        return np.column_stack([radius * np.cos(self.spiral_t), radius * np.sin(self.spiral_t)])

    def _insert(self, m, tcp, obj, goal, rel, target, yaw_t, tcp_yaw, obj_yaw, goal_yaw) -> None:
        p = self.p
        self._servo_down(m, tcp, obj, goal, target)
        # press lightly while searching: pressed on the rim, friction would hold the peg where it is
        searching = self.stall > 2
        target[m, 2] = tcp[m, 2] - np.where(searching[m], 0.0005, p.descend_step)
        yaw_t[m] = tcp_yaw[m] + _wrap(_square_yaw(goal_yaw[m], obj_yaw[m]) - obj_yaw[m])
        self._go(m & (np.linalg.norm(rel, axis=1) < p.release_at), RELEASE)


def _rot_from6d(v: np.ndarray) -> np.ndarray:
    a, b = v[:, 0:3], v[:, 3:6]
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-9)
    b = b - (a * b).sum(1, keepdims=True) * a
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-9)
    return np.stack([a, b, np.cross(a, b)], axis=-1)


def _yaw(rot: np.ndarray) -> np.ndarray:
    return np.arctan2(rot[:, 1, 0], rot[:, 0, 0])


def _wrap(a: np.ndarray) -> np.ndarray:
    return (a + np.pi) % (2 * np.pi) - np.pi


def _square_yaw(yaw: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """``yaw`` plus a multiple of 90 degrees, within 45 degrees of ``reference``."""
    return reference + (yaw - reference + np.pi / 4) % (np.pi / 2) - np.pi / 4


def _tilt_correction(rot: np.ndarray) -> np.ndarray:
    """Rotation vector (world) bringing the TCP's z axis back to pointing down, keeping its yaw."""
    z = rot[:, :, 2]
    down = np.array([0.0, 0.0, -1.0])
    axis = np.cross(z, down)
    s = np.linalg.norm(axis, axis=1, keepdims=True)
    ang = np.arctan2(s[:, 0], (z * down).sum(1))
    return axis / np.maximum(s, 1e-9) * ang[:, None]


def suboptimal_params(twist: bool = False) -> list[ExpertParams]:
    """Ten degraded variants (MANIPULATION.md 3.3), from nearly useless to nearly expert."""
    base = ExpertParams(twist=twist)
    out = [
        replace(base, name="slow", speed=0.3),
        replace(base, name="aim_bias_2mm", aim_bias=(0.002, -0.001)),
        replace(base, name="aim_bias_5mm", aim_bias=(0.004, 0.003)),
        replace(base, name="no_spiral", spiral=False, aim_bias=(0.0006, 0.0)),
        replace(base, name="small_spiral", spiral_max=0.001, aim_bias=(0.0012, 0.0008)),
        replace(base, name="clumsy", aim_bias=(0.0008, 0.0008), spiral_max=0.002, hesitate=0.2, seed=2),
        replace(base, name="yaw_offset_4deg", yaw_offset=np.deg2rad(4.0)),
        replace(base, name="hesitant", hesitate=0.4, seed=1),
        replace(base, name="sluggish_yaw", yaw_gain=0.3, speed=0.6),
        replace(base, name="late_close", close_delay=0, descend_step=0.006),
    ]
    if twist:
        out[-1] = replace(base, name="under_twist", twist_turns=0.8, regrasp=False)
    return out


def retuned_params(twist: bool = False) -> ExpertParams:
    """The expert retuned for proxy-real cells (``scripted:retuned``): integral action against joint stiction
    and slow tracking, a wider and gentler spiral search against calibration errors."""
    return ExpertParams(name="retuned", twist=twist, integral=0.5, spiral_max=0.006)


def make_expert(assembly: Any, name: str = "expert", control_hz: int = 5, seed: int = 0, profile: Any = None
                ) -> ScriptedExpert:
    """The expert (``name="expert"``), the degraded variant ``name`` or one of the assembly's own named variants
    (``assembly.expert_variants()``, e.g. ``retuned``) for an assembly. ``retuned`` is retuned for ``profile``:
    it knows the cell's calibration error (the profile's ``perception_bias``), as a recalibrated robot would."""
    twist = bool(getattr(assembly, "threaded", False))
    options = {p.name: p for p in [ExpertParams(twist=twist), *suboptimal_params(twist),
                                   *getattr(assembly, "expert_variants", list)()]}
    if name not in options:
        raise ValueError(f"unknown scripted policy {name!r}; choose one of {', '.join(options)}")
    params = replace(options[name], seed=options[name].seed + seed)
    if name == "retuned" and profile is not None:
        params = replace(params, perception_offset=tuple(float(v) for v in profile.perception_bias))
    cls = getattr(assembly, "expert_class", lambda: ScriptedExpert)()
    return cls(params, assembly, control_hz)


def suboptimal_experts(assembly: Any, control_hz: int = 5, seed: int = 0) -> list[ScriptedExpert]:
    """The ten degraded variants as policies."""
    twist = bool(getattr(assembly, "threaded", False))
    return [make_expert(assembly, p.name, control_hz, seed) for p in suboptimal_params(twist)]
