"""The ``ur5e-peg`` and ``ur5e-table-leg`` tasks: pick, align, then insert (or thread) with a UR5e.

Evaluation runs the grid's fixed 20-cell lattice (``--grid narrow|wide``) ``trials`` times on the reality
profile; the metric is success (held 5 steps within the 45 s limit), with the time to success per
successful trial. Logged real episodes (adaptation) start uniformly over the same grid. ``--agent expert``
or ``--agent scripted:NAME`` evaluates the scripted expert or one of its degraded variants.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from simdist.capabilities import DataGeneration, EvaluationProtocol, StateCloning
from simdist.data.schema import DatasetSpec
from simdist.evaluation import EvaluationResult
from simdist.profiles import ProfileSchema
from simdist.registry import register
from simdist.tasks import TaskError

LATTICE_CELLS = 20

#: Training-input noise on the proprioception (SIMDIST.md 13 §2.2; raw units): joint angles 2 mrad, joint
#: speeds 0.02 rad/s, TCP position 0.5 mm, TCP rotation (6-D) 2e-3, gripper opening 0.5 %, last action 0.
UR5E_OBS_NOISE = {"proprio": [0.002] * 6 + [0.02] * 6 + [0.0005] * 3 + [0.002] * 6 + [0.005] + [0.0] * 7}


@dataclass
class UR5eTask(EvaluationProtocol, StateCloning, DataGeneration):
    """Shared by both UR5e tasks. ``profile``: a built-in name, a YAML path or a mapping (None: the training
    simulator); ``grid``: ``narrow`` or ``wide``; ``control_hz``: 5 (the paper) or 10; ``contacts``: the
    contact recipe (``noslip``, the calibrated physics; ``fast``: no no-slip iterations, a stiffer gripper and
    grippier pads; ``fast-stiff``: ``fast`` with stiff joint dry friction; :data:`~.robot.CONTACT_RECIPES`)."""

    profile: Any = None
    grid: str = "wide"
    control_hz: int = 5
    episode_seconds: float = 45.0
    contacts: str = "noslip"

    metric: ClassVar[str] = "success"
    scripted_experts: ClassVar[bool] = True
    obs_noise: ClassVar[dict[str, list[float]] | None] = UR5E_OBS_NOISE
    planner_preset: ClassVar[str] = "manipulation"
    clone_batch: ClassVar[int] = 64  # cloned states per env, as the continuations (:mod:`.value`) restore them
    #: the gripper (action 6, closed where > 0) planned as a held ±1 command that flips only when MPPI's weighted
    #: mean crosses 0.5 on the other side (``binary_mode="mean"``: the official weighted mean, which chatters)
    planner_defaults: ClassVar[dict[str, Any]] = {"binary_dims": [6], "binary_mode": "hysteresis", "hysteresis": 0.5}
    dt: ClassVar[float] = 0.2
    profile_folder: ClassVar[str] = ""
    #: ``cpu``: >= 10k trajectories (peg episodes averaged 132 steps: 1.2 M transitions gave 9,113);
    #: ``paper``: the paper's 100k
    data_defaults: ClassVar[dict[str, Any]] = {
        "presets": {"cpu": {"num_envs": 32, "transitions": 1_400_000},
                    "paper": {"num_envs": 64, "transitions": 13_500_000}},
    }

    def __post_init__(self) -> None:
        from simdist.components.tasks.ur5e.config import ArmEnvConfig

        ArmEnvConfig(control_hz=self.control_hz, episode_seconds=self.episode_seconds, grid=self.grid,
                     contacts=self.contacts)
        if self.profile is not None:  # parsed once (a bad profile is refused before any env is built); it travels
            self.profile = self.load_profile(self.profile)

    # ---- what differs between the two tasks ----
    def assembly(self) -> Any:
        raise NotImplementedError

    @classmethod
    def profile_schema(cls) -> ProfileSchema | None:
        raise NotImplementedError

    @classmethod
    def profile_dir(cls) -> Path | None:
        return Path(__file__).with_name("profiles") / cls.profile_folder

    @staticmethod
    def contact_recipes() -> tuple[str, ...]:
        """The names ``contacts`` takes (:data:`~.robot.CONTACT_RECIPES`; imported here, not at registration)."""
        from simdist.components.tasks.ur5e.robot import CONTACT_RECIPES

        return tuple(CONTACT_RECIPES)

    @staticmethod
    def stiction_creep(contacts: str, friction: float = 0.24, torque: float = 0.2, seconds: float = 1.0) -> float:
        """Radians a hinge of ``friction`` N m dry friction turns in ``seconds`` under ``torque``, with recipe
        ``contacts``'s solver options (:func:`~.robot.stiction_creep`)."""
        from simdist.components.tasks.ur5e.robot import stiction_creep

        return stiction_creep(contacts, friction, torque, seconds)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "grid": self.grid, "control_hz": self.control_hz, "contacts": self.contacts}

    # ---- envs ----
    def env_config(self, *, grid: str | None, lattice: bool = True, **kw: Any) -> Any:
        from simdist.components.tasks.ur5e.config import ArmEnvConfig

        return ArmEnvConfig(control_hz=self.control_hz, episode_seconds=self.episode_seconds, grid=grid,
                            lattice=lattice, contacts=self.contacts, **kw)

    def make_env(self, num_envs: int, seed: int, real: bool = True) -> Any:
        """Proxy-real (``real``): the profile, starts uniform over the grid; else the training simulator with its
        randomisation and diverse resets."""
        from simdist.components.tasks.ur5e.env import UR5eEnv

        if real:
            profile = self.profile
            return UR5eEnv(self.assembly(), num_envs, self.env_config(grid=self.grid, lattice=False),
                           profile=profile, seed=seed)
        return UR5eEnv(self.assembly(), num_envs, self.env_config(grid=None), seed=seed)

    def dataset_spec(self) -> DatasetSpec:
        env = self.make_env(1, 0, real=False)
        try:
            return DatasetSpec.from_env(env)
        finally:
            env.close()

    # ---- evaluation ----
    def evaluation_env(self, num_envs: int, seed: int, **options: Any) -> Any:
        """The env one evaluation pass runs on: ``num_envs`` arms on the profile (None: the training simulator),
        their starts the cells of the grid's lattice in order; ``options`` go to the env config (cameras)."""
        from simdist.components.tasks.ur5e.env import UR5eEnv

        return UR5eEnv(self.assembly(), num_envs, self.env_config(grid=self.grid, **options), profile=self.profile,
                       seed=seed)

    def evaluate(self, agent: Any, trials: int, seed: int, num_envs: int = 8, log: Any = None) -> EvaluationResult:
        """``trials`` passes over the grid's 20-cell lattice (20 x ``trials`` episodes)."""
        from simdist.components.tasks.ur5e.images import camera_settings
        from simdist.workflows.rollout import rollout

        cameras = camera_settings(agent)  # an image model's cameras and size; {} for state models and experts
        values: list[float] = []
        times: list[float | None] = []
        cells: list[int] = []
        diverged: list[bool] = []
        for rep in range(trials):
            env = self.evaluation_env(min(num_envs, LATTICE_CELLS), seed + rep, **cameras)
            try:
                result = rollout(env, agent, episodes=LATTICE_CELLS, seed=seed + rep)
            finally:
                env.close()
            ok = self.success(result)
            for info, success, length in zip(result.final_info, ok, result.lengths):
                values.append(float(success))
                times.append(float(length) / self.control_hz if success else None)
                cells.append(int(info.get("cell", -1)))
                diverged.append(bool(info.get("diverged", False)))
            if log is not None:
                log(f"{self.name} {self.grid}: pass {rep + 1}/{trials}: {int(ok.sum())}/{LATTICE_CELLS} succeeded")
        return EvaluationResult(task=self.task_name, metric=self.metric, profile=self.profile_name, values=values,
                                success=[v > 0 for v in values], diverged=diverged,
                                details={"grid": self.grid, "cell": cells, "time_to_success_s": times,
                                         "control_hz": self.control_hz})

    def evaluation_passes(self, trials: int, seed: int) -> list[tuple[int, int]] | None:
        """Pass ``r`` over the lattice is its own env and rollout, seeded ``seed + r``: one pass each."""
        return [(1, seed + rep) for rep in range(trials)]

    def success(self, result: Any) -> np.ndarray:
        return np.array([bool(info.get("success", False)) and not bool(info.get("diverged", False))
                         for info in result.final_info], bool)

    # ---- cloned states (the planner-ranking analysis) ----
    def snapshot_states(self, env: Any, rows: np.ndarray) -> Any:
        from simdist.components.tasks.ur5e.value import snapshot

        return snapshot(env, rows)

    def true_returns(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                     progress: bool = False) -> np.ndarray:
        """The candidates open loop on this task's profile from cloned states, then the scripted expert until
        the episode ends (success absorbing, as the critic's labels), on the same profile."""
        from simdist.components.tasks.ur5e.expert import make_expert
        from simdist.components.tasks.ur5e.value import continuation_returns
        from simdist.rows import take_rows

        def make_env(n: int, s: int) -> Any:
            return self.make_env(n, s, real=True)

        return continuation_returns(make_env, lambda: make_expert(self.assembly(), control_hz=self.control_hz),
                                    take_rows(states, np.asarray(rows, np.int64)), gamma=gamma, seed=seed,
                                    progress=progress, prefix=np.asarray(actions, np.float32))

    def restore_states(self, env: Any, states: Any, rows: np.ndarray) -> dict[str, np.ndarray]:
        """:func:`.value.restore`: the clones written into ``env``'s ``rows``; its observations."""
        from simdist.components.tasks.ur5e.value import restore

        restore(env, states, rows)
        return env.observations

    def builtin_agent(self, spec: str) -> Any | None:
        """``expert`` or ``scripted:NAME``: the scripted expert or a named variant (``scripted:retuned`` is
        retuned for this task's profile); None: not one of them."""
        from simdist.components.tasks.ur5e.expert import make_expert

        kind, _, name = spec.partition(":")
        if spec != "expert" and kind != "scripted":
            return None
        profile = self.profile
        return make_expert(self.assembly(), name or "expert", self.control_hz, profile=profile)

    def generate(self, out: str, *, experts: str | None, num_envs: int, transitions: int, seed: int,
                 progress: bool = True, preset: str = "custom", args: argparse.Namespace | None = None,
                 **options: Any) -> dict[str, Any]:
        """The scripted expert / degraded-variant mixture on the training simulator (``experts`` unused: the
        experts are scripted); values from the expert critic fitted on continuations (:mod:`.value`). With
        ``--images-from SRC`` (``args.images_from``): a copy of the state dataset ``SRC`` with camera images and
        joints instead, for the image world models (:func:`.images.add_images`; ``seed`` draws the visuals)."""
        from simdist.components.tasks.ur5e.data import generate_ur5e

        if experts is not None:
            raise TaskError(f"{self.task_name}: the experts are scripted; --experts does not apply")
        if args is not None and getattr(args, "images_from", None):
            return self._render_images(out, args, seed=seed, progress=progress)
        if args is not None:
            options.update({k: getattr(args, k) for k in ("critic_envs", "critic_steps", "critic_epochs", "values",
                                                          "value_horizon")
                            if getattr(args, k, None) is not None})
        return generate_ur5e(self, out, num_envs=num_envs, transitions=transitions, seed=seed, progress=progress,
                             preset=preset, **options)

    def _render_images(self, out: str, args: argparse.Namespace, *, seed: int, progress: bool) -> dict[str, Any]:
        from simdist.components.tasks.ur5e.images import add_images, parse_cameras

        return add_images(args.images_from, out, cameras=parse_cameras(args.cameras), size=args.image_size,
                          max_episodes=args.max_episodes, task=self.task_name, seed=seed,
                          randomization=None if args.no_randomize else "default", progress=progress)

    # ---- command line ----
    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser, command: str) -> None:
        if command in ("evaluate", "adapt", "generate", "demo"):
            parser.add_argument("--grid", choices=("narrow", "wide"), default="wide",
                                help="ur5e: initial-condition grid (a fixed 20-cell lattice when evaluating)")
            parser.add_argument("--control-hz", type=int, choices=(5, 10), default=5,
                                help="ur5e: control rate (the paper: 5 Hz, H = T = 5)")
            parser.add_argument("--contacts", choices=cls.contact_recipes(), default="noslip",
                                help="ur5e: contact recipe (noslip: 3 no-slip iterations, the calibrated physics; "
                                     "fast: none, a 8000 N/m gripper and pads at 5/3 of their friction; "
                                     "fast-stiff: fast with stiff joint dry friction)")
        if command == "generate":
            from simdist.arguments import int_range, positive_int

            for flag, default, what in (("--critic-envs", 32, "parallel envs of the expert critic's states"),
                                        ("--critic-steps", 300, "control steps those envs run (a state every 10)"),
                                        ("--critic-epochs", 200, "training epochs of the critic")):
                parser.add_argument(flag, type=positive_int, default=None, help=f"ur5e: {what} (default {default})")
            parser.add_argument("--values", choices=("critic", "continuation"), default=None,
                                help="ur5e: value labels: the fitted critic (default) or the expert's continuation "
                                     "from each state (docs/ur5e-simdist.md, the value-label gate)")
            parser.add_argument("--value-horizon", type=positive_int, default=None,
                                help="ur5e: with --values continuation, expert steps before the critic's bootstrap "
                                     "(default: to the episode's end)")
            parser.add_argument("--images-from", default=None, metavar="DIR",
                                help="ur5e: instead of generating, render camera images (and joints) into a copy of "
                                     "this state dataset, for the image world models (an interrupted run resumes)")
            parser.add_argument("--cameras", default="front,side,wrist",
                                help="ur5e: with --images-from, comma-separated of front, side, wrist")
            parser.add_argument("--image-size", type=int_range(8, 1024), default=64,
                                help="ur5e: with --images-from, the image side in pixels (the paper: 224)")
            parser.add_argument("--max-episodes", type=positive_int, default=None,
                                help="ur5e: with --images-from, render only the first N episodes")
            parser.add_argument("--no-randomize", action="store_true",
                                help="ur5e: with --images-from, nominal visuals (no per-episode randomisation)")

    @classmethod
    def from_args(cls, args: argparse.Namespace, command: str, profile: Any = None) -> UR5eTask:
        if command == "generate" and getattr(args, "images_from", None):
            from simdist.components.tasks.ur5e.images import check_request

            if getattr(args, "parts", None) is not None or getattr(args, "expert_only", False):
                raise TaskError("--images-from renders a copy of one dataset in one process: --parts and "
                                "--expert-only do not apply")
            check_request(args.images_from, args.out, args.cameras)  # before any work
        try:
            return cls(profile=profile, grid=getattr(args, "grid", "wide"),
                       control_hz=getattr(args, "control_hz", 5), contacts=getattr(args, "contacts", "noslip"))
        except ValueError as err:
            raise TaskError(str(err)) from err


@register("task", "ur5e-peg")
@dataclass
class PegTask(UR5eTask):
    """Peg insertion: a 16 mm square peg, 60 mm long, into a 30 mm deep hole (0.5 mm clearance per side)."""

    profile: Any = "peg-real"
    profile_folder: ClassVar[str] = "peg"
    preset: ClassVar[str | None] = "ur5e-peg"
    pretrain_batch: ClassVar[int | None] = 256  # recipes/ur5e-peg/base.yaml

    def assembly(self) -> Any:
        from simdist.components.tasks.ur5e.assembly import PegAssembly

        return PegAssembly()

    @classmethod
    def profile_schema(cls) -> ProfileSchema | None:
        from simdist.components.tasks.ur5e.profiles import PEG_SCHEMA

        return PEG_SCHEMA


@register("task", "ur5e-table-leg")
@dataclass
class TableLegTask(UR5eTask):
    """Table leg: a 30 mm square leg picked from a rack and threaded (2 turns) into a tabletop corner hole."""

    profile: Any = "table-leg-real"
    profile_folder: ClassVar[str] = "table-leg"
    preset: ClassVar[str | None] = "ur5e-table-leg"
    #: ``cpu``: >= 10k trajectories at up to 170 steps each (the leg expert needs about 100 from a lattice start)
    data_defaults: ClassVar[dict[str, Any]] = {
        "presets": {"cpu": {"num_envs": 32, "transitions": 1_700_000},
                    "paper": {"num_envs": 64, "transitions": 17_000_000}},
    }

    def assembly(self) -> Any:
        from simdist.components.tasks.ur5e.leg import LegAssembly

        return LegAssembly()

    @classmethod
    def profile_schema(cls) -> ProfileSchema | None:
        from simdist.components.tasks.ur5e.profiles import LEG_SCHEMA

        return LEG_SCHEMA
