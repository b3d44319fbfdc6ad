"""Pretraining data for ``gym:ID`` tasks: any expert, its sub-optimal ladder, the paper's perturbation windows."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from simdist.data.parts import run_in_parts_or_once

logger = logging.getLogger(__name__)


def load_experts(spec: Any) -> tuple[Any, list[Any], Any]:
    """``(expert, sub-optimal policies, critic or None)`` from an expert-set folder (``simdist train-expert
    --export``), or any single policy (:func:`simdist.experts.policy_from`: a callable, a ``.safetensors`` or
    TorchScript file, ``module:attr``), whose set has no ladder and no critic."""
    from simdist.components.tasks.gym.env import OBS_KEY
    from simdist.errors import InputError
    from simdist.experts import MANIFEST, load_expert_set, policy_from

    if isinstance(spec, (str, Path)) and (Path(spec).expanduser() / MANIFEST).is_file():
        s = load_expert_set(Path(spec).expanduser())
        return s.expert, list(s.suboptimal), s.critic
    try:
        return policy_from(spec, OBS_KEY), [], None
    except ValueError as err:
        raise InputError(f"--experts: {err}") from err


def generate_gym_dataset(task: Any, out_dir: str, *, experts: Any, num_envs: int = 8, transitions: int = 20_000,
                         seed: int = 0, expert_prob: float = 0.5, progress: bool = False, parts: int | None = None,
                         rank: int = 0, world: int = 1, expert_only: bool = False, perturbation: Any = None,
                         gamma: float = 0.99) -> dict:
    """Roll ``task``'s training simulator with the expert / sub-optimal mixture into shards (resumable).

    Without a sub-optimal ladder (a single policy) every episode is the expert's and diversity comes from the
    perturbation alone. Values: the set's critic on the post-step observation, 0 where the step terminated
    (bootstrapped on truncations only); without a critic, the Monte-Carlo return-to-go."""
    from simdist.data.engine import PerturbationConfig, generate

    expert, suboptimal, critic = load_experts(experts)
    if not suboptimal:
        expert_prob = 1.0
    perturbation = perturbation or PerturbationConfig.manipulation()
    metadata = {"task": task.task_name, "variant": "sim", "values": "critic" if critic is not None else "mc",
                "experts": str(experts)}

    def run(folder: Path, budget: int, s: int, first_id: int) -> dict:
        env = task.make_env(num_envs, s, real=False)
        try:
            return generate(env, expert, suboptimal, out_dir=str(folder), total_transitions=budget,
                            expert_prob=expert_prob, perturbation=perturbation, value_fn=critic, gamma=gamma, seed=s,
                            progress=progress, metadata=metadata, first_episode_id=first_id, expert_only=expert_only,
                            absorbing_terminations=True)
        finally:
            env.close()

    config = {**metadata, "num_envs": num_envs, "transitions": transitions, "seed": seed, "expert_prob": expert_prob,
              "expert_only": expert_only}
    return run_in_parts_or_once(out_dir, run, parts=parts, transitions=transitions, seed=seed, num_envs=num_envs,
                                config=config, rank=rank, world=world, metadata=metadata, log=logger.info)
