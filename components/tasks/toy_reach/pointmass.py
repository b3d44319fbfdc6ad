"""``toy-reach``: a planar point mass on a floor that must reach and hold a goal (MuJoCo, 10 Hz).

Physics: a 2-D puck on slide joints x and y, force actuators (``|a| <= 1`` → ``|F| <= 2`` N), dry
sliding friction modelled as joint ``frictionloss = μ m g`` plus viscous damping that bounds the speed
(about 1 m/s at full force), so the sequences a planner samples stay within the data's states. Physics
runs at 200 Hz, twenty substeps per 10 Hz control step: at 10 Hz a horizon of 8 steps spans 0.8 s, long
enough for the distance to the goal to separate good plans from bad ones (at 50 Hz the rewards of all
candidate plans are nearly equal and the planner ranks them by noise).

Variants are reality profiles (:mod:`.profiles`: ``tilt``, ``mass_scale``, ``friction``, ``latency``, ``gain``;
built-ins in ``profiles/*.yaml``, or any YAML path, dict or :class:`~.profiles.ToyProfile`):

- ``"sim"``: per-episode domain randomisation of mass in ``SIM_MASS`` and friction coefficient in
  ``SIM_FRICTION`` on a level floor (the profile's defaults; a key left at null keeps its randomisation).
- ``"real"``: a heavier puck (``REAL_MASS`` = 2.5 × nominal) on a slippery *slope* tilted by
  ``REAL_TILT`` rad along +x (a constant drift force ``m g sin θ``), none of which the sim
  randomisation covers. A model pretrained in sim mispredicts both the response and the drift.
- ``"lag"``: actions act ``latency`` control steps late through a stronger actuator (``gain``): the simulator
  has neither. The delayed response is identifiable from the past actions a model is given; a planner that
  ignores it overshoots and oscillates.

Observation group ``state`` = ``(p − g, v)`` (4 dims); no commands. Reward, dt-scaled and
computed on the post-step state: ``r = dt·(ALIVE − ‖p − g‖ − 0.1‖a‖²)``. The alive bonus keeps every
in-arena step positive (arena radius 2, goal within 0.5), so leaving the arena (``terminated``)
never pays. Episodes are truncated after ``episode_length`` steps (default 60 = 6 s).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from simdist.components.tasks.toy_reach.constants import SUCCESS_RADIUS
from simdist.components.tasks.toy_reach.profiles import ToyProfile, load_profile
from simdist.envs.base import ArraySpec, StepResult
from simdist.registry import register

DT = 0.1
PHYSICS_DT = 0.005
MAX_FORCE = 2.0
NOMINAL_MASS = 1.0
DAMPING = 2.0  # N·s/m: bounds the speed (~1 m/s at full force), so sampled plans stay in the data
SIM_MASS = (0.8, 1.25)
SIM_FRICTION = (0.02, 0.08)
# the values of profiles/real.yaml
REAL_MASS = 2.5
REAL_FRICTION = 0.02  # PTFE-like: the drift (1.2 N) clearly exceeds dry friction (0.5 N)
REAL_TILT = 0.05  # rad (≈ 2.9°): drift force 2.5·9.81·sin(0.05) ≈ 1.2 N, 61 % of the actuator's
ARENA_RADIUS = 2.0
START_RADIUS = 1.2
GOAL_RADIUS = 0.5
ALIVE = 3.0
ACTION_COST = 0.1
GRAVITY = 9.81


def build_model(tilt: float = 0.0) -> mujoco.MjModel:
    """Compile the point-mass model with :class:`mujoco.MjSpec` (floor tilted by ``tilt`` along x)."""
    spec = mujoco.MjSpec()
    spec.compiler.degree = False
    spec.option.timestep = PHYSICS_DT
    spec.option.gravity = [GRAVITY * np.sin(tilt), 0.0, -GRAVITY * np.cos(tilt)]
    world = spec.worldbody
    world.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[3, 3, 0.1], contype=0, conaffinity=0)
    puck = world.add_body(name="puck", pos=[0, 0, 0.05])
    for name, axis in (("x", [1, 0, 0]), ("y", [0, 1, 0])):
        puck.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_SLIDE, axis=axis, damping=DAMPING)
    puck.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.05, 0.02, 0], mass=NOMINAL_MASS,
                  contype=0, conaffinity=0)
    for name in ("x", "y"):
        spec.add_actuator(name=f"f{name}", target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT,
                          gear=[MAX_FORCE, 0, 0, 0, 0, 0], ctrllimited=True, ctrlrange=[-1, 1])
    return spec.compile()


def reward_fn(rel: np.ndarray, actions: np.ndarray, dt: float = DT) -> np.ndarray:
    """dt-scaled reward of post-step relative positions ``rel`` (B, 2) and applied ``actions`` (B, 2)."""
    dist = np.linalg.norm(rel, axis=-1)
    return (dt * (ALIVE - dist - ACTION_COST * np.sum(actions**2, axis=-1))).astype(np.float32)


@register("env", "toy-reach")
class ToyReachEnv:
    """Batched point-mass reach task; one ``MjModel``/``MjData`` pair per env (no auto-reset).

    ``variant`` (or ``profile``, which wins when given) is a reality profile: ``"sim"``, ``"real"``, a YAML
    path, a dict or a :class:`ToyProfile`; an invalid one raises :class:`~simdist.profiles.ProfileError`.
    """

    dt = DT

    def __init__(self, num_envs: int = 16, variant: str | Path | dict | ToyProfile = "sim", seed: int | None = 0,
                 episode_length: int = 60, randomize: bool = True,
                 profile: str | Path | dict | ToyProfile | None = None) -> None:
        self.profile = load_profile(profile if profile is not None else variant)
        self.num_envs = int(num_envs)
        self.variant = self.profile.name
        self.episode_length = int(episode_length)
        self.randomize = randomize
        self.observation_spec = {"state": ArraySpec((4,))}
        self.action_spec = ArraySpec((2,), low=-1.0, high=1.0)
        self.action_low = np.full(2, -1.0, np.float32)
        self.action_high = np.full(2, 1.0, np.float32)
        self.models = [build_model(self.profile.tilt) for _ in range(self.num_envs)]
        for m in self.models:
            m.actuator_gear[:, 0] = MAX_FORCE * self.profile.gain
        self.datas = [mujoco.MjData(m) for m in self.models]
        #: actions chosen but not yet acting, oldest first (``latency`` steps per env)
        self.action_queue = np.zeros((self.num_envs, self.profile.latency, 2))
        self._nsub = round(DT / PHYSICS_DT)
        self._body = self.models[0].body("puck").id
        self.goal = np.zeros((self.num_envs, 2))
        self.mass = np.full(self.num_envs, NOMINAL_MASS)
        self.friction = np.full(self.num_envs, np.mean(SIM_FRICTION))
        self.t = np.zeros(self.num_envs, np.int64)
        self.rng = np.random.default_rng(seed)

    # -- protocol -------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, ids: np.ndarray | None = None) -> dict[str, np.ndarray]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        ids = np.arange(self.num_envs) if ids is None else np.asarray(ids, dtype=np.int64).reshape(-1)
        n = len(ids)
        start = _uniform_disc(self.rng, n, START_RADIUS)
        self.goal[ids] = _uniform_disc(self.rng, n, GOAL_RADIUS)
        p = self.profile
        mass = self._draw(None if p.mass_scale is None else NOMINAL_MASS * p.mass_scale, SIM_MASS, NOMINAL_MASS, n)
        mu = self._draw(p.friction, SIM_FRICTION, float(np.mean(SIM_FRICTION)), n)
        for k, e in enumerate(ids):
            m, d = self.models[e], self.datas[e]
            self._set_physics(int(e), float(mass[k]), float(mu[k]))
            mujoco.mj_resetData(m, d)
            d.qpos[:2] = start[k]
            mujoco.mj_forward(m, d)
        self.t[ids] = 0
        self.action_queue[ids] = 0.0
        return self._obs()

    def step(self, actions: np.ndarray) -> StepResult:
        a = np.clip(np.asarray(actions, dtype=np.float64).reshape(self.num_envs, 2), -1.0, 1.0)
        applied = self._delay(a)
        for e in range(self.num_envs):
            d = self.datas[e]
            d.ctrl[:] = applied[e]
            mujoco.mj_step(self.models[e], d, nstep=self._nsub)
        self.t += 1
        obs = self._obs()
        pos = self.positions
        diverged = ~np.isfinite(obs["state"]).all(axis=1)
        terminated = (np.linalg.norm(pos, axis=1) > ARENA_RADIUS) | diverged
        truncated = (self.t >= self.episode_length) & ~terminated
        reward = reward_fn(obs["state"][:, :2], a)
        success = np.linalg.norm(obs["state"][:, :2], axis=1) < SUCCESS_RADIUS  # the state's offset to the goal
        return StepResult(obs, reward, terminated, truncated, {"diverged": diverged, "success": success})

    def close(self) -> None:
        self.models, self.datas = [], []

    # -- helpers --------------------------------------------------------------------------------

    def _delay(self, a: np.ndarray) -> np.ndarray:
        """The actions that act this step: ``a`` itself without latency, else the oldest queued ones."""
        if self.profile.latency == 0:
            return a
        applied = self.action_queue[:, 0].copy()
        self.action_queue = np.concatenate([self.action_queue[:, 1:], a[:, None]], axis=1)
        return applied

    @property
    def positions(self) -> np.ndarray:
        """World-frame puck positions (B, 2)."""
        return np.stack([d.qpos[:2] for d in self.datas])

    @property
    def velocities(self) -> np.ndarray:
        return np.stack([d.qvel[:2] for d in self.datas])

    def set_state(self, pos: np.ndarray, vel: np.ndarray,
                  goal: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Place every puck at ``pos`` with ``vel`` (B, 2) (and goal); returns observations."""
        if goal is not None:
            self.goal[:] = goal
        for e, (m, d) in enumerate(zip(self.models, self.datas)):
            d.qpos[:2], d.qvel[:2] = pos[e], vel[e]
            mujoco.mj_forward(m, d)
        return self._obs()

    def episode_meta(self, ids: np.ndarray) -> list[dict[str, Any]]:
        """Randomisation parameters of the current episodes of ``ids`` (stored in episode meta)."""
        return [
            {"variant": self.variant, "mass": float(self.mass[e]), "friction": float(self.friction[e]),
             "tilt": self.profile.tilt, "latency": self.profile.latency, "gain": self.profile.gain,
             "goal": self.goal[e].tolist()}
            for e in np.asarray(ids).reshape(-1)
        ]

    def _draw(self, value: float | None, sim_range: tuple[float, float], nominal: float, n: int) -> np.ndarray:
        """The profile's ``value``, else the simulator's randomisation (or its ``nominal`` value without)."""
        if value is not None:
            return np.full(n, value)
        return self.rng.uniform(*sim_range, n) if self.randomize else np.full(n, nominal)

    def _set_physics(self, e: int, mass: float, mu: float) -> None:
        m = self.models[e]
        m.body_mass[self._body] = mass
        m.body_inertia[self._body] = self.models[e].body_inertia[self._body] * (mass / self.mass[e])
        m.dof_frictionloss[:2] = mu * mass * GRAVITY
        self.mass[e], self.friction[e] = mass, mu

    def _obs(self) -> dict[str, np.ndarray]:
        state = np.concatenate([self.positions - self.goal, self.velocities], axis=1)
        return {"state": state.astype(np.float32)}


def _uniform_disc(rng: np.random.Generator, n: int, radius: float) -> np.ndarray:
    r = radius * np.sqrt(rng.random(n))
    th = rng.uniform(0, 2 * np.pi, n)
    return np.stack([r * np.cos(th), r * np.sin(th)], axis=1)
