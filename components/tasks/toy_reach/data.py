"""The toy-reach pretraining dataset: the scripted expert / sub-optimal mixture with perturbation windows."""

from __future__ import annotations


def generate_toy_dataset(out_dir: str, *, variant: str = "sim", num_envs: int = 16, transitions: int = 20_000,
                         seed: int = 0, expert_prob: float = 0.5, progress: bool = False,
                         values: str = "critic", critic_epochs: int = 60) -> dict:
    """Roll ``toy-reach`` with the PD expert / sub-optimal mixture and toy-sized perturbation into shards.

    Noise σ is drawn from U[0.05, 1.0] (actions live in [-1, 1]); the windows are the paper's
    manipulation ones (noised U[1, 5], clean U[5, 10] steps), suited to a 10 Hz task: about a third of
    the steps are perturbed, which gives the planner's sampled sequences coverage.
    ``values="critic"`` labels values with the fitted expert critic V^expert(s_{i+1}) (as SimDist labels
    them with the PPO expert's critic); ``"mc"`` uses the recorded episode's Monte-Carlo return instead.
    Returns the engine's summary (see :func:`simdist.data.engine.generate`).
    """
    from simdist.components.tasks.toy_reach.critic import fit_expert_critic
    from simdist.components.tasks.toy_reach.expert import expert_policy, suboptimal_policies
    from simdist.components.tasks.toy_reach.pointmass import ToyReachEnv
    from simdist.data.engine import PerturbationConfig, generate

    if values not in ("critic", "mc"):
        raise ValueError(f"values must be 'critic' or 'mc', got {values!r}")
    value_fn = fit_expert_critic(seed=seed, epochs=critic_epochs) if values == "critic" else None
    perturbation = PerturbationConfig.manipulation()
    env = ToyReachEnv(num_envs, variant=variant, seed=seed)
    try:
        return generate(
            env, expert_policy(), suboptimal_policies(seed), out_dir=out_dir, total_transitions=transitions,
            expert_prob=expert_prob, perturbation=perturbation,
            value_fn=value_fn, seed=seed, progress=progress,
            metadata={"task": "toy-reach", "variant": variant, "values": values},
        )
    finally:
        env.close()
