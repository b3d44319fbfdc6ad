"""``decoder_head/mlp``: the raw observation decoded from the per-step latent (Table I's reconstruction
ablation; SimDist itself trains no decoder)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from torch import Tensor, nn

from simdist.nn import mlp
from simdist.registry import register


@register("decoder_head", "mlp")
class MLPObservationDecoder(nn.Module):
    """z → every state group the model normalises, flattened and concatenated in ``obs_spec`` order.

    Groups the encoder reads raw (pixels, ``raw_obs_keys``) are not decoded by this head: a pixel decoder
    is a separate component."""

    def __init__(self, latent_dim: int, obs_spec: Mapping[str, Sequence[int]], hidden: Sequence[int] = (256, 256),
                 raw_obs_keys: Sequence[str] = ()) -> None:
        super().__init__()
        self.groups = [k for k in obs_spec if k not in set(raw_obs_keys)]
        if not self.groups:
            raise ValueError("decoder_head mlp: the model has no state groups to reconstruct")
        self.sizes = [math.prod(obs_spec[k]) for k in self.groups]
        self.net = mlp(latent_dim, hidden, sum(self.sizes))

    def forward(self, latents: Tensor) -> Tensor:
        """(..., D) → (..., Σ group sizes), normalised units."""
        return self.net(latents)
