"""The ``go2`` task: a Unitree Go2 walking straight on a proxy-real course (PTFE slope, foam), metric the
protocol's forward progress (m).

Evaluation runs the straight-walk protocol (:mod:`.protocol`) on the reality profile's course, or on a
plain terrain of the training simulator (``terrain``) when there is no profile. Data collection for
adaptation walks the course straight at ``collect_speed``, a speed or a (low, high) range drawn per
episode (default: the protocol's speed range), after the protocol's 25 standing steps, until the course
end, a fall or the time limit; a logged episode succeeds if it reached the course end or did not fall.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from simdist.capabilities import DataGeneration, EvaluationProtocol, ExpertTrainer, StateCloning
from simdist.data.schema import DatasetSpec
from simdist.evaluation import EvaluationResult
from simdist.registry import register
from simdist.tasks import TaskError

if TYPE_CHECKING:
    from simdist.components.tasks.go2.walk_compare import WalkComparison

#: Gaussian input noise of the official Go2 recipe (SIMDIST.md 3.6), in raw units, per dimension group.
GO2_OBS_NOISE: dict[str, list[float]] = {
    "proprio": [0.05] * 3 + [0.1] * 3 + [0.025] * 3 + [0.01] * 12 + [0.75] * 12 + [0.001] * 2,
    "extero": [0.02],
}


def parse_speed(text: str | float | Sequence[float]) -> float | tuple[float, float]:
    """``SPEED`` or ``LOW,HIGH`` (m/s); an already parsed speed or pair passes through the same checks."""
    try:
        if isinstance(text, str):
            values = [float(v) for v in text.split(",")]
        else:
            values = [float(text)] if isinstance(text, (int, float)) else [float(v) for v in text]
    except (TypeError, ValueError):
        values = []
    if len(values) not in (1, 2) or not all(np.isfinite(values)) or min(values) < 0:
        raise argparse.ArgumentTypeError(f"expected SPEED or LOW,HIGH (m/s, >= 0), got {text!r}")
    return values[0] if len(values) == 1 else (values[0], values[1])


#: the most protocol trials per speed that run in one batch (more: batches of ``--envs``)
ONE_BATCH_TRIALS = 256
#: bytes per env of a Go2 run: a Go2Env holds about 240 KiB per env (VmRSS growth over 288 envs), an evaluation
#: with a planning agent about 1 MiB (a 100-million-trial batch grew past 21 GB)
ENV_MEMORY = 1 << 20


@register("task", "go2")
@dataclass
class Go2Task(EvaluationProtocol, StateCloning, DataGeneration, ExpertTrainer):
    """A Go2 reality profile (a built-in name, a YAML path or a ``RealityProfile``, parsed once into the latter;
    None: the training simulator on ``terrain``)."""

    profile: Any = "ptfe-slope-3deg"
    speeds: tuple[float, ...] | None = None
    collect_speed: float | tuple[float, float] | None = None
    max_steps: int | None = None
    episode_length_s: float = 20.0
    terrain: str | None = None
    course_length: float | None = None
    difficulty: float = 0.4
    randomize: bool = False
    time_factor: float = 2.0
    reset_steps: int | None = None
    walk_start_history: str = "keep"
    #: Table I's quadruped metric instead of the protocol: accumulated reward over a speed × friction × terrain ×
    #: difficulty grid (:mod:`.reward_grid`)
    reward_grid: Any = None

    metric: ClassVar[str] = "forward_progress"
    dt: ClassVar[float] = 0.02
    obs_noise: ClassVar[dict[str, list[float]] | None] = GO2_OBS_NOISE
    default: ClassVar[bool] = True
    demo_hook: ClassVar[str | None] = "simdist.components.tasks.go2.demo:Go2Demo"
    expert_description: ClassVar[str] = "train (or resume) the Go2 PPO expert and export the expert set"
    profile_module: ClassVar[str | None] = "simdist.components.tasks.go2.profiles"
    preset: ClassVar[str | None] = "go2"
    pretrain_batch: ClassVar[int | None] = 128  # recipes/go2/base.yaml
    #: memory per env (MuJoCo data, terrain queries, DR buffers, bookkeeping, the planner's buffers)
    env_memory: ClassVar[int] = ENV_MEMORY
    data_defaults: ClassVar[dict[str, Any]] = {
        "presets": {"cpu": {"num_envs": 256, "transitions": 5_000_000},
                    "paper": {"num_envs": 4096, "transitions": 4096 * 25_000}},
        "experts": "go2",
    }

    def __post_init__(self) -> None:
        from simdist.components.tasks.go2.profiles import load_profile

        if self.terrain is not None:
            self.profile = None
        if self.profile is not None:  # parsed once; the profile object travels to the envs and the course
            self.profile = load_profile(self.profile)
            default_speeds: Sequence[float] = self.profile.eval_speeds
        else:
            default_speeds = (0.1, 0.3, 0.5)
        self.speeds = tuple(float(v) for v in (self.speeds or default_speeds))
        if not self.speeds or min(self.speeds) <= 0:
            raise TaskError(f"go2 speeds must be positive, got {self.speeds!r}")
        if self.collect_speed is None:
            low, high = min(self.speeds), max(self.speeds)
            self.collect_speed = low if low == high else (low, high)
        elif not isinstance(self.collect_speed, (int, float)):
            low, high = (float(v) for v in self.collect_speed)
            if not 0.0 <= low <= high:
                raise TaskError(f"collect_speed range must be 0 <= low <= high, got {self.collect_speed!r}")
            self.collect_speed = (low, high)

    # -- envs and data -------------------------------------------------------------------------
    def dataset_spec(self) -> DatasetSpec:
        from simdist.components.tasks.go2.data import go2_dataset_spec

        return go2_dataset_spec()  # the pretraining schema: proprio + extero, the command as commands

    def make_env(self, num_envs: int, seed: int, real: bool = True) -> Any:
        from simdist.components.tasks.go2.env import Go2Env
        from simdist.components.tasks.go2.protocol import RESET_STEPS

        speed = self.collect_speed if isinstance(self.collect_speed, tuple) else float(self.collect_speed or 0.3)
        # every logged episode starts and ends as the protocol's trials do: 25 steps standing, then the walk
        # until the course end (success; the simulator without a profile has no course), a fall or the time limit
        profile = self.profile if real else None
        return Go2Env(num_envs, profile=profile, command_mode="straight", straight_speed=speed, randomize=False,
                      episode_length_s=self.episode_length_s, seed=seed, walk_start_prob=1.0,
                      walk_start_hold=(RESET_STEPS, RESET_STEPS + 1), end_at_course_end=profile is not None)

    def course(self, seed: int = 0) -> Any:
        from simdist.components.tasks.go2.protocol import make_course

        return make_course(profile=self.profile, terrain=self.terrain, course_length=self.course_length,
                           difficulty=self.difficulty, seed=seed)

    @property
    def standing_steps(self) -> int:
        """The steps of zero action and command before each protocol trial walks (the official reset phase)."""
        from simdist.components.tasks.go2.protocol import RESET_STEPS

        return RESET_STEPS if self.reset_steps is None else self.reset_steps

    # -- evaluation ----------------------------------------------------------------------------
    def evaluation_batch(self, trials: int, num_envs: int) -> int:
        """Up to :data:`ONE_BATCH_TRIALS` trials run in one batch per speed (what every recorded result ran), more
        in batches of ``num_envs``."""
        return trials if trials <= ONE_BATCH_TRIALS else min(trials, num_envs)

    def evaluate(self, agent: Any, trials: int, seed: int, num_envs: int = 8, log: Any = None) -> EvaluationResult:
        """The straight-walk protocol: ``trials`` per speed, one batch per speed up to :data:`ONE_BATCH_TRIALS`
        trials, else batches of ``num_envs`` (:meth:`evaluation_batch`); with ``reward_grid``, Table I's
        accumulated reward, one episode per grid cell (``trials`` is unused)."""
        from simdist.components.tasks.go2.protocol import run_protocol

        if self.reward_grid is not None:
            from simdist.components.tasks.go2.reward_grid import run_reward_grid

            return run_reward_grid(agent, self.reward_grid, seed=seed, task=self.task_name, log=log)

        result = run_protocol(agent, self.course(seed), speeds=self.speeds or (0.3,), trials=trials, seed=seed,
                              randomize=self.randomize, time_factor=self.time_factor, max_steps=self.max_steps,
                              reset_steps=self.standing_steps, walk_start_history=self.walk_start_history, log=log,
                              batch=self.evaluation_batch(trials, num_envs))
        return result.to_evaluation(self.task_name, self.profile_name)

    def compare_walk(self, world_model: Any, expert: Any, *, trials: int, walk_steps: int, driver: str = "expert",
                     speed: float = 0.5) -> WalkComparison:
        """The course's straight walk at ``speed`` with ``world_model``'s policy head and ``expert`` (a
        ``policy(obs)``, e.g. ``build_controller("expert:PATH")``) side by side, ``driver`` ("expert" or "head")
        acting: their actions compared over ``walk_steps`` walking steps of ``trials`` trials (domain
        randomisation per trial if the task's ``randomize`` is set)."""
        from simdist.components.tasks.go2.walk_compare import compare_walk

        return compare_walk(self.course(), world_model, expert, trials=trials, walk_steps=walk_steps, driver=driver,
                            randomize=self.randomize, standing_steps=self.standing_steps, speed=speed)

    def success(self, result: Any) -> np.ndarray:
        """Reached the course end (the protocol's success), or walked the whole episode without falling."""
        end = self.profile.course_length - 1e-6 if self.profile is not None else np.inf
        reached = np.array([float(info.get("best_progress", 0.0)) >= end for info in result.final_info], bool)
        return (reached | ~np.asarray(result.terminated, bool)) & ~result.diverged

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "speeds": list(self.speeds or ()), "collect_speed": self.collect_speed,
                "max_steps": self.max_steps}

    # -- cloned states (the planner-ranking analysis, simdist.diagnostics.mechanism) -----------------------
    def snapshot_states(self, env: Any, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Copies of the full state of ``env``'s rows (:meth:`Go2Env.snapshot`: physics, per-env model fields,
        commands, gait clock via the episode step, actuation-delay queue, bookkeeping)."""
        return env.snapshot(rows)

    def true_returns(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                     progress: bool = False, parts: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """Σ_{k<T} γ^k r_k + γ^T V(s_T): the candidate open loop on this task's env (its profile) from a restored
        clone, bootstrapped with the critic of this task's PPO expert set (``data_defaults["experts"]``) on the
        privileged observation at s_T. That critic makes the Go2 data's value labels (``values[i] = V(s_{i+1})``
        on the post-step privileged observation, :mod:`.data`), so this is the quantity a world model's planner
        predicts; the expert is not rolled on (episodes are long: 20 s, 1000 steps). The critic was trained with
        PPO's γ = 0.99, so the bootstrap is consistent for ``gamma`` = 0.99 only. A fall within the T steps ends
        the return (no bootstrap), as in PPO's targets."""
        from simdist.components.tasks.go2.clone import critic_returns
        from simdist.experts import load_expert_set
        from simdist.rows import take_rows
        from simdist.zoo import resolve_experts

        critic = load_expert_set(resolve_experts(self.data_defaults["experts"])).critic
        return critic_returns(lambda n, s: self.make_env(n, s, real=True), critic,
                              take_rows(states, np.asarray(rows, np.int64)), np.asarray(actions, np.float32),
                              gamma=gamma, seed=seed, progress=progress, parts=parts)

    def restore_states(self, env: Any, states: Any, rows: np.ndarray) -> dict[str, np.ndarray]:
        """:meth:`Go2Env.restore`: the clones written into ``env``'s ``rows``; its observations."""
        return env.restore(states, rows)

    def true_return_parts(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                          progress: bool = False) -> dict[str, np.ndarray]:
        """:meth:`true_returns` split into its parts (``total`` = ``horizon`` + ``tail``; ``fell``, ``fall_step``
        and one ``reward/NAME`` per reward term: :func:`~simdist.components.tasks.go2.clone.critic_returns`)."""
        parts: dict[str, np.ndarray] = {}
        total = self.true_returns(states, rows, actions, gamma=gamma, seed=seed, progress=progress, parts=parts)
        return {"total": np.asarray(total, np.float64), **parts}

    # -- tools ---------------------------------------------------------------------------------
    def generate(self, out: str, *, experts: str | None, num_envs: int, transitions: int, seed: int,
                 progress: bool = True, preset: str = "custom", args: argparse.Namespace | None = None,
                 **options: Any) -> dict[str, Any]:
        from simdist.components.tasks.go2.data import generate_go2, parse_window
        from simdist.data.engine import TakeoverConfig
        from simdist.zoo import resolve_experts

        env_kwargs: dict[str, Any] = dict(options.pop("env_kwargs", {}))
        student = options.pop("student", None)
        takeover = options.pop("takeover", None)
        if args is not None:
            env_kwargs["walk_start_prob"] = args.walk_start_prob
            if args.episode_length_s:
                env_kwargs["episode_length_s"] = args.episode_length_s
            student = args.student
            takeover = TakeoverConfig(parse_window(args.student_window), parse_window(args.expert_window))
            options.setdefault("part_size", args.part_size)
        folder = resolve_experts(experts or self.data_defaults["experts"])
        return generate_go2(folder, out, num_envs=num_envs, transitions=transitions, seed=seed, preset=preset,
                            progress=progress, env_kwargs=env_kwargs, student=student, takeover=takeover, **options)

    @classmethod
    def add_expert_arguments(cls, parser: argparse.ArgumentParser) -> None:
        from simdist.components.tasks.go2.train_expert import add_arguments

        add_arguments(parser)

    @classmethod
    def train_expert(cls, args: argparse.Namespace) -> int:
        from simdist.components.tasks.go2.train_expert import run

        return run(args)

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser, command: str) -> None:
        from simdist.arguments import nonnegative_int, positive_float, positive_int, unit_interval

        if command in ("adapt", "demo"):
            parser.add_argument("--collect-speed", type=parse_speed, default=None, metavar="SPEED|LOW,HIGH",
                                help="go2: straight-walk speed of the logged episodes, or a range drawn per episode "
                                     "(default: the protocol's speed range)")
        if command in ("evaluate", "adapt"):
            parser.add_argument("--max-steps", type=positive_int, default=None,
                                help="go2: cap on control steps per protocol trial (smoke tests)")
        if command == "evaluate":
            from simdist.components.tasks.go2.protocol import PLAIN_TERRAINS, WALK_START_HISTORY

            parser.add_argument("--terrain", choices=PLAIN_TERRAINS, default=None,
                                help="go2: a plain terrain of the training simulator instead of a profile")
            parser.add_argument("--course-length", type=positive_float, default=None, help="go2: progress cap (m)")
            parser.add_argument("--difficulty", type=unit_interval, default=0.4,
                                help="go2: rough/boxes difficulty in [0, 1] (data collection draws it uniformly)")
            parser.add_argument("--speeds", default=None,
                                help="go2: comma-separated speeds (m/s); default: the profile's eval_speeds, "
                                     "else 0.1,0.3,0.5")
            parser.add_argument("--randomize", action="store_true", help="go2: domain randomisation per trial")
            parser.add_argument("--time-factor", type=positive_float, default=2.0,
                                help="go2: time limit = factor x length / speed")
            parser.add_argument("--reset-steps", type=nonnegative_int, default=None,
                                help="go2: steps of zero action and command before walking (default: the "
                                     "official reset phase, 25)")
            parser.add_argument("--walk-start-history", default="keep", choices=WALK_START_HISTORY,
                                help="go2 world models: keep the history of the reset phase when walking starts "
                                     "(official), or refill it with copies of the current observation")
            parser.add_argument("--reward-grid", action="store_true",
                                help="go2: Table I's metric: the mean accumulated reward of one episode per cell "
                                     "of speed x friction x terrain type x difficulty (docs/table1.md)")
            parser.add_argument("--grid-speeds", default=None, help="go2 --reward-grid: commanded speeds (m/s)")
            parser.add_argument("--grid-frictions", default=None, help="go2 --reward-grid: foot frictions")
            parser.add_argument("--grid-terrains", default=None, help="go2 --reward-grid: terrain types")
            parser.add_argument("--grid-difficulties", default=None, help="go2 --reward-grid: difficulties in [0, 1]")
            parser.add_argument("--grid-steps", type=positive_int, default=None,
                                help="go2 --reward-grid: episode length in control steps (default 1000)")
        if command == "generate":
            from simdist.components.tasks.go2.data import PART_STEPS, WALK_START_PROB

            parser.add_argument("--part-size", type=nonnegative_int, default=None,
                                help=f"go2: transitions per part (default B x {PART_STEPS}; 0: one part)")
            parser.add_argument("--episode-length-s", type=positive_float, default=None,
                                help="go2: episode limit (default 20 s)")
            parser.add_argument("--walk-start-prob", type=unit_interval, default=WALK_START_PROB,
                                help="go2: fraction of episodes that stand still 10-40 steps first, then walk "
                                     "straight, as the evaluation does (0: the official data)")
            parser.add_argument("--student", default=None,
                                help="go2: world model (hub id or folder) whose policy head takes over "
                                     "expert-driven envs in windows (an extension)")
            parser.add_argument("--student-window", default="25,100", help="go2: student steps per takeover")
            parser.add_argument("--expert-window", default="50,200", help="go2: expert steps between takeovers")

    @classmethod
    def from_args(cls, args: argparse.Namespace, command: str, profile: Any = None) -> Go2Task:
        kwargs: dict[str, Any] = {}
        if profile is not None:
            kwargs["profile"] = profile
        for key in ("collect_speed", "max_steps", "terrain", "course_length", "difficulty", "randomize",
                    "time_factor", "reset_steps", "walk_start_history"):
            value = getattr(args, key, None)
            if value is not None:
                kwargs[key] = value
        speeds = getattr(args, "speeds", None)
        if speeds:
            try:
                kwargs["speeds"] = tuple(float(s) for s in speeds.split(",") if s.strip())
            except ValueError as err:
                raise TaskError(f"--speeds must be comma-separated numbers, got {speeds!r}") from err
        if getattr(args, "reward_grid", False):
            if profile is not None or kwargs.get("terrain") is not None:
                raise TaskError("--reward-grid builds its own terrains in the training simulator: drop --profile "
                                "and --terrain")
            kwargs["reward_grid"] = _reward_grid(args)
            kwargs["profile"] = None
        elif any(getattr(args, f"grid_{k}", None) is not None for k in GRID_OPTIONS):
            raise TaskError("--grid-* options apply with --reward-grid only")
        if command == "evaluate" and kwargs.get("profile") is None and kwargs.get("terrain") is None \
                and "reward_grid" not in kwargs:
            raise TaskError("go2 evaluate needs --profile P, --terrain T or --reward-grid")
        return cls(**kwargs)


#: the --grid-* options of ``simdist evaluate --task go2 --reward-grid``
GRID_OPTIONS: tuple[str, ...] = ("speeds", "frictions", "terrains", "difficulties", "steps")


def _reward_grid(args: argparse.Namespace) -> Any:
    """The :class:`RewardGrid` of the --grid-* options (defaults where absent); bad values name their option."""
    from simdist.components.tasks.go2.reward_grid import RewardGrid, parse_floats

    kwargs: dict[str, Any] = {}
    try:
        for key in ("speeds", "frictions", "difficulties"):
            text = getattr(args, f"grid_{key}", None)
            if text is not None:
                kwargs[key] = parse_floats(text, f"--grid-{key}")
        if getattr(args, "grid_terrains", None) is not None:
            kwargs["terrains"] = tuple(t.strip() for t in args.grid_terrains.split(",") if t.strip())
        if getattr(args, "grid_steps", None) is not None:
            kwargs["steps"] = args.grid_steps
        return RewardGrid(**kwargs)
    except ValueError as err:
        raise TaskError(f"--reward-grid: {err}") from err
