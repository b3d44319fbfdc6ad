"""Batched MuJoCo Go2 locomotion environment reproducing the SimDist IsaacLab task.

Physics runs on ``mujoco.batch.Batch`` (mujoco >= 4): B simulations of one model on a
thread pool, ``persistent=True`` and ``step(nstep=4, stage=mjSTAGE_VEL)``, so that
positions (foot sites) are current after a step at no extra cost while the contact
sensors keep the last substep's forces. Measured on the 2-core machine, ``mujoco.rollout``
(persistent pool, one MjData per thread) costs the same CPU per step (~25k control
steps/s of bare physics on 2 cores for both), but it returns only state/sensor arrays
and cannot vary model fields per env without one MjModel per env, and per-env Python
stepping adds Python overhead per env; so ``Batch`` is used (see docs/go2_env.md).

Observations (float32, per env; see ``observation_spec``):

* ``proprio`` (35): base lin vel (body) 3, ang vel (body) 3, projected gravity 3,
  joint pos - default 12, joint vel 12, cos/sin of the 0.5 s gait clock 2.
* ``extero`` (315): height scan, value base_z - ground_z - 0.3 clipped +-2, on a
  yaw-aligned 21 x 15 grid (0.1 m) over x in [-0.5, 1.5], y in [-0.7, 0.7]. Flatten order
  is IsaacLab's: index = iy * 21 + ix with x and y ascending (reshape to (15, 21); the
  world model then flips both axes and transposes to get a forward-up image).
* ``privileged`` (433): lin vel 3, ang vel 3, gravity 3, command 3, joint pos 12,
  joint vel 12, last action 12, height scan clipped +-1 315, cos/sin phase 2, foot
  contact wrenches x 0.1 (base frame, force 3 + torque 3 per foot) 24, foot heights
  (minus radius, clipped +-2) 4, base mass delta 1, friction static/dynamic and
  restitution 3, Kp/Kd multipliers and joint friction mapped to [-1, 1] 36.
* ``privileged_official`` (433): the same vector with the official environment's foot term: IsaacLab's
  ``body_incoming_wrench``, PhysX's incoming joint wrench on each foot link (what the calf exerts on the
  foot, about the foot's centre, in the foot's frame) x 0.1, i.e. about minus the contact wrench, rotated
  into the calf-aligned foot frame; the official PPO experts read this group (``hub/experts/go2-official``).
* ``command`` (3): (v_x, v_y, w_z), the command the next action should follow.

Rewards: :mod:`simdist.components.tasks.go2.rewards`; ``info["reward_terms"]`` holds each term
already weighted and multiplied by dt, so they sum to ``reward``.
Terminations: contact force > 1 N on base/head or a thigh, tilt > 60 deg, optional base
height, diverged physics (``info["diverged"]``). Truncation: the 20 s time limit.
``step`` never resets; call ``reset(ids=...)`` on finished envs.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any, ClassVar

import mujoco
import numpy as np

import simdist.components.tasks.go2.robot as R
from simdist.components.tasks.go2.commands import WALK_HOLD_STEPS, CommandGenerator
from simdist.components.tasks.go2.kinematics import (
    base_to_foot,
    quat_to_rotmat,
    world_to_body,
    yaw_from_rotmat,
    yaw_quat,
)
from simdist.components.tasks.go2.profiles import RealityProfile, forward_progress, load_profile
from simdist.components.tasks.go2.randomization import (
    JOINT_INIT_SCALE,
    POSE_XY,
    DomainParams,
    restitution_to_dampratio,
)
from simdist.components.tasks.go2.rewards import RewardInputs, reward_terms, reward_weights
from simdist.components.tasks.go2.terrain import Terrain, make_flat, make_grid
from simdist.envs.base import ArraySpec, StepResult
from simdist.registry import register

SCAN_X = np.linspace(-0.5, 1.5, 21)
SCAN_Y = np.linspace(-0.7, 0.7, 15)
SCAN_OFFSET = 0.3
PROPRIO_DIM, SCAN_DIM, PRIVILEGED_DIM = 35, 315, 433
#: the foot wrenches (4 feet x force 3 + torque 3, x 0.1) inside the privileged observation
PRIVILEGED_WRENCH = slice(365, 389)
#: foot link mass of the official robot (Unitree's Go2 description), whose weight the incoming wrench carries
ISAACLAB_FOOT_MASS = 0.04
GRAVITY = 9.81
MAX_TILT_COS = np.cos(np.radians(60.0))
CONTACT_THRESHOLD = 1.0  # N
DIVERGED_QACC = 1e6
#: Official Gaussian training-noise std (used by profiles' ``obs_noise``), per proprio dim.
PROPRIO_NOISE_STD = np.concatenate([
    np.full(3, 0.05), np.full(3, 0.1), np.full(3, 0.025), np.full(12, 0.01), np.full(12, 0.75), np.zeros(2)
])
SCAN_NOISE_STD = 0.02
_INSTABILITY_WARNINGS = [mujoco.mjtWarning.mjWARN_BADQPOS.value, mujoco.mjtWarning.mjWARN_BADQVEL.value,
                         mujoco.mjtWarning.mjWARN_BADQACC.value]


def incoming_foot_wrench(s: dict[str, np.ndarray]) -> np.ndarray:
    """(B, 4, 6) the wrench the calf exerts on each foot (force, then torque about the foot's centre), in the foot's
    frame: what IsaacLab's ``body_incoming_wrench`` reads from PhysX for the official Go2's foot links.

    The foot is in quasi-static balance between the calf, the ground and its weight, so the incoming force is
    minus the contact force minus the foot's weight, and its torque about the centre minus the contact's: the
    contact acts at the sphere's lowest point, r = (0, 0, -radius) in the world (the ground normal taken as
    vertical), so -r x F, plus the sensor's own (torsional) torque negated."""
    force, torque = s["foot_wrench"][..., :3], s["foot_wrench"][..., 3:]
    r = np.array([0.0, 0.0, -R.FOOT_RADIUS])
    f_in = -force - np.array([0.0, 0.0, -GRAVITY * ISAACLAB_FOOT_MASS])
    t_in = -np.cross(r, force) - torque
    rot = s["rot"]
    f_b = world_to_body(rot, f_in)
    t_b = world_to_body(rot, t_in)
    q = s["joint_pos_rel"] + R.DEFAULT_JOINT_POS
    return np.concatenate([base_to_foot(q, f_b), base_to_foot(q, t_b)], axis=-1)


def _batch_module() -> Any:
    """``mujoco.batch`` (mujoco >= 4), imported lazily so that simdist imports without it."""
    try:
        import mujoco.batch as batch_mod
    except ImportError as e:  # pragma: no cover - depends on the installed mujoco
        found = mujoco.__version__
        raise ImportError(f"Go2Env needs mujoco >= 4.0 (mujoco.batch); found mujoco {found}") from e
    return batch_mod


def _scan_grid() -> tuple[np.ndarray, np.ndarray]:
    gx, gy = np.meshgrid(SCAN_X, SCAN_Y, indexing="xy")  # (15, 21): rows y, cols x
    return gx.ravel(), gy.ravel()


@register("env", "go2")
class Go2Env:
    """B batched Go2 simulations at 50 Hz; implements :class:`simdist.envs.base.BatchedEnv`.

    Args:
        num_envs: batch size B.
        terrain: ``"flat"`` (plane), ``"rough"`` (official tile grid), or a :class:`Terrain`.
        terrain_mode: ``"curriculum"`` (start at level 0, cos-similarity promotion),
            ``"random"`` (random tile, i.e. random difficulty, at every reset) or ``"fixed"`` (each env
            always starts on its tile of ``tiles``).
        tiles: ``terrain_mode="fixed"``: (B, 2) integer (row, column) of each env's tile in the grid.
        friction: (B,) foot-ground friction per env, replacing the nominal or randomised value (a profile's
            friction still wins).
        command_mode: ``"random"`` (six modes), ``"fixed"`` (``fixed_command``: one (3,) or a (B, 3) per env) or
            ``"straight"`` (PD on an x_des advancing at ``straight_speed``, or at a speed drawn per episode
            from a (low, high) ``straight_speed``).
        walk_start_prob: random or straight command mode: the probability that an episode starts with
            the evaluation's reset phase (stand still for ``walk_start_hold`` = (low, high) steps, upper
            bound exclusive, under a zero command, then walk straight); while standing,
            :attr:`action_hold` asks the caller (data engine, rollout) for zero actions (``commands.py``).
        end_at_course_end: with a profile, truncate an episode when the robot reaches the course end, as a
            protocol trial ends there (``info["best_progress"]`` is the furthest progress so far).
        randomize: domain randomisation on/off (off: nominal values, origin pose).
        gait_reward: ``"corrected"`` (default) or ``"official"``; see rewards.py.
        only_positive_rewards: clip the step reward at 0 (legged_gym style, for PPO).
        base_height_termination: if set, also terminate when the base is lower than this
            above the ground (a cheap stand-in for base contact).
        profile: a reality profile (name, path, dict or :class:`RealityProfile`); it
            replaces the terrain with its course and layers its deviations.
        velocity_limit: the official actuator's torque-speed limit (IsaacLab ``DCMotorCfg``, rad/s; the
            official Go2 has 30): each physics step the torque stays within limit x (+-1 - qdot / velocity_limit),
            clipped to +-limit; None (default): the flat +-limit clip. A profile's ``velocity_limit`` wins.
        nthread: physics threads (0: all CPUs).
        seed: RNG seed; ``reset(seed=...)`` reseeds and redraws startup randomisation.
    """

    #: how an action drives the robot: PD joint targets ``default_joint_pos + action_scale * action`` (rad), held
    #: for ``substeps`` physics steps of one control step
    default_joint_pos: ClassVar[np.ndarray] = R.DEFAULT_JOINT_POS
    action_scale: ClassVar[float] = R.ACTION_SCALE
    substeps: ClassVar[int] = R.N_SUBSTEPS

    def __init__(self, num_envs: int = 256, *, terrain: str | Terrain = "flat",
                 terrain_mode: str = "curriculum", command_mode: str = "random",
                 fixed_command: tuple[float, float, float] | np.ndarray = (0.5, 0.0, 0.0),
                 straight_speed: float | tuple[float, float] = 0.5, randomize: bool = True,
                 gait_reward: str = "corrected",
                 only_positive_rewards: bool = False, episode_length_s: float = 20.0,
                 base_height_termination: float | None = None,
                 profile: str | RealityProfile | dict | None = None, nthread: int = 0, seed: int = 0,
                 terrain_kwargs: dict[str, Any] | None = None, walk_start_prob: float = 0.0,
                 walk_start_hold: tuple[int, int] = WALK_HOLD_STEPS, end_at_course_end: bool = False,
                 tiles: np.ndarray | None = None, friction: np.ndarray | None = None,
                 velocity_limit: float | None = None) -> None:
        if terrain_mode not in ("curriculum", "random", "fixed"):
            raise ValueError(f"terrain_mode must be 'curriculum', 'random' or 'fixed', got {terrain_mode!r}")
        self.num_envs = int(num_envs)
        if terrain_mode == "fixed" and tiles is None:
            raise ValueError("terrain_mode 'fixed' needs tiles: the (row, column) of each env's tile")
        self.tiles = _per_env(tiles, (self.num_envs, 2), "tiles", np.int64) if terrain_mode == "fixed" else None
        self.friction = _per_env(friction, (self.num_envs,), "friction", np.float64) if friction is not None else None
        self.dt = R.CONTROL_DT
        self.randomize = randomize
        self.gait_reward = gait_reward
        self.weights = reward_weights(gait_reward)
        self.only_positive_rewards = only_positive_rewards
        self.max_episode_length = int(round(episode_length_s / self.dt))
        self.base_height_termination = base_height_termination
        self.terrain_mode = terrain_mode
        self.profile = load_profile(profile) if profile is not None else None
        if self.profile is not None and self.profile.velocity_limit is not None:
            velocity_limit = self.profile.velocity_limit
        if velocity_limit is not None and not velocity_limit > 0:
            raise ValueError(f"velocity_limit must be > 0 rad/s, got {velocity_limit}")
        self.velocity_limit = velocity_limit
        if end_at_course_end and self.profile is None:
            raise ValueError("end_at_course_end needs a reality profile (its course length)")
        self.end_at_course_end = end_at_course_end
        self.terrain = self._make_terrain(terrain, terrain_kwargs or {})
        if self.tiles is not None and (self.terrain.num_rows == 0 or self.profile is not None):
            raise ValueError("terrain_mode 'fixed' needs a tile grid terrain (make_grid) and no profile")
        if self.tiles is not None and not ((self.tiles >= 0).all() and (self.tiles[:, 0] < self.terrain.num_rows).all()
                                           and (self.tiles[:, 1] < self.terrain.num_cols).all()):
            raise ValueError(f"tiles outside the {self.terrain.num_rows} x {self.terrain.num_cols} grid")
        self.observation_spec = {
            "proprio": ArraySpec((PROPRIO_DIM,)),
            "extero": ArraySpec((SCAN_DIM,), low=-2.0, high=2.0),
            "privileged": ArraySpec((PRIVILEGED_DIM,)),
            "privileged_official": ArraySpec((PRIVILEGED_DIM,)),
            "command": ArraySpec((3,)),
        }
        self.action_spec = ArraySpec((12,))
        self._build_sim(nthread)
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self.commands = CommandGenerator(self.num_envs, self.dt, command_mode, fixed_command, straight_speed,
                                         walk_start_prob=walk_start_prob, hold_steps=walk_start_hold)
        self._alloc_state()
        self._draw_startup(np.arange(self.num_envs))
        self._needs_reset = True

    # ------------------------------------------------------------------------------
    # construction
    def _make_terrain(self, terrain: str | Terrain, kwargs: dict[str, Any]) -> Terrain:
        if self.profile is not None:
            return self.profile.terrain()
        if isinstance(terrain, Terrain):
            return terrain
        if terrain == "flat":
            return make_flat()
        if terrain == "rough":
            return make_grid(**kwargs)
        raise ValueError(f"unknown terrain {terrain!r}; use 'flat', 'rough' or a Terrain")

    def build_spec(self) -> mujoco.MjSpec:
        """A fresh spec of the robot on this env's terrain (``self.model`` is its compiled form)."""
        spec = R.build_go2_spec(floor=False)
        self.terrain.add_to_spec(spec)
        return spec

    def _build_sim(self, nthread: int) -> None:
        self.model = self.build_spec().compile()
        m = self.model
        batch_mod = _batch_module()
        self._simulation_error = batch_mod.SimulationError
        self.batch = batch_mod.Batch(m, self.num_envs, nthread or os.cpu_count() or 1, persistent=True)
        b = self.batch
        self.qpos, self.qvel, self.ctrl = b.bind("qpos"), b.bind("qvel"), b.bind("ctrl")
        self.site_xpos, self.sensordata = b.bind("site_xpos"), b.bind("sensordata")
        self.qacc, self.actuator_force = b.bind("qacc"), b.bind("actuator_force")
        self.foot_site_ids = np.array([m.site(f"{leg}_foot_site").id for leg in R.LEGS])
        self.foot_geom_ids = np.array([m.geom(n).id for n in R.FOOT_NAMES])
        self.base_body_id = m.body("base").id
        # per-env model fields
        self.m_friction = b.expand("geom_friction")
        self.m_solref = b.expand("geom_solref")
        self.m_mass = b.expand("body_mass")
        self.m_ipos = b.expand("body_ipos")
        self.m_gain = b.expand("actuator_gainprm")
        self.m_bias = b.expand("actuator_biasprm")
        self.m_forcerange = b.expand("actuator_forcerange")
        self.m_frictionloss = b.expand("dof_frictionloss")
        self._nominal_ipos = m.body_ipos[self.base_body_id].copy()

    def _alloc_state(self) -> None:
        n = self.num_envs
        self.params = DomainParams.nominal(n)
        self.last_action = np.zeros((n, 12), np.float32)
        self.prev_action = np.zeros((n, 12), np.float32)
        self.best_progress = np.zeros(n, np.float32)  # furthest course progress this episode (m)
        latency = self.profile.latency_steps if self.profile is not None else 0
        self._action_queue = np.zeros((latency + 1, n, 12), np.float32)
        self.episode_step = np.zeros(n, np.int64)
        self.spawn_pos = np.zeros((n, 3))
        self.terrain_level = np.zeros(n, np.int64)
        self.terrain_col = np.zeros(n, np.int64)
        self._cos_sum = np.zeros(n)
        self._diverged = np.zeros(n, bool)
        self._warn_count = np.zeros(n)
        self._obs: dict[str, np.ndarray] = {}

    def _draw_startup(self, ids: np.ndarray) -> None:
        """Startup randomisation (friction, restitution, mass) plus profile overrides."""
        if self.randomize:
            self.params.sample_startup(ids, self._rng)
        p = self.profile
        if self.friction is not None:
            self.params.friction[ids] = self.friction[ids]
        if p is not None:
            self.params.friction[ids] = p.friction
        self.m_friction[ids[:, None], self.foot_geom_ids[None, :], 0] = self.params.friction[ids, None]
        self.m_solref[ids[:, None], self.foot_geom_ids[None, :], 1] = restitution_to_dampratio(
            self.params.restitution[ids])[:, None]
        payload = p.payload_mass if p is not None else 0.0
        base_mass = R.TRUNK_MASS + self.params.mass_delta[ids]
        self.m_mass[ids, self.base_body_id] = base_mass + payload
        if p is not None and payload > 0:
            offset = np.asarray(p.payload_offset)
            self.m_ipos[ids, self.base_body_id] = (
                (base_mass[:, None] * self._nominal_ipos + payload * offset) / (base_mass + payload)[:, None])
        self.batch.set_const(ids)

    # ------------------------------------------------------------------------------
    # protocol
    def reset(self, seed: int | None = None, ids: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Reset all envs or ``ids``; a ``seed`` reseeds the RNG and redraws startup DR."""
        if seed is not None:
            self._seed = seed
            self._rng = np.random.default_rng(seed)
            self._draw_startup(np.arange(self.num_envs))
            self.terrain_level[:] = 0
            ids = None
        if ids is None:
            ids = np.arange(self.num_envs)
        ids = np.asarray(ids, dtype=np.int64).ravel()
        if len(ids) == 0:
            return self._obs
        self._update_curriculum(ids)
        self._reset_ids(ids)
        self._needs_reset = False
        self._compute_observations(np.zeros(self.num_envs, bool))
        return self._obs

    @property
    def action_hold(self) -> np.ndarray:
        """(B,) envs whose next action should be zero (a walk start's standing phase)."""
        return self.commands.holding

    def step(self, actions: np.ndarray) -> StepResult:
        """One 0.02 s control step for all envs (envs that are done keep stepping)."""
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        rng = self._rng
        a = np.asarray(actions, dtype=np.float32).reshape(self.num_envs, 12)
        a = np.nan_to_num(a, nan=0.0, posinf=0.0, neginf=0.0)
        self.prev_action[:] = self.last_action
        self.last_action[:] = a
        applied = a
        p = self.profile
        if p is not None and p.action_noise > 0:
            applied = a + p.action_noise * rng.standard_normal(a.shape).astype(np.float32)
        q = self._action_queue
        if len(q) > 1:
            q[:-1] = q[1:]
            q[-1] = applied
            applied = q[0]
        self.ctrl[:] = self.default_joint_pos + self.action_scale * applied
        self._physics_step()
        self.episode_step += 1

        s = self._kinematics()
        cmd = self.commands.command
        terms = reward_terms(self._reward_inputs(s, cmd), self.gait_reward)
        scaled = {k: (self.weights[k] * self.dt) * v for k, v in terms.items()}
        reward = sum(scaled.values())
        if self.only_positive_rewards:
            reward = np.maximum(reward, 0.0)
        self._accumulate_cos(s, cmd)

        terminated, reasons = self._terminations(s)
        np.maximum(self.best_progress, forward_progress(self), out=self.best_progress)
        truncated = (self.episode_step >= self.max_episode_length) & ~terminated
        if self.end_at_course_end:  # a protocol trial ends there: success
            truncated |= (self.best_progress >= self.profile.course_length - 1e-6) & ~terminated
        self.commands.step(rng, s["pos"][:, :2], s["yaw"])
        self._compute_observations(self._diverged, s)
        reward = np.where(self._diverged, 0.0, reward)
        ok = ~self._diverged
        info = {
            "reward_terms": {k: (v * ok).astype(np.float32) for k, v in scaled.items()},
            "diverged": self._diverged.copy(),
            "termination": reasons,
            "episode_step": self.episode_step.copy(),
            "terrain_level": self.terrain_level.copy(),
            "best_progress": self.best_progress.copy(),
        }
        return StepResult(self._obs, reward.astype(np.float32), terminated, truncated, info)

    def close(self) -> None:
        self.batch = None  # type: ignore[assignment]

    # ------------------------------------------------------------------------------
    # cloned states (the planner-ranking analysis, simdist.diagnostics.mechanism)
    def snapshot(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Copies of everything that makes simulations ``rows`` evolve as they will: the integration state
        (mjSTATE_INTEGRATION: time, qpos, qvel, act, warm start, ctrl, applied forces, ...), the per-env model
        fields, the domain parameters, the command generator's state, the actuation-delay queue, the episode
        bookkeeping (step, last actions, spawn, course progress, terrain tile, curriculum score) and the current
        observations. Every array is row-first (``(len(rows), ...)``), so rows can be taken and concatenated."""
        rows = np.asarray(rows, np.int64).ravel()
        b = self.batch
        snap = {f"data/{f}": np.array(b.bind(f)[rows]) for f in _state_fields()}
        snap |= {f"model/{f}": np.array(b.expanded(f)[rows]) for f in _CLONED_MODEL_FIELDS}
        snap |= {f"env/{f}": np.array(getattr(self, f)[rows]) for f in _CLONED_ENV_FIELDS}
        snap |= {f"params/{f.name}": np.array(getattr(self.params, f.name)[rows])
                 for f in dataclasses.fields(self.params)}
        snap |= {f"commands/{f}": np.array(getattr(self.commands, f)[rows]) for f in _CLONED_COMMAND_FIELDS}
        snap["queue"] = np.array(self._action_queue[:, rows].transpose(1, 0, 2))
        snap |= {f"obs/{k}": np.array(v[rows]) for k, v in self._obs.items()}
        return snap

    def restore(self, snap: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, np.ndarray]:
        """Write a :meth:`snapshot` (one row per entry of ``rows``) into simulations ``rows`` of this env, which
        must be built as the snapshot's was (same profile, terrain and command mode); returns the observations.

        The next steps of a restored row are bit-identical to the original's, and its observation is the
        snapshot's (the contact-force sensors, which hold the last substep's forces, cannot be recomputed from the
        state; the next step refreshes them). Not cloned: the env's random generator, shared by all rows (only
        profiles with observation or action noise draw from it while stepping)."""
        rows = np.asarray(rows, np.int64).ravel()
        if snap["queue"].shape[1] != len(self._action_queue):
            raise ValueError(f"the snapshot's actuation delay ({snap['queue'].shape[1] - 1} steps) is not this "
                             f"env's ({len(self._action_queue) - 1}): build the env with the same profile")
        if self._needs_reset:
            self.reset()
        b = self.batch
        for f in _CLONED_MODEL_FIELDS:
            b.expand(f)[rows] = snap[f"model/{f}"]
        b.set_const(rows)  # body masses and inertial frames feed the model's derived constants
        b.reset(rows, stage=mujoco.mjtStage.mjSTAGE_NONE.value)
        for f in _state_fields():
            b.bind(f)[rows] = snap[f"data/{f}"]
        b.forward(rows, stage=mujoco.mjtStage.mjSTAGE_VEL.value)  # as a step leaves it: positions current
        self._warn_count[rows] = self._instability_warnings()[rows]
        for f in _CLONED_ENV_FIELDS:
            getattr(self, f)[rows] = snap[f"env/{f}"]
        for f in dataclasses.fields(self.params):
            getattr(self.params, f.name)[rows] = snap[f"params/{f.name}"]
        for f in _CLONED_COMMAND_FIELDS:
            getattr(self.commands, f)[rows] = snap[f"commands/{f}"]
        self._action_queue[:, rows] = snap["queue"].transpose(1, 0, 2)
        self._compute_observations(self._diverged)
        for k, v in self._obs.items():
            v[rows] = snap[f"obs/{k}"]
        return self._obs

    # ------------------------------------------------------------------------------
    # convenience views
    @property
    def base_pos(self) -> np.ndarray:
        return self.qpos[:, :3]

    @property
    def observations(self) -> dict[str, np.ndarray]:
        return self._obs

    # ------------------------------------------------------------------------------
    # physics
    def _physics_step(self) -> None:
        try:
            if self.velocity_limit is None:
                self.batch.step(nstep=self.substeps, stage=mujoco.mjtStage.mjSTAGE_VEL.value)
            else:  # the limit follows the joint speed: one physics step at a time
                for _ in range(self.substeps):
                    self._torque_speed_limit()
                    self.batch.step(nstep=1, stage=mujoco.mjtStage.mjSTAGE_VEL.value)
            failed = np.zeros(self.num_envs, bool)
        except self._simulation_error:
            failed = np.asarray(self.batch.status) != 0
        warn = self._instability_warnings()
        auto_reset = warn > self._warn_count  # MuJoCo reset the data itself (bad qpos/qvel/qacc)
        self._warn_count = warn
        finite = np.isfinite(self.qpos).all(1) & np.isfinite(self.qvel).all(1)
        huge = np.abs(self.qacc).max(1) > DIVERGED_QACC
        self._diverged |= failed | auto_reset | ~finite | huge
        if self._diverged.any():  # keep numbers finite so observations stay usable
            bad = self._diverged
            self.qpos[bad] = np.nan_to_num(self.qpos[bad], nan=0.0, posinf=0.0, neginf=0.0)
            self.qvel[bad] = 0.0

    def _torque_speed_limit(self) -> None:
        """IsaacLab's DC motor: torque in [limit (-1 - v/v_max), limit (1 - v/v_max)] within [-limit, limit]."""
        limit = R.TORQUE_LIMIT * (self.profile.motor_strength if self.profile is not None else 1.0)
        ratio = self.qvel[:, 6:18] / self.velocity_limit
        self.m_forcerange[:, :, 0] = np.clip(limit * (-1.0 - ratio), -limit, 0.0)
        self.m_forcerange[:, :, 1] = np.clip(limit * (1.0 - ratio), 0.0, limit)

    def _instability_warnings(self) -> np.ndarray:
        """(B,) total count of MuJoCo's bad-qpos/qvel/qacc warnings (each auto-resets the data)."""
        return self.batch.warning[:, _INSTABILITY_WARNINGS, 1].sum(axis=1).astype(np.float64)

    def _kinematics(self) -> dict[str, np.ndarray]:
        qpos, qvel = self.qpos, self.qvel
        quat = qpos[:, 3:7] / np.maximum(np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True), 1e-9)
        rot = quat_to_rotmat(quat)
        pos = qpos[:, :3]
        feet = self.site_xpos[:, self.foot_site_ids]  # (B, 4, 3)
        ground_feet = self.terrain.height_at(feet[..., 0], feet[..., 1])
        foot_h = feet[..., 2] - ground_feet - R.FOOT_RADIUS
        sd = self.sensordata
        foot_wrench = -sd[:, R.SENSOR_FOOT].reshape(-1, 4, 6)
        foot_force = np.linalg.norm(foot_wrench[..., :3], axis=2)
        bad_force = np.maximum(
            np.linalg.norm(sd[:, R.SENSOR_BASE], axis=1),
            np.linalg.norm(sd[:, R.SENSOR_THIGHS].reshape(-1, 4, 3), axis=2).max(1),
        )
        return {
            "pos": pos,
            "rot": rot,
            "yaw": yaw_from_rotmat(rot),
            "lin_vel": world_to_body(rot, qvel[:, :3]),
            "ang_vel": qvel[:, 3:6],  # free-joint angular velocity is in the body frame
            "gravity": -rot[:, 2, :],  # R^T (0, 0, -1)
            "joint_pos_rel": qpos[:, 7:19] - R.DEFAULT_JOINT_POS,
            "joint_vel": qvel[:, 6:18],
            "foot_height": foot_h,
            "foot_contact": foot_force > CONTACT_THRESHOLD,
            "foot_wrench": foot_wrench,
            "bad_contact": bad_force > CONTACT_THRESHOLD,
        }

    def _reward_inputs(self, s: dict[str, np.ndarray], cmd: np.ndarray) -> RewardInputs:
        return RewardInputs(
            lin_vel=s["lin_vel"], ang_vel=s["ang_vel"], gravity=s["gravity"], command=cmd,
            joint_pos_rel=s["joint_pos_rel"], joint_acc=self.qacc[:, 6:], torque=self.actuator_force,
            action=self.last_action, last_action=self.prev_action, foot_contact=s["foot_contact"],
            foot_height=s["foot_height"], time=self.episode_step * self.dt,
        )

    def _terminations(self, s: dict[str, np.ndarray]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        tilt = s["gravity"][:, 2] > -MAX_TILT_COS
        reasons = {"contact": s["bad_contact"], "tilt": tilt, "diverged": self._diverged.copy()}
        if self.base_height_termination is not None:
            ground = self.terrain.height_at(s["pos"][:, 0], s["pos"][:, 1])
            reasons["base_height"] = s["pos"][:, 2] - ground < self.base_height_termination
        terminated = np.zeros(self.num_envs, bool)
        for v in reasons.values():
            terminated |= v
        return terminated, reasons

    # ------------------------------------------------------------------------------
    # observations
    def height_scan(self, pos: np.ndarray, yaw: np.ndarray) -> np.ndarray:
        """(B, 315) base_z - ground_z - 0.3 on the yaw-aligned grid, unclipped."""
        gx, gy = _SCAN_GX, _SCAN_GY
        c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
        wx = pos[:, 0:1] + c * gx - s * gy
        wy = pos[:, 1:2] + s * gx + c * gy
        ground = self.terrain.height_at(wx.astype(np.float32), wy.astype(np.float32))
        return pos[:, 2:3].astype(np.float32) - ground - SCAN_OFFSET

    def _compute_observations(self, zero_mask: np.ndarray, s: dict[str, np.ndarray] | None = None) -> None:
        if s is None:
            s = self._kinematics()
        phase = 2 * np.pi * self.episode_step * self.dt / 0.5
        clock = np.stack([np.cos(phase), np.sin(phase)], axis=1)
        proprio = np.concatenate([
            s["lin_vel"], s["ang_vel"], s["gravity"], s["joint_pos_rel"], s["joint_vel"], clock], axis=1)
        scan = self.height_scan(s["pos"], s["yaw"])
        p = self.profile
        rot = s["rot"]
        wrench_b = np.concatenate([world_to_body(rot, s["foot_wrench"][..., :3]),
                                   world_to_body(rot, s["foot_wrench"][..., 3:])], axis=2)
        cmd = self.commands.command
        privileged = np.concatenate([
            s["lin_vel"], s["ang_vel"], s["gravity"], cmd, s["joint_pos_rel"], s["joint_vel"],
            self.last_action, np.clip(scan, -1.0, 1.0), clock, 0.1 * wrench_b.reshape(-1, 24),
            np.clip(s["foot_height"], -2.0, 2.0), self.params.privileged(),
        ], axis=1)
        if p is not None and p.obs_noise > 0:
            rng = self._rng
            proprio = proprio + p.obs_noise * PROPRIO_NOISE_STD * rng.standard_normal(proprio.shape)
            scan = scan + p.obs_noise * SCAN_NOISE_STD * rng.standard_normal(scan.shape).astype(np.float32)
        official = privileged.copy()
        official[:, PRIVILEGED_WRENCH] = 0.1 * incoming_foot_wrench(s).reshape(-1, 24)
        obs = {
            "proprio": proprio.astype(np.float32),
            "extero": np.clip(scan, -2.0, 2.0).astype(np.float32),
            "privileged": privileged.astype(np.float32),
            "privileged_official": official.astype(np.float32),
            "command": cmd.astype(np.float32),
        }
        if zero_mask.any():
            for v in obs.values():
                np.nan_to_num(v, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
        self._obs = obs

    # ------------------------------------------------------------------------------
    # resets, curriculum
    def _update_curriculum(self, ids: np.ndarray) -> None:
        """Cos-similarity terrain curriculum: > 0.75 up a level, < 0.25 down (tile grids only)."""
        if self.terrain.num_rows == 0 or self.profile is not None:
            return
        rows = self.terrain.num_rows
        if self.tiles is not None:
            self.terrain_level[ids], self.terrain_col[ids] = self.tiles[ids, 0], self.tiles[ids, 1]
            return
        if self.terrain_mode == "random":
            self.terrain_level[ids] = self._rng.integers(0, rows, size=len(ids))
            self.terrain_col[ids] = self._rng.integers(0, self.terrain.num_cols, size=len(ids))
            return
        steps = self.episode_step[ids]
        played = steps > 0
        score = np.where(played, self._cos_sum[ids] / np.maximum(steps, 1), 0.5)
        level = self.terrain_level[ids] + (score > 0.75) - (score < 0.25)
        beyond = level >= rows  # solved the hardest level: random level, as IsaacLab
        level = np.where(beyond, self._rng.integers(0, rows, size=len(ids)), np.clip(level, 0, rows - 1))
        self.terrain_level[ids] = level
        self.terrain_col[ids] = self._rng.integers(0, self.terrain.num_cols, size=len(ids))

    def _accumulate_cos(self, s: dict[str, np.ndarray], cmd: np.ndarray) -> None:
        v = np.concatenate([s["lin_vel"][:, :2], s["ang_vel"][:, 2:3]], axis=1)
        cn, vn = np.linalg.norm(cmd, axis=1), np.linalg.norm(v, axis=1)
        cos = np.sum(cmd * v, axis=1) / np.maximum(cn * vn, 1e-6)
        standing = cn < 0.1
        self._cos_sum += np.where(standing, (vn < 0.2).astype(np.float64), cos)

    def _spawn_xy(self, ids: np.ndarray) -> np.ndarray:
        n = len(ids)
        if self.terrain.num_rows > 0 and self.profile is None:
            cx, cy = self.terrain.tile_center(self.terrain_level[ids], self.terrain_col[ids])
            xy = np.stack([cx, cy], axis=1)
        else:
            xy = np.zeros((n, 2))
        if self.randomize and self.profile is None:
            xy = xy + self._rng.uniform(-POSE_XY, POSE_XY, size=(n, 2))
        return xy

    def _reset_ids(self, ids: np.ndarray) -> None:
        rng, n = self._rng, len(ids)
        if self.randomize:
            self.params.sample_reset(ids, rng)
        ms = self.profile.motor_strength if self.profile is not None else 1.0
        kp = R.KP * self.params.kp_scale[ids] * ms
        kd = R.KD * self.params.kd_scale[ids] * ms
        self.m_gain[ids, :, 0] = kp
        self.m_bias[ids, :, 1] = -kp
        self.m_bias[ids, :, 2] = -kd
        self.m_forcerange[ids, :, 0] = -R.TORQUE_LIMIT * ms
        self.m_forcerange[ids, :, 1] = R.TORQUE_LIMIT * ms
        self.m_frictionloss[ids, 6:] = self.params.joint_friction[ids]

        xy = self._spawn_xy(ids)
        yaw = rng.uniform(-np.pi, np.pi, size=n) if (self.randomize and self.profile is None) else np.zeros(n)
        joints = np.tile(R.DEFAULT_JOINT_POS, (n, 1))
        if self.randomize:
            joints = joints * rng.uniform(*JOINT_INIT_SCALE, size=(n, 12))
        joints = np.clip(joints, self.model.jnt_range[1:, 0], self.model.jnt_range[1:, 1])
        # base height: clear the highest ground under the body and feet
        fx = np.array([0.0, 0.19, 0.19, -0.19, -0.19, 0.3])
        fy = np.array([0.0, -0.14, 0.14, -0.14, 0.14, 0.0])
        c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
        gx = xy[:, 0:1] + c * fx - s * fy
        gy = xy[:, 1:2] + s * fx + c * fy
        ground = self.terrain.height_at(gx.astype(np.float32), gy.astype(np.float32)).max(1)

        self.batch.reset(ids, stage=mujoco.mjtStage.mjSTAGE_NONE.value)
        qpos = np.zeros((n, self.model.nq))
        qpos[:, 0:2] = xy
        qpos[:, 2] = ground + R.NOMINAL_BASE_HEIGHT
        qpos[:, 3:7] = yaw_quat(yaw)
        qpos[:, 7:19] = joints
        self.qpos[ids] = qpos
        self.qvel[ids] = 0.0
        self.ctrl[ids] = joints
        self.batch.forward(ids, stage=mujoco.mjtStage.mjSTAGE_ACC.value)
        self._warn_count[ids] = self._instability_warnings()[ids]

        self.spawn_pos[ids] = qpos[:, :3]
        self.episode_step[ids] = 0
        self.last_action[ids] = 0.0
        self.prev_action[ids] = 0.0
        self._action_queue[:, ids] = 0.0
        self._cos_sum[ids] = 0.0
        self._diverged[ids] = False
        self.best_progress[ids] = 0.0
        self.commands.reset(ids, rng, xy, yaw)


#: MjData fields of the integration state (mjSTATE_INTEGRATION), as far as this mujoco's batch binds them
_INTEGRATION_FIELDS = ("time", "qpos", "qvel", "act", "history", "qacc_warmstart", "ctrl", "qfrc_applied",
                       "xfrc_applied", "eq_active", "mocap_pos", "mocap_quat", "userdata", "plugin_state", "plastic")
#: the model fields the env sets per simulation (randomisation, profile, gains)
_CLONED_MODEL_FIELDS = ("geom_friction", "geom_solref", "body_mass", "body_ipos", "actuator_gainprm",
                        "actuator_biasprm", "actuator_forcerange", "dof_frictionloss")
_CLONED_ENV_FIELDS = ("last_action", "prev_action", "best_progress", "episode_step", "spawn_pos", "terrain_level",
                      "terrain_col", "_cos_sum", "_diverged")
_CLONED_COMMAND_FIELDS = ("speed", "command", "kind", "heading", "acc", "std", "timer", "origin", "yaw0", "elapsed",
                          "hold")


def _per_env(value: np.ndarray | Sequence[float], shape: tuple[int, ...], name: str, dtype: type) -> np.ndarray:
    """``value`` as a finite array of ``shape`` (one entry per env), or a ValueError naming ``name``."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != shape or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be a finite array of shape {shape}, got shape {arr.shape}")
    return arr.astype(dtype)


def _state_fields() -> tuple[str, ...]:
    known = _batch_module().DATA_FIELDS
    return tuple(f for f in _INTEGRATION_FIELDS if f in known)


_SCAN_GX, _SCAN_GY = (a[None, :] for a in _scan_grid())
