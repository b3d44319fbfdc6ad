"""The ``gym:ID`` task family: any Gymnasium environment as a simdist task, built from its id on first use.

``make_task("gym:HalfCheetah-v5")`` and ``--task gym:HalfCheetah-v5`` (or ``--task gym:package.module:Class``, an
entry point) build a :class:`GymTask` subclass for that env, registered under that name, with a world-model preset
of the same name made from the env's spaces (:func:`gym_preset`: the ``mlp`` vector encoder; ``mlp`` dynamics, or
``transformer`` through ``preset_overrides``). Profiles: :mod:`.profiles` (``sim``, ``lag``, ``heavy``, or a YAML).
Metric: the episode return (the env's rewards, unscaled). Success: the episode ended without a termination.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from simdist.capabilities import DataGeneration, EvaluationProtocol, ExpertTrainer, StateCloning
from simdist.data.schema import DatasetSpec
from simdist.evaluation import EvaluationResult
from simdist.model.presets import preset
from simdist.registry import register_family
from simdist.tasks import Task

PREFIX = "gym"


@dataclass
class GymTask(EvaluationProtocol, StateCloning, DataGeneration, ExpertTrainer):
    """A Gymnasium env on one profile (None or ``sim``: the env as shipped). Subclasses set :attr:`env_id`.
    ``experts``: the expert set (``simdist train-expert --export``) whose actor and critic continue candidates in
    the plan-ranking analysis (:meth:`true_returns`)."""

    profile: Any = None
    experts: str | None = None

    env_id: ClassVar[str] = ""
    obs_dim: ClassVar[int] = 0
    action_dim: ClassVar[int] = 0
    metric: ClassVar[str] = "return"
    dt: ClassVar[float] = 0.05
    profile_module: ClassVar[str | None] = "simdist.components.tasks.gym.profiles"
    planner_defaults: ClassVar[dict[str, Any]] = {}
    data_defaults: ClassVar[dict[str, Any]] = {"presets": {"small": {"num_envs": 8, "transitions": 20_000},
                                                           "paper": {"num_envs": 32, "transitions": 1_000_000}}}
    pretrain_batch: ClassVar[int | None] = None

    def __post_init__(self) -> None:
        if self.profile is not None:
            self.profile = self.load_profile(self.profile)

    def make_env(self, num_envs: int, seed: int, real: bool = True) -> Any:
        from simdist.components.tasks.gym.env import GymBatchedEnv

        return GymBatchedEnv(self.env_id, num_envs, seed=seed, profile=self.profile if real else None)

    def dataset_spec(self) -> DatasetSpec:
        return DatasetSpec(obs={"state": (self.obs_dim,)}, action_dim=self.action_dim, command_dim=0, dt=self.dt)

    def evaluate(self, agent: Any, trials: int, seed: int, num_envs: int = 8, log: Any = None) -> EvaluationResult:
        from simdist.workflows.rollout import rollout

        env = self.make_env(min(num_envs, trials), seed)
        try:
            result = rollout(env, agent, episodes=trials, seed=seed)
        finally:
            env.close()
        return EvaluationResult(task=self.task_name, metric=self.metric, profile=self.profile_name,
                                values=result.returns.tolist(), success=(~result.terminated).tolist(),
                                details={"length": np.asarray(result.lengths).tolist()})

    def success(self, result: Any) -> np.ndarray:
        return ~np.asarray(result.terminated, bool)

    def builtin_agent(self, spec: str) -> Any | None:
        """``expert:PATH``: any expert (an expert-set folder, a ``.safetensors`` or TorchScript file, or
        ``module:attr``) as an agent on this task's observations; None otherwise."""
        kind, sep, target = spec.partition(":")
        if kind != "expert" or not sep:
            return None
        from simdist.components.tasks.gym.data import load_experts

        return load_experts(target)[0]

    def generate(self, out: str, *, experts: str | None, num_envs: int, transitions: int, seed: int,
                 progress: bool = True, **options: Any) -> dict[str, Any]:
        """The expert / sub-optimal mixture (``experts``: an expert-set folder of ``simdist train-expert``, or any
        policy: a ``.safetensors`` or TorchScript file, ``module:attr``) with the paper's perturbation windows,
        on the training simulator; values from the set's critic, 0 on terminations."""
        from simdist.components.tasks.gym.data import generate_gym_dataset

        if experts is None:
            from simdist.errors import InputError

            raise InputError(f"--experts: task {self.task_name!r} needs an expert (an expert-set folder from "
                             f"`simdist train-expert --task {self.task_name} --export DIR`, a TorchScript file, or "
                             "module:attr)")
        options.pop("args", None)
        options.pop("preset", None)
        return generate_gym_dataset(self, out, experts=experts, num_envs=num_envs, transitions=transitions,
                                    seed=seed, progress=progress, **options)

    # -- cloned states (the planner-ranking analysis, simdist.diagnostics.mechanism) -----------------------
    def snapshot_states(self, env: Any, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Copies of the MuJoCo states of ``env``'s rows, with the actions in flight and the time-limit counters."""
        from simdist.components.tasks.gym.clone import snapshot

        return snapshot(env, rows)

    def true_returns(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                     progress: bool = False) -> np.ndarray:
        """The candidates open loop on this task's profile from cloned states, then the expert of :attr:`experts`
        for 100 steps and its critic: Σ_{k<T} γ^k r_k + γ^T V^e(s_T) (:mod:`.clone`)."""
        from simdist.components.tasks.gym.clone import expert_continuation_returns
        from simdist.components.tasks.gym.data import load_experts
        from simdist.errors import InputError
        from simdist.rows import take_rows

        if self.experts is None:
            raise InputError(f"--expert-set: task {self.task_name!r} needs the expert set whose actor and critic "
                             "continue the candidates (`simdist train-expert --export DIR`)")
        expert, _, critic = load_experts(self.experts)
        if critic is None:
            raise InputError(f"--expert-set {self.experts}: not an expert set with a critic")
        return expert_continuation_returns(lambda n, s: self.make_env(n, s, real=True),
                                           take_rows(states, np.asarray(rows, np.int64)), actions, expert=expert,
                                           critic=critic, gamma=gamma, seed=seed)

    @classmethod
    def add_expert_arguments(cls, parser: argparse.ArgumentParser) -> None:
        from simdist.components.tasks.gym.train_expert import add_arguments

        add_arguments(parser)

    @classmethod
    def train_expert(cls, args: argparse.Namespace) -> int:
        from simdist.components.tasks.gym.train_expert import run

        return run(get_name(cls), args)

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser, command: str) -> None:
        if command == "evaluate":  # simdist mechanism builds its task as evaluate does
            parser.add_argument("--expert-set", default=None, metavar="DIR",
                                help="gym: the expert set whose actor and critic continue candidates in the "
                                     "plan-ranking analysis (simdist mechanism)")

    @classmethod
    def from_args(cls, args: argparse.Namespace, command: str, profile: Any = None) -> Task:
        return cls(profile=profile, experts=getattr(args, "expert_set", None))


def get_name(cls: type) -> str:
    from simdist.tasks import get_task_name

    return get_task_name(cls)


def gym_preset(spec: str, dynamics: str = "mlp") -> Any:
    """A world-model config from the env's spaces: observation group ``state`` of the env's size, its action size,
    no command, H = T = 8, the ``mlp`` encoder, ``dynamics`` (``mlp`` or ``transformer``) and transformer heads."""
    from simdist.components.tasks.gym.env import GymBatchedEnv
    from simdist.model.config import WorldModelConfig

    env = GymBatchedEnv(spec, 1, seed=0)
    try:
        obs_dim, action_dim, dt = env.obs_dim, env.action_dim, env.dt
    finally:
        env.close()
    one = {"num_layers": 1, "num_heads": 4}
    dyn = ({"name": "mlp", "kwargs": {"hidden": [256, 256]}} if dynamics == "mlp"
           else {"name": "transformer", "kwargs": {"num_layers": 2, "num_heads": 4}})
    return WorldModelConfig(
        obs_spec={"state": [obs_dim]}, action_dim=action_dim, command_dim=0, history=8, horizon=8, latent_dim=64,
        dt=dt, encoder={"name": "mlp"}, dynamics=dyn, reward_head={"name": "transformer", "kwargs": dict(one)},
        value_head={"name": "transformer", "kwargs": dict(one)},
        policy_head={"name": "transformer", "kwargs": dict(one)},
        action_low=[-1.0] * action_dim, action_high=[1.0] * action_dim, task=f"{PREFIX}:{spec}", robot=spec,
    )


@register_family("task", PREFIX)
def gym_task_class(spec: str) -> type[GymTask]:
    """any Gymnasium env as a task: an id (gym:HalfCheetah-v5) or an entry point (gym:package.module:Class)

    The task class of Gymnasium env ``spec``; registers presets ``gym:SPEC`` (``mlp`` dynamics) and
    ``gym:SPEC+transformer``. The env is made once here, so a bad id or space fails now."""
    from simdist.components.tasks.gym.env import GymBatchedEnv

    env = GymBatchedEnv(spec, 1, seed=0)  # refuses unknown ids and unsupported spaces, naming them
    try:
        dims = {"dt": env.dt, "obs_dim": env.obs_dim, "action_dim": env.action_dim}
    finally:
        env.close()
    name = f"{PREFIX}:{spec}"
    preset(name)(lambda: gym_preset(spec, "mlp"))
    preset(f"{name}+transformer")(lambda: gym_preset(spec, "transformer"))
    cls = type(f"GymTask_{spec}", (GymTask,), {"env_id": spec, **dims, "preset": name,
                                                "__doc__": f"Gymnasium env {spec} as a simdist task.",
                                                "expert_description": f"train (or resume) a PPO expert for {name} "
                                                                      "and export the expert set"})
    return dataclass(cls)
