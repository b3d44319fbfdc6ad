"""The toy-reach pretraining dataset: the scripted expert / sub-optimal mixture with perturbation windows."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from simdist.data.parts import run_in_parts_or_once

logger = logging.getLogger(__name__)


def generate_toy_dataset(out_dir: str, *, variant: str = "sim", num_envs: int = 16, transitions: int = 20_000,
                         seed: int = 0, expert_prob: float = 0.5, progress: bool = False,
                         values: str = "critic", critic_epochs: int = 60, parts: int | None = None,
                         rank: int = 0, world: int = 1, expert_only: bool = False,
                         perturbation: Any = None) -> dict:
    """Roll ``toy-reach`` with the PD expert / sub-optimal mixture and toy-sized perturbation into shards.

    Noise σ is drawn from U[0.05, 1.0] (actions live in [-1, 1]); the windows are the paper's
    manipulation ones (noised U[1, 5], clean U[5, 10] steps), suited to a 10 Hz task: about a third of
    the steps are perturbed, which gives the planner's sampled sequences coverage.
    ``values="critic"`` labels values with the fitted expert critic V^expert(s_{i+1}) (as SimDist labels
    them with the PPO expert's critic); ``"mc"`` uses the recorded episode's Monte-Carlo return instead.
    Returns the engine's summary (see :func:`simdist.data.engine.generate`). ``parts`` splits the run into
    parts (a fresh env per part, seeded by the part), of which this worker (``rank`` of ``world``) runs its
    share (:func:`simdist.data.parts.run_parts`); the summary is then that of the parts finished so far.
    ``expert_only``: the expert alone, never perturbed (the paper's expert-only ablation data).
    ``perturbation``: a :class:`~simdist.data.engine.PerturbationConfig` in place of the windows above.
    """
    from simdist.components.tasks.toy_reach.critic import fit_expert_critic
    from simdist.components.tasks.toy_reach.expert import expert_policy, suboptimal_policies
    from simdist.components.tasks.toy_reach.pointmass import ToyReachEnv
    from simdist.data.engine import PerturbationConfig, generate

    if values not in ("critic", "mc"):
        raise ValueError(f"values must be 'critic' or 'mc', got {values!r}")
    value_fn = fit_expert_critic(seed=seed, epochs=critic_epochs) if values == "critic" else None
    perturbation = perturbation or PerturbationConfig.manipulation()
    metadata = {"task": "toy-reach", "variant": variant, "values": values}

    def run(folder: Path, budget: int, s: int, first_id: int) -> dict:
        env = ToyReachEnv(num_envs, variant=variant, seed=s)
        try:
            return generate(env, expert_policy(), suboptimal_policies(seed), out_dir=str(folder),
                            total_transitions=budget, expert_prob=expert_prob, perturbation=perturbation,
                            value_fn=value_fn, seed=s, progress=progress, metadata=metadata,
                            first_episode_id=first_id, expert_only=expert_only)
        finally:
            env.close()

    config = {**metadata, "num_envs": num_envs, "transitions": transitions, "seed": seed, "expert_prob": expert_prob,
              "critic_epochs": critic_epochs, "expert_only": expert_only}
    return run_in_parts_or_once(out_dir, run, parts=parts, transitions=transitions, seed=seed, num_envs=num_envs,
                                config=config, rank=rank, world=world, metadata=metadata, log=logger.info)
