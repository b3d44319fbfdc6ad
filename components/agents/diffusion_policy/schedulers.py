"""Noise schedulers from ``diffusers`` (what the official Diffusion Policy uses), imported on first use so that
importing simdist stays fast; ``diffusers`` comes with the ``baselines`` extra."""

from __future__ import annotations

from typing import Any

from simdist.components.agents.diffusion_policy.configuration import DiffusionPolicyConfig

__all__ = ["inference_scheduler", "training_scheduler"]


def _diffusers() -> Any:
    try:
        import diffusers
    except ImportError as err:  # an optional dependency
        raise ImportError("the diffusion_policy agent needs diffusers' schedulers: pip install 'simdist[baselines]'"
                          ) from err
    return diffusers


def _common(config: DiffusionPolicyConfig) -> dict[str, Any]:
    return {"num_train_timesteps": config.num_train_timesteps, "beta_schedule": config.beta_schedule,
            "clip_sample": config.clip_sample, "prediction_type": "epsilon"}


def training_scheduler(config: DiffusionPolicyConfig) -> Any:
    """The DDPM scheduler that noises training chunks (K steps, cosine betas, ε-prediction, clipped x̂₀)."""
    return _diffusers().DDPMScheduler(**_common(config), variance_type="fixed_small")


def inference_scheduler(config: DiffusionPolicyConfig) -> Any:
    """The sampler of ``config.sampler`` with the training schedule: DDIM (deterministic, η = 0, the official
    real-robot setting) or DDPM (ancestral), with ``config.inference_steps`` set."""
    if config.sampler == "ddim":
        scheduler = _diffusers().DDIMScheduler(**_common(config), set_alpha_to_one=True, steps_offset=0)
    else:
        scheduler = training_scheduler(config)
    scheduler.set_timesteps(config.inference_steps)
    return scheduler
