"""Batched UR5e assembly environment on ``mujoco.batch.Batch`` (one model, B simulations, 2 threads).

Actions are 7-D in [-1, 1]: a relative TCP pose delta (xyz, rotation vector, world frame, scaled by
:data:`ACTION_SCALE` at 10 Hz and twice that at 5 Hz) and a binary gripper (> 0 closes). The new target is
the *current* TCP pose plus the delta, as in OmniReset; it moves the mocap ``target`` once per control
step and the Cartesian impedance runs inside MuJoCo for the substeps (100 at 5 Hz, 50 at 10 Hz, 2 ms).

An :class:`~.assembly.Assembly` (the peg or the table leg) adds its objects, places them on reset and
says where the object is when assembled. Success (MANIPULATION.md 2.9) is the object within 2.5 mm of its
assembled position with ``|roll| + |pitch| < 0.025`` rad in the receptacle frame (yaw ignored; the leg
must also be seated), held for :data:`SUCCESS_HOLD` consecutive steps, which ends the episode
(``truncated`` with ``info["success"]``). An arm joint faster than twice the UR5e's speed limit terminates
it (abnormal state, reward -100). Rewards are OmniReset's dense terms per control step (``info["reward_terms"]``).

Observation groups: ``proprio`` (joints, joint speeds, TCP position and 6-D rotation, gripper opening,
last action), ``object`` (object and assembled-target poses in the TCP frame, the object in the
receptacle frame, plus the assembly's extras), ``privileged`` (critic only: friction, mass, gains,
clearance, latency, joint friction, time left) and ``physics`` (qpos and the mocap poses, to render images
from afterwards). Image observations come from :mod:`.render` when ``cameras`` are asked for, together with
``joints`` (the six arm joint angles, ``proprio[:, :6]``: what the image world models read besides the images;
only then, so the state datasets' spec stays as it was).
"""

from __future__ import annotations

import os
from typing import Any

import mujoco
import numpy as np

from simdist.components.tasks.ur5e import robot as R
from simdist.components.tasks.ur5e.config import (  # noqa: F401 - re-exported: the env's settings
    ABNORMAL_SPEED,
    ACTION_SCALE,
    HOME_TCP,
    RESET_KINDS,
    REWARD_WEIGHTS,
    SUCCESS_HOLD,
    SUCCESS_POS_TOL,
    SUCCESS_TILT_TOL,
    WORKSPACE_HIGH,
    WORKSPACE_LOW,
    ArmEnvConfig,
)
from simdist.components.tasks.ur5e.grids import get_grid, sample_training_starts
from simdist.envs.base import ArraySpec, StepResult

_INSTABILITY = [int(mujoco.mjtWarning.mjWARN_BADQPOS), int(mujoco.mjtWarning.mjWARN_BADQVEL),
                int(mujoco.mjtWarning.mjWARN_BADQACC)]


def rot6d(rot: np.ndarray) -> np.ndarray:
    """(..., 3, 3) -> (..., 6): the first two columns (a continuous rotation encoding)."""
    return np.concatenate([rot[..., :, 0], rot[..., :, 1]], axis=-1)


def relative_pose(pos_a: np.ndarray, rot_a: np.ndarray, pos_b: np.ndarray, rot_b: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Pose of b in frame a (batched): position (B, 3) and rotation (B, 3, 3)."""
    rt = np.swapaxes(rot_a, -1, -2)
    return np.einsum("bij,bj->bi", rt, pos_b - pos_a), rt @ rot_b


def roll_pitch(rot: np.ndarray) -> np.ndarray:
    """(B,) ``|roll| + |pitch|`` of rotations (B, 3, 3) (ZYX angles; independent of yaw)."""
    pitch = np.arcsin(np.clip(-rot[:, 2, 0], -1.0, 1.0))
    roll = np.arctan2(rot[:, 2, 1], rot[:, 2, 2])
    return np.abs(roll) + np.abs(pitch)


class UR5eEnv:
    """B batched UR5e cells running one :class:`~.assembly.Assembly`; implements
    :class:`simdist.envs.base.BatchedEnv`. ``profile``: an :class:`~.profiles.ArmProfile` (None: the
    simulator's defaults with its randomisation)."""

    def __init__(self, assembly: Any, num_envs: int = 16, config: ArmEnvConfig | None = None,
                 profile: Any = None, seed: int | None = 0) -> None:
        self.assembly = assembly
        self.config = cfg = config or ArmEnvConfig()
        self.num_envs = int(num_envs)
        if self.num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.profile = profile if profile is not None else assembly.default_profile()
        self.dt = 1.0 / cfg.control_hz
        self._rng = np.random.default_rng(seed)
        self._build()
        n = self.num_envs
        self.last_action = np.zeros((n, 7))
        self.prev_action = np.zeros((n, 7))
        self.episode_step = np.zeros(n, np.int64)
        self.hold = np.zeros(n, np.int64)
        self.success = np.zeros(n, bool)
        self.starts = np.zeros((n, 6))
        self.reset_kind = np.zeros(n, np.int64)
        self.cell = np.full(n, -1, np.int64)
        self._queue: list[tuple[int, np.ndarray]] = []
        self._diverged = np.zeros(n, bool)
        self._warn = np.zeros(n)
        self._latency = self.profile.latency_substeps
        self._obs: dict[str, np.ndarray] = {}
        self._needs_reset = True
        #: rows whose physics advances on ``step`` (None: all); a clone that only some rows still need (a
        #: value continuation) sets it so that finished rows cost nothing; their bookkeeping still ticks
        self.active: np.ndarray | None = None
        self.action_spec = ArraySpec((7,), low=-1.0, high=1.0)
        self.observation_spec = self._spec()
        self._renderer = None
        if cfg.cameras:
            from simdist.components.tasks.ur5e.render import CameraRig

            self._renderer = CameraRig(self.model, cfg.cameras, cfg.image_size)
            for cam in cfg.cameras:
                self.observation_spec[f"image_{cam}"] = ArraySpec((cfg.image_size, cfg.image_size, 3), "uint8")
            self.observation_spec["joints"] = ArraySpec((6,))  # the image models' proprioception

    # ---- construction -------------------------------------------------------------------------------
    def build_spec(self) -> mujoco.MjSpec:
        """The cell's spec (robot, table, cameras, the assembly's objects) on this env's profile."""
        from simdist.components.tasks.ur5e.scene import add_table, add_wrist_camera

        p = self.profile
        spec = R.build_robot_spec(R.RobotConfig.for_contacts(
            self.config.contacts, pad_friction=p.pad_friction, joint_friction=p.joint_friction,
            armature=0.1 * p.armature_scale))
        add_table(spec, friction=0.45)
        add_wrist_camera(spec)
        self.assembly.add_to_spec(spec, p)
        return spec

    def _build(self) -> None:
        import mujoco.batch as batch_mod

        self.model = m = self.build_spec().compile()
        self._simulation_error = batch_mod.SimulationError
        self.batch = b = batch_mod.Batch(m, self.num_envs, self.config.nthread or os.cpu_count() or 1,
                                         persistent=True)
        self.qpos, self.qvel, self.ctrl = b.bind("qpos"), b.bind("qvel"), b.bind("ctrl")
        self.mocap_pos, self.mocap_quat = b.bind("mocap_pos"), b.bind("mocap_quat")
        self.site_xpos, self.site_xmat = b.bind("site_xpos"), b.bind("site_xmat")
        self.xpos, self.xquat, self.eq_active = b.bind("xpos"), b.bind("xquat"), b.bind("eq_active")
        self.arm_qadr = np.array([m.joint(j).qposadr[0] for j in R.JOINT_NAMES])
        self.arm_dadr = np.array([m.joint(j).dofadr[0] for j in R.JOINT_NAMES])
        self.finger_qadr = np.array([m.joint(f"{s}_slide").qposadr[0] for s in ("left", "right")])
        self.tcp_site = m.site("tcp").id
        self.target_mocap = int(m.body("target").mocapid[0])
        self.grip_actuator = m.actuator("grip").id
        self.ee_actuators = np.array([m.actuator(a).id for a in R.EE_ACTUATORS])
        self.m_friction = b.expand("geom_friction")
        self.m_mass = b.expand("body_mass")
        self.m_gain = b.expand("actuator_gainprm")
        self.m_bias = b.expand("actuator_biasprm")
        self._nominal_gain = m.actuator_gainprm[self.ee_actuators, 0].copy()
        self._nominal_kv = -m.actuator_biasprm[self.ee_actuators, 2].copy()
        self.params = {"object_mass": np.zeros(self.num_envs), "object_friction": np.zeros(self.num_envs),
                       "receptacle_friction": np.zeros(self.num_envs), "gain_scale": np.ones(self.num_envs)}
        self._ik_data = mujoco.MjData(m)
        self.assembly.bind(self)

    def _spec(self) -> dict[str, ArraySpec]:
        return {
            "proprio": ArraySpec((29,)),
            "object": ArraySpec((27 + self.assembly.extra_obs_dim,)),
            "privileged": ArraySpec((8,)),
            "physics": ArraySpec((self.model.nq + 7 * self.model.nmocap,)),
        }

    # ---- protocol -----------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, ids: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Reset all envs (``seed`` reseeds and, with a grid, restarts its lattice) or only ``ids``."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            ids = None
            if self.config.grid is not None and self.config.lattice:
                lattice = get_grid(self.config.grid).lattice()
                self._queue = [(k, lattice[k]) for k in range(len(lattice))]
        if ids is None:
            ids = np.arange(self.num_envs)
        ids = np.asarray(ids, np.int64).ravel()
        if len(ids) == 0:
            return self._obs
        self._draw_physics(ids)
        self.batch.reset(ids, stage=mujoco.mjtStage.mjSTAGE_NONE.value)
        for e in ids:
            self._place(int(e))
        self.batch.forward(ids)
        self.episode_step[ids] = 0
        self.hold[ids] = 0
        self.success[ids] = False
        self._diverged[ids] = False
        self.last_action[ids] = 0.0
        self.prev_action[ids] = 0.0
        self._warn[ids] = self._warnings()[ids]
        self.assembly.on_reset(self, ids)
        self._needs_reset = False
        self._compute_obs()
        return self._obs

    def step(self, actions: np.ndarray) -> StepResult:
        """One control period for all envs (finished ones keep stepping until reset)."""
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        a = np.clip(np.nan_to_num(np.asarray(actions, float).reshape(self.num_envs, 7)), -1.0, 1.0)
        self.prev_action[:] = self.last_action
        self.last_action[:] = a
        pos, rot = self.tcp_pose()
        scale = self.config.action_scale
        target_pos = np.clip(pos + a[:, :3] * scale[:3], WORKSPACE_LOW, WORKSPACE_HIGH)
        target_rot = R.rotvec_to_rotmat(a[:, 3:6] * scale[3:]) @ rot
        grip = np.where(a[:, 6] > 0.0, 0.0, R.GRIPPER_STROKE)
        n_sub, lag = self.config.substeps, min(self._latency, self.config.substeps)
        if lag > 0:  # the new target arrives ``lag`` substeps late
            self._physics(lag)
        self.mocap_pos[:, self.target_mocap] = target_pos
        self.mocap_quat[:, self.target_mocap] = R.rotmat_to_quat(target_rot)
        self.ctrl[:, self.grip_actuator] = grip
        self._physics(n_sub - lag)
        self.episode_step += 1
        self.assembly.after_step(self)

        state = self._state()
        ok_now = self.assembly.success_now(self, state)
        self.hold = np.where(ok_now, self.hold + 1, 0)
        self.success = self.hold >= SUCCESS_HOLD
        speed = np.abs(self.qvel[:, self.arm_dadr])
        abnormal = (speed > ABNORMAL_SPEED).any(1) | self._diverged
        terms = self._reward_terms(state, a, ok_now, abnormal)
        reward = sum(REWARD_WEIGHTS[k] * v for k, v in terms.items())
        terminated = abnormal
        truncated = (self.success | (self.episode_step >= self.config.max_steps)) & ~terminated
        self._compute_obs(state)
        info = {
            "reward_terms": {k: (REWARD_WEIGHTS[k] * v).astype(np.float32) for k, v in terms.items()},
            "success": self.success.copy(),
            "diverged": self._diverged.copy(),
            "episode_step": self.episode_step.copy(),
            "distance": state["distance"].astype(np.float32),
            "tilt": state["tilt"].astype(np.float32),
            "cell": self.cell.copy(),
        }
        return StepResult(self._obs, np.where(self._diverged, 0.0, reward).astype(np.float32), terminated,
                          truncated, info)

    def close(self) -> None:
        self.batch = None  # type: ignore[assignment]
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    @property
    def observations(self) -> dict[str, np.ndarray]:
        return self._obs

    def episode_meta(self, ids: np.ndarray) -> list[dict[str, Any]]:
        """Per env: the start (object x, y, yaw; receptacle x, y, yaw), its lattice cell, the reset kind and
        the drawn physics."""
        out = []
        for e in np.asarray(ids, np.int64):
            out.append({"start": self.starts[e].round(5).tolist(), "cell": int(self.cell[e]),
                        "reset": RESET_KINDS[int(self.reset_kind[e])],
                        **{k: float(v[e]) for k, v in self.params.items()}})
        return out

    # ---- kinematics ---------------------------------------------------------------------------------
    def tcp_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return self.site_xpos[:, self.tcp_site].copy(), self.site_xmat[:, self.tcp_site].reshape(-1, 3, 3).copy()

    def body_pose(self, body_id: int) -> tuple[np.ndarray, np.ndarray]:
        return self.xpos[:, body_id].copy(), R.quat_to_rotmat(self.xquat[:, body_id])

    def _state(self) -> dict[str, np.ndarray]:
        tcp_p, tcp_r = self.tcp_pose()
        obj_p, obj_r = self.assembly.object_pose(self)
        goal_p, goal_r = self.assembly.assembled_pose(self)
        rel_p, rel_r = relative_pose(goal_p, goal_r, obj_p, obj_r)
        return {"tcp_pos": tcp_p, "tcp_rot": tcp_r, "obj_pos": obj_p, "obj_rot": obj_r, "goal_pos": goal_p,
                "goal_rot": goal_r, "rel_pos": rel_p, "rel_rot": rel_r, "distance": np.linalg.norm(rel_p, axis=1),
                "tilt": roll_pitch(rel_r)}

    def _reward_terms(self, s: dict[str, np.ndarray], a: np.ndarray, ok: np.ndarray, abnormal: np.ndarray
                      ) -> dict[str, np.ndarray]:
        reach = 1.0 - np.tanh(np.linalg.norm(s["tcp_pos"] - s["obj_pos"], axis=1) / 1.0)
        align = 0.5 * (np.exp(-s["tilt"]) + np.exp(-s["distance"]))
        qd = self.qvel[:, self.arm_dadr]
        return {"reach": reach, "align": align, "success": ok.astype(float), "action": (a ** 2).sum(1),
                "action_rate": ((a - self.prev_action) ** 2).sum(1), "joint_velocity": (qd ** 2).sum(1),
                "abnormal": abnormal.astype(float)}

    # ---- observations -------------------------------------------------------------------------------
    def _compute_obs(self, state: dict[str, np.ndarray] | None = None) -> None:
        s = state if state is not None else self._state()
        p = self.profile
        n = self.num_envs
        opening = self.qpos[:, self.finger_qadr].sum(1, keepdims=True) / (2 * R.GRIPPER_STROKE)
        proprio = np.concatenate([self.qpos[:, self.arm_qadr], self.qvel[:, self.arm_dadr], s["tcp_pos"],
                                  rot6d(s["tcp_rot"]), opening, self.last_action], axis=1)
        obj_p, goal_p = s["obj_pos"], s["goal_pos"].copy()
        goal_p[:, :2] += np.asarray(p.perception_bias)
        if p.perception_noise > 0:
            obj_p = obj_p + self._rng.normal(0.0, p.perception_noise, obj_p.shape)
            goal_p = goal_p + self._rng.normal(0.0, p.perception_noise, goal_p.shape)
        o_in_t = relative_pose(s["tcp_pos"], s["tcp_rot"], obj_p, s["obj_rot"])
        g_in_t = relative_pose(s["tcp_pos"], s["tcp_rot"], goal_p, s["goal_rot"])
        o_in_g = relative_pose(goal_p, s["goal_rot"], obj_p, s["obj_rot"])
        obj = np.concatenate([o_in_t[0], rot6d(o_in_t[1]), g_in_t[0], rot6d(g_in_t[1]), o_in_g[0],
                              rot6d(o_in_g[1]), self.assembly.extra_obs(self)], axis=1)
        left = 1.0 - self.episode_step / self.config.max_steps
        prm = self.params
        priv = np.column_stack([prm["object_friction"], prm["object_mass"], prm["receptacle_friction"],
                                prm["gain_scale"], np.full(n, self.assembly.clearance(p) * 1000.0),
                                np.full(n, p.latency_ms / 100.0), np.full(n, p.joint_friction), left])
        phys = np.concatenate([self.qpos, self.mocap_pos.reshape(n, -1), self.mocap_quat.reshape(n, -1)], axis=1)
        self._obs = {"proprio": proprio.astype(np.float32), "object": obj.astype(np.float32),
                     "privileged": priv.astype(np.float32), "physics": phys.astype(np.float32)}
        if self._renderer is not None:
            self._obs.update(self._renderer.render_batch(self.batch), joints=self._obs["proprio"][:, :6].copy())

    # ---- physics ------------------------------------------------------------------------------------
    def _physics(self, nstep: int) -> None:
        if nstep <= 0:
            return
        ids = None if self.active is None else np.flatnonzero(self.active)
        if ids is not None and not len(ids):
            return
        try:
            self.batch.step(ids, nstep=nstep, stage=mujoco.mjtStage.mjSTAGE_VEL.value)
            failed = np.zeros(self.num_envs, bool)
        except self._simulation_error:
            failed = np.asarray(self.batch.status) != 0
        warn = self._warnings()
        auto_reset = warn > self._warn
        self._warn = warn
        finite = np.isfinite(self.qpos).all(1) & np.isfinite(self.qvel).all(1)
        self._diverged |= failed | auto_reset | ~finite
        if self._diverged.any():
            bad = self._diverged
            self.qpos[bad] = np.nan_to_num(self.qpos[bad])
            self.qvel[bad] = 0.0

    def _warnings(self) -> np.ndarray:
        return self.batch.warning[:, _INSTABILITY, 1].sum(axis=1).astype(np.float64)

    def _draw_physics(self, ids: np.ndarray) -> None:
        """Per-episode randomisation (where the profile leaves a quantity at null) and its model fields."""
        p, rng, n = self.profile, self._rng, len(ids)
        rand = self.config.randomize

        def draw(value: float | None, lo: float, hi: float, nominal: float) -> np.ndarray:
            if value is not None:
                return np.full(n, value)
            return rng.uniform(lo, hi, n) if rand else np.full(n, nominal)

        prm = self.params
        prm["object_mass"][ids] = draw(p.object_mass, 0.02, 0.06, 0.03)
        prm["object_friction"][ids] = draw(p.object_friction, 1.0, 2.0, 1.0)
        prm["receptacle_friction"][ids] = draw(p.receptacle_friction, 0.2, 0.6, 0.4)
        prm["gain_scale"][ids] = draw(p.gain_scale, 0.8, 1.2, 1.0)
        self.assembly.apply_physics(self, ids)
        g = prm["gain_scale"][ids]
        self.m_gain[ids[:, None], self.ee_actuators[None], 0] = self._nominal_gain[None] * g[:, None]
        self.m_bias[ids[:, None], self.ee_actuators[None], 1] = -self._nominal_gain[None] * g[:, None]
        self.m_bias[ids[:, None], self.ee_actuators[None], 2] = -self._nominal_kv[None] * np.sqrt(g)[:, None]
        self.batch.set_const(ids)

    # ---- resets -------------------------------------------------------------------------------------
    def _next_start(self, e: int) -> tuple[np.ndarray, int, int]:
        """(start, cell, reset kind) for env ``e``: the grid's next lattice cell, else a training draw."""
        if self.config.grid is not None:
            if self._queue:
                cell, start = self._queue.pop(0)
                return start, cell, 0
            return get_grid(self.config.grid).sample(self._rng), -1, 0
        mix = np.asarray(self.config.reset_mix, float)
        kind = int(self._rng.choice(len(RESET_KINDS), p=mix / mix.sum()))
        return sample_training_starts(self._rng, 1)[0], -1, kind

    def _place(self, e: int) -> None:
        start, cell, kind = self._next_start(e)
        self.starts[e], self.cell[e], self.reset_kind[e] = start, cell, kind
        training = self.config.grid is None
        jitter = self._rng.uniform(-0.05, 0.05, 3) * np.array([1, 1, 0.5]) if training else np.zeros(3)
        tcp = np.asarray(HOME_TCP) + jitter
        yaw = float(self._rng.uniform(-0.3, 0.3)) if training else 0.0
        self.assembly.place_receptacle(self, e, start[3:])
        qpos = self.qpos[e]
        grasp = None
        if RESET_KINDS[kind] == "free":
            self.assembly.place_object(self, e, start[:3])
        else:
            tcp, yaw, grasp = self.assembly.grasped_start(self, e, RESET_KINDS[kind], self._rng)
        q_arm = self.solve_ik(tcp, R.yaw_down(yaw))
        qpos[self.arm_qadr] = q_arm
        self.qvel[e] = 0.0
        closed = grasp is not None
        qpos[self.finger_qadr] = grasp if closed else R.GRIPPER_STROKE
        self.ctrl[e, self.grip_actuator] = 0.0 if closed else R.GRIPPER_STROKE
        self.mocap_pos[e, self.target_mocap] = tcp
        self.mocap_quat[e, self.target_mocap] = R.rotmat_to_quat(R.yaw_down(yaw))
        if closed:
            self.assembly.place_in_hand(self, e, np.asarray(tcp), R.yaw_down(yaw))

    def solve_ik(self, pos: np.ndarray, rot: np.ndarray) -> np.ndarray:
        """Arm joints for a TCP pose (on this env's kinematics; starts from the home pose)."""
        return R.solve_ik(self.model, np.asarray(pos, float), rot, R.home_qpos())
