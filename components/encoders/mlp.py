"""``encoder/mlp``: proprioception MLP with interleaved history tokens."""

from __future__ import annotations

import math
from collections.abc import Sequence

from torch import Tensor

from simdist.model.nn import mlp
from simdist.registry import register

from .history import InterleavedHistoryEncoder, flat_concat


@register("encoder", "mlp")
class ProprioMLPEncoder(InterleavedHistoryEncoder):
    """z = MLP(concat of the flattened groups ``keys``); the same MLP makes the history tokens."""

    latent_obs_tokens = True

    def __init__(
        self,
        obs_spec: dict[str, Sequence[int]],
        action_dim: int,
        latent_dim: int = 64,
        history: int = 25,
        keys: Sequence[str] | None = None,
        hidden: Sequence[int] = (128, 128),
    ) -> None:
        super().__init__(latent_dim, action_dim, history)
        self.shapes = {k: list(v) for k, v in obs_spec.items()}
        self.keys = list(keys) if keys is not None else list(obs_spec)
        in_dim = sum(math.prod(self.shapes[k]) for k in self.keys)
        self.net = mlp(in_dim, hidden, latent_dim)

    def encode_latent(self, obs: dict[str, Tensor]) -> Tensor:
        return self.net(flat_concat(obs, self.keys, self.shapes))

    def obs_tokens(self, obs_hist: dict[str, Tensor]) -> Tensor:
        return self.encode_latent(obs_hist)
