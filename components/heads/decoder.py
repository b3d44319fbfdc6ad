"""``decoder_head/mlp``: the raw observation decoded from the per-step latent (Table I's reconstruction
ablation; SimDist itself trains no decoder)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import torch
from torch import Tensor, nn

from simdist.model.nn import mlp
from simdist.registry import register


@register("decoder_head", "mlp")
class MLPObservationDecoder(nn.Module):
    """z → every state group the model normalises, flattened and concatenated in ``obs_spec`` order.

    Groups the encoder reads raw (pixels, ``raw_obs_keys``) are not decoded by this head: ``decoder_head/pixels``
    decodes them."""

    def __init__(self, latent_dim: int, obs_spec: Mapping[str, Sequence[int]], hidden: Sequence[int] = (256, 256),
                 raw_obs_keys: Sequence[str] = ()) -> None:
        super().__init__()
        self.groups = [k for k in obs_spec if k not in set(raw_obs_keys)]
        if not self.groups and raw_obs_keys:
            raise ValueError(
                f"decoder_head mlp decodes state groups only, and this model has none: its groups "
                f"{sorted(raw_obs_keys)} are pixels the encoder reads raw. Use decoder_head: {{name: pixels}} "
                "(recipes/table1/reconstruction-image.yaml)")
        if not self.groups:
            raise ValueError("decoder_head mlp: the model has no state groups to reconstruct")
        self.sizes = [math.prod(obs_spec[k]) for k in self.groups]
        self.net = mlp(latent_dim, hidden, sum(self.sizes))

    def forward(self, latents: Tensor) -> Tensor:
        """(..., D) → (..., Σ group sizes), normalised units."""
        return self.net(latents)

    def reconstruction_error(self, latents: Tensor, obs: Mapping[str, Tensor],
                             pixels: Callable[[str, Tensor], Tensor] | None = None) -> Tensor:
        """Mean squared error over every element of the concatenated groups of ``obs`` (normalised, each
        (..., *shape)) against their decoding from ``latents`` (..., D) = E(``obs``); ``pixels`` is unused."""
        target = torch.cat([obs[k].flatten(start_dim=latents.dim() - 1) for k in self.groups], dim=-1)
        return (self(latents) - target).pow(2).mean()
