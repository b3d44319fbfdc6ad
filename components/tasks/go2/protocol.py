"""Go2 straight-walk evaluation protocol: forward progress over speeds × trials (SIMDIST 6.7, 7, 13 §3.2).

For every speed, ``trials`` episodes run as one batch of envs. Each episode starts with
``reset_steps`` (25) steps of zero action and zero command (the official controller's reset phase);
then the straight-walk PD command of SIMDIST 6.7 takes over: x_des advances at the speed from the
pose where walking starts, and c = (x_des - x, -y, -Δψ) in that initial-heading frame (gains 1, no
clipping). The command is computed here and written into the controller's observations
(``command`` and the command slice of ``privileged``); the env itself runs a zero fixed command.

Metrics per trial:

* **progress**: the largest displacement of the base along the initial heading since spawn,
  clipped to [0, course length] (for reality profiles this is
  :func:`~simdist.components.tasks.go2.profiles.forward_progress`: x displacement on the course);
* **success**: progress reached the course length (the trial stops there);
* **terminated**: the robot fell (contact, tilt, diverged physics) before success;
* **speed**: progress / walking time (until success, fall or the time limit).

The time limit is ``time_factor`` (2) × course length / speed after the reset phase. Courses: a
reality profile (its course and length), or a plain terrain (``flat``; ``slope``: a straight 5.7°
incline at friction 0.8; ``rough``/``boxes``: one 15 m tile at difficulty 0.4, as the official sim
deployment) with a course length of 3.0 m unless given. ``randomize=False`` (default) uses the
official deployment overrides (nominal friction, mass and gains, origin pose), so a deterministic
controller repeats the same trial; ``randomize=True`` draws domain randomisation per trial (with a
profile, its friction still applies).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from simdist.components.tasks.go2.commands import CommandGenerator
from simdist.components.tasks.go2.kinematics import quat_to_rotmat, yaw_from_rotmat
from simdist.components.tasks.go2.profiles import RealityProfile, load_profile
from simdist.components.tasks.go2.terrain import Terrain, sub_terrain
from simdist.evaluation import EvaluationResult, bootstrap_ci

logger = logging.getLogger(__name__)

DEFAULT_SPEEDS: tuple[float, ...] = (0.1, 0.3, 0.5)
PLAIN_TERRAINS: tuple[str, ...] = ("flat", "slope", "rough", "boxes")
DEFAULT_COURSE_LENGTH = 3.0
RESET_STEPS = 25
PRIVILEGED_COMMAND = slice(9, 12)  # command inside the 433-d privileged observation
_TILE_TYPES = {"rough": "random_rough", "boxes": "boxes"}


@dataclass
class Course:
    """Where the trials run: env keyword arguments, the progress cap and a name."""

    name: str
    length: float
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    speeds: tuple[float, ...] = (0.1, 0.3, 0.5)  # the protocol's commanded speeds for this course


#: metres of terrain kept beyond the end of a tiled course (rough, boxes)
TILE_MARGIN = 3.0


def make_course(profile: str | dict | RealityProfile | None = None, terrain: str | None = None,
                course_length: float | None = None, difficulty: float = 0.4, seed: int = 0) -> Course:
    """A :class:`Course` from a reality profile (name, YAML path, dict) or a plain terrain name."""
    if (profile is None) == (terrain is None):
        raise ValueError("give exactly one of profile and terrain")
    if profile is not None:
        p = load_profile(profile)
        if course_length is not None:
            p = RealityProfile.from_dict({**p.to_dict(), "course_length": course_length})
        return Course(p.name, p.course_length, {"profile": p}, tuple(p.eval_speeds))
    length = float(course_length or DEFAULT_COURSE_LENGTH)
    if terrain == "flat":
        return Course("flat", length, {"terrain": "flat"})
    if terrain == "slope":
        p = RealityProfile(name="slope", description="5.7 deg incline, friction 0.8", course="slope",
                           course_length=length, slope_deg=5.7, friction=0.8)
        return Course("slope", length, {"profile": p})
    if terrain in _TILE_TYPES:
        # one tile centred on the spawn point, long enough that the course never reaches its edge
        size, res = max(15.0, 2.0 * (length + TILE_MARGIN)), 0.1
        tile = sub_terrain(_TILE_TYPES[terrain], difficulty, size, res, seed).astype(np.float32)
        half = (tile.shape[0] - 1) * res / 2
        t = Terrain(heights=np.ascontiguousarray(tile.T), resolution=res, origin=(-half, -half))
        return Course(terrain, length, {"terrain": t})
    raise ValueError(f"unknown terrain {terrain!r}; use one of {PLAIN_TERRAINS} or a profile")


@dataclass
class SpeedResult:
    """The trials of one commanded speed."""

    speed: float
    progress: list[float]
    success: list[bool]
    terminated: list[bool]
    walk_time: list[float]
    forward_speed: list[float]
    #: the simulation diverged (counted as a fall, progress frozen at its last sound step)
    diverged: list[bool] = field(default_factory=list)

    @property
    def mean_progress(self) -> float:
        return float(np.mean(self.progress))

    @property
    def success_rate(self) -> float:
        return float(np.mean(self.success))

    @property
    def termination_rate(self) -> float:
        return float(np.mean(self.terminated))

    @property
    def mean_speed(self) -> float:
        return float(np.mean(self.forward_speed))

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "mean_progress": self.mean_progress, "success_rate": self.success_rate,
                "termination_rate": self.termination_rate, "mean_speed": self.mean_speed}


SPEED_FIELDS = tuple(f.name for f in fields(SpeedResult))


@dataclass
class ProtocolResult:
    """All speeds; ``mean_progress`` over every trial is the website's quadruped metric."""

    course: str
    course_length: float
    speeds: list[SpeedResult]
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def mean_progress(self) -> float:
        return float(np.mean([p for s in self.speeds for p in s.progress]))

    @property
    def success_rate(self) -> float:
        return float(np.mean([x for s in self.speeds for x in s.success]))

    @property
    def termination_rate(self) -> float:
        return float(np.mean([x for s in self.speeds for x in s.terminated]))

    @classmethod
    def load(cls, path: str | Path) -> ProtocolResult:
        """Read a protocol result saved by ``simdist evaluate --json`` (its ``details.protocol``) or by
        ``to_dict``."""
        data = json.loads(Path(path).read_text())
        if isinstance(data, dict) and "protocol" in data.get("details", {}):
            data = data["details"]["protocol"]
        try:
            speeds = [SpeedResult(**{k: s[k] for k in SPEED_FIELDS if k in s}) for s in data["speeds"]]
            return cls(data["course"], data["course_length"], speeds, data.get("settings", {}))
        except (KeyError, TypeError) as err:
            raise ValueError(f"{path}: not a protocol result (missing key {err})") from err

    def to_dict(self) -> dict[str, Any]:
        return {"course": self.course, "course_length": self.course_length,
                "mean_progress": self.mean_progress, "success_rate": self.success_rate,
                "termination_rate": self.termination_rate, "speeds": [s.to_dict() for s in self.speeds],
                "settings": self.settings}

    def to_evaluation(self, task: str = "go2", profile: str | None = None) -> EvaluationResult:
        """The task-generic result: forward progress per trial, grouped by speed."""
        return EvaluationResult(
            task=task, metric="forward_progress", profile=profile,
            values=[p for s in self.speeds for p in s.progress], success=[x for s in self.speeds for x in s.success],
            diverged=[d for s in self.speeds for d in (s.diverged or [False] * len(s.progress))],
            groups=[f"{s.speed:g} m/s" for s in self.speeds for _ in s.progress], details={"protocol": self.to_dict()})

    def table(self) -> str:
        """Per speed and overall: progress mean [95 % bootstrap CI] (trials), successes, falls, speed."""
        n = sum(len(s.progress) for s in self.speeds)
        lines = [f"course {self.course} ({self.course_length:.2f} m), {n} trials",
                 f"{'speed':>6} {'progress (m), mean [95 % CI] (n)':>34} {'success':>9} {'fell':>8} {'fwd m/s':>9}"]
        for s in self.speeds:
            k = len(s.progress)
            lines.append(f"{s.speed:6.2f} {bootstrap_ci(s.progress).format('.3f'):>34} "
                         f"{sum(s.success):>5}/{k:<3} {sum(s.terminated):>4}/{k:<3} {s.mean_speed:9.3f}")
        every = [p for s in self.speeds for p in s.progress]
        lines.append(f"{'all':>6} {bootstrap_ci(every).format('.3f'):>34} {self.success_rate:>9.0%} "
                     f"{self.termination_rate:>8.0%}")
        return "\n".join(lines)


def pooled_trials(paths: Iterable[str | Path]) -> dict[str, list]:
    """Every trial of several saved protocol results, pooled: ``{"progress": [...], "terminated": [...]}``."""
    pooled: dict[str, list] = {"progress": [], "terminated": []}
    for path in paths:
        for speed in ProtocolResult.load(path).speeds:
            pooled["progress"] += speed.progress
            pooled["terminated"] += speed.terminated
    return pooled


def with_command(obs: dict[str, np.ndarray], cmd: np.ndarray) -> dict[str, np.ndarray]:
    """``obs`` with its ``command`` group (and the command slots of both privileged groups) set to ``cmd`` (B, 3)."""
    out = dict(obs)
    out["command"] = cmd.astype(np.float32)
    for key in ("privileged", "privileged_official"):
        if key in obs:
            priv = obs[key].copy()
            priv[:, PRIVILEGED_COMMAND] = cmd
            out[key] = priv
    return out


def base_yaw(env: Any) -> np.ndarray:
    """Each env's base yaw (B,), radians."""
    q = np.asarray(env.qpos[:, 3:7], np.float64)
    return yaw_from_rotmat(quat_to_rotmat(q / np.linalg.norm(q, axis=1, keepdims=True)))


#: what a world-model controller's history holds when walking starts (see :func:`run_trials`)
WALK_START_HISTORY: tuple[str, ...] = ("keep", "pad")


def run_trials(env: Any, controller: Any, speed: float, course_length: float, *, seed: int = 0,
               max_steps: int, reset_steps: int = RESET_STEPS, walk_start_history: str = "keep") -> SpeedResult:
    """``env.num_envs`` trials at ``speed`` on ``env``; ``controller`` is a policy or a planner.

    ``walk_start_history`` (world-model controllers): ``"keep"`` (the official loop) walks on from the
    history filled during the reset phase: frames of the robot settling under zero actions, a context the
    training data never holds; ``"pad"`` refills it with copies of the current observation and zero
    actions and commands when walking starts, the context the model was trained on for an episode start.
    """
    if walk_start_history not in WALK_START_HISTORY:
        raise ValueError(f"walk_start_history must be one of {WALK_START_HISTORY}, got {walk_start_history!r}")
    b, dt = env.num_envs, env.dt
    obs = env.reset(seed=seed)
    spawn = np.array(env.base_pos[:, :2], np.float64)
    yaw0 = base_yaw(env)
    heading = np.stack([np.cos(yaw0), np.sin(yaw0)], axis=1)
    gen = CommandGenerator(b, dt, "straight", speed=speed)
    rng = np.random.default_rng(seed)
    cmd = np.zeros((b, 3), np.float32)
    history = controller_history(controller, obs, cmd)
    active = np.ones(b, bool)
    best = np.zeros(b)
    success = np.zeros(b, bool)
    fell = np.zeros(b, bool)
    diverged = np.zeros(b, bool)
    walked = np.zeros(b, np.int64)
    for t in range(max_steps):
        walking = t >= reset_steps
        if t == reset_steps:
            gen.reset(np.arange(b), rng, np.array(env.base_pos[:, :2]), base_yaw(env))
            cmd = gen.command.astype(np.float32)
            if history is not None and walk_start_history == "pad":
                history.reset(obs)
                if hasattr(controller, "reset"):
                    controller.reset()
        if not walking:
            actions = np.zeros((b, 12), np.float32)
        else:
            actions = controller_actions(controller, history, obs, cmd)
        res = env.step(actions)
        if walking:
            gen.step(rng, np.array(env.base_pos[:, :2]), base_yaw(env))
            cmd = gen.command.astype(np.float32)
            walked += active
        obs = res.obs
        if history is not None:
            history.push(obs, actions, command=cmd if history.command_dim else None)
        # a diverged simulation never counts as progress: its trial ends as a fall, at its last sound position
        blown = active & np.asarray(res.info.get("diverged", np.zeros(b, bool)), bool).reshape(b)
        diverged |= blown
        along = ((np.asarray(env.base_pos[:, :2]) - spawn) * heading).sum(1)
        sound = active & ~blown & np.isfinite(along)
        best = np.where(sound, np.maximum(best, np.clip(np.nan_to_num(along), 0.0, course_length)), best)
        newly_fell = active & (np.asarray(res.terminated, bool) | blown)
        fell |= newly_fell
        active &= ~newly_fell
        reached = active & (best >= course_length - 1e-9)
        success |= reached
        active &= ~reached
        if not active.any():
            break
    walk_time = walked * dt
    fwd = np.where(walk_time > 0, best / np.maximum(walk_time, 1e-9), 0.0)
    if diverged.any():
        logger.warning("%d of %d trials at %.2f m/s diverged (scored as falls at their last sound position)",
                       int(diverged.sum()), b, speed)
    return SpeedResult(speed=float(speed), progress=best.tolist(), success=success.tolist(),
                       terminated=fell.tolist(), walk_time=walk_time.tolist(), forward_speed=fwd.tolist(),
                       diverged=diverged.tolist())


def controller_history(controller: Any, obs: dict[str, np.ndarray], cmd: np.ndarray) -> Any:
    """The observation history ``controller`` acts on (None for a plain ``policy(obs)``), started from the first
    observations ``obs`` under command ``cmd`` (zero past actions), the controller's own state reset with it."""
    from simdist.planning.history import history_for

    history = history_for(controller, len(cmd))
    if history is not None:
        history.reset(obs, command=cmd if history.command_dim else None)
        if hasattr(controller, "reset"):
            controller.reset()
    return history


def controller_actions(controller: Any, history: Any, obs: dict[str, np.ndarray], cmd: np.ndarray) -> np.ndarray:
    """(B, 12) float32 actions of ``controller`` under command ``cmd``: from its observation ``history`` (written
    with the command first) when it has one, else from ``obs`` with the command in its observations."""
    if history is not None:
        if history.command_dim:
            history.command[:] = _tensor_like(history.command, cmd)
        return _numpy(controller.act(history))
    return _numpy(controller(with_command(obs, cmd)))


def _numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, np.float32)


def _tensor_like(ref: Any, x: np.ndarray) -> Any:
    import torch

    return torch.as_tensor(x, dtype=ref.dtype, device=ref.device)


def trial_steps(course: Course, speed: float, *, time_factor: float = 2.0, reset_steps: int = RESET_STEPS,
                max_steps: int | None = None) -> int:
    """A trial's step budget: the reset phase plus ``time_factor`` × course length / speed, capped at ``max_steps``."""
    n = reset_steps + int(np.ceil(time_factor * course.length / max(speed, 1e-6) / 0.02))
    return min(n, max_steps) if max_steps is not None else n


def protocol_env(course: Course, trials: int, steps: int, *, seed: int = 0, randomize: bool = False,
                 env_kwargs: dict[str, Any] | None = None) -> Any:
    """The :class:`Go2Env` of ``trials`` trials of up to ``steps`` steps on ``course`` (the env runs a zero
    fixed command; :func:`run_trials` writes the protocol's command into the controller's observations)."""
    from simdist.components.tasks.go2.env import Go2Env

    return Go2Env(trials, randomize=randomize, command_mode="fixed", fixed_command=(0.0, 0.0, 0.0),
                  episode_length_s=(steps + 50) * 0.02, seed=seed, **course.env_kwargs, **(env_kwargs or {}))


def protocol_batches(trials: int, batch: int | None, seed: int) -> list[tuple[int, int]]:
    """``(envs, seed)`` of each batch the protocol runs its ``trials`` per speed in: one batch of all of them with
    ``seed`` (``batch`` None or at least ``trials``), else batches of ``batch`` (the last one smaller), the first
    with ``seed`` and each further one with its own seed drawn from ``(seed, index)``."""
    if batch is None or batch >= trials:
        return [(trials, seed)]
    sizes = [min(batch, trials - start) for start in range(0, trials, batch)]
    return [(n, seed if i == 0 else int(np.random.SeedSequence([seed, i]).generate_state(1)[0]) >> 1)
            for i, n in enumerate(sizes)]


def merge_speed_results(parts: Sequence[SpeedResult]) -> SpeedResult:
    """The trials of several batches at one speed, in batch order."""
    if len(parts) == 1:
        return parts[0]
    lists = {f.name: [x for p in parts for x in getattr(p, f.name)] for f in fields(SpeedResult) if f.name != "speed"}
    return SpeedResult(speed=parts[0].speed, **lists)


def run_protocol(controller: Any, course: Course, *, speeds: Sequence[float] = DEFAULT_SPEEDS,
                 trials: int = 5, seed: int = 0, randomize: bool = False, time_factor: float = 2.0,
                 max_steps: int | None = None, reset_steps: int = RESET_STEPS, walk_start_history: str = "keep",
                 env_kwargs: dict[str, Any] | None = None, log: Callable[[str], None] | None = None,
                 batch: int | None = None) -> ProtocolResult:
    """Run ``trials`` episodes per speed (one batch per speed; with ``batch`` below ``trials``, batches of at
    most ``batch`` envs: :func:`protocol_batches`) and collect the metrics.

    ``max_steps`` caps every trial (control steps including the reset phase), e.g. for smoke tests.
    A controller that takes a seed (``reset(seed=...)``, e.g. an MPPI agent) is reseeded with ``seed`` first,
    so the result depends on the arguments only (``docs/reproducibility.md``). A trial's outcome also depends
    on the batch it runs in: the planner draws its samples for all ``trials`` envs at once, and matrix products
    round a row differently at another batch size, so changing ``trials`` changes every trial.
    """

    def steps_for(v: float) -> int:
        return trial_steps(course, v, time_factor=time_factor, reset_steps=reset_steps, max_steps=max_steps)

    from simdist.workflows.rollout import reseed

    reseed(controller, seed)  # the same call gives the same trials, whatever the controller ran before
    batches = protocol_batches(trials, batch, seed)
    parts: list[list[SpeedResult]] = [[] for _ in speeds]
    for i, (size, part_seed) in enumerate(batches):
        env = protocol_env(course, size, max(steps_for(v) for v in speeds), seed=part_seed, randomize=randomize,
                           env_kwargs=env_kwargs)
        try:
            for k, v in enumerate(speeds):
                parts[k].append(run_trials(env, controller, v, course.length, seed=part_seed + k,
                                           max_steps=steps_for(v), reset_steps=reset_steps,
                                           walk_start_history=walk_start_history))
                if log is not None and i == len(batches) - 1:
                    r = merge_speed_results(parts[k])
                    log(f"speed {v:.2f} m/s: progress {r.mean_progress:.3f} m, "
                        f"success {sum(r.success)}/{trials}, fell {sum(r.terminated)}/{trials}")
        finally:
            env.close()
    results = [merge_speed_results(p) for p in parts]
    settings = {"trials": trials, "seed": seed, "randomize": randomize, "time_factor": time_factor,
                "max_steps": max_steps, "reset_steps": reset_steps, "walk_start_history": walk_start_history,
                "speeds": [float(v) for v in speeds]}
    return ProtocolResult(course.name, course.length, results, settings)
