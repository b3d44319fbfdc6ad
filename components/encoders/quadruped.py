"""``encoder/quadruped``: the official Go2 encoder (SIMDIST.md 2.3), 149,408 parameters at defaults."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from simdist.model.nn import mlp
from simdist.registry import register

from .heightmap import HeightMapCNN
from .history import InterleavedHistoryEncoder


@register("encoder", "quadruped")
class QuadrupedEncoder(InterleavedHistoryEncoder):
    """Proprio MLP (shared by history tokens and the current latent), height-map CNN, latent MLP.

    z_t = latent_mlp([proprio_proj(o_t), heightmap(h_t)]); the context interleaves
    proprio_proj(o_{t-H..t-1}) with act_proj(a_{t-H..t-1}) and ends with the z_t token: 2H + 1 tokens.
    """

    def __init__(
        self,
        obs_spec: dict[str, Sequence[int]],
        action_dim: int,
        latent_dim: int = 64,
        history: int = 25,
        proprio_key: str = "proprio",
        extero_key: str = "extero",
        grid: Sequence[int] = (15, 21),
        hidden_factor: int = 2,
        proprio_layers: int = 2,
        latent_layers: int = 2,
        features: Sequence[int] = (8, 16, 32),
        projection: Sequence[int] = (192, 128),
    ) -> None:
        super().__init__(latent_dim, action_dim, history)
        self.proprio_key, self.extero_key = proprio_key, extero_key
        width = hidden_factor * latent_dim
        (proprio_dim,) = obs_spec[proprio_key]
        (extero_dim,) = obs_spec[extero_key]
        if extero_dim != grid[0] * grid[1]:
            raise ValueError(f"{extero_key!r} has {extero_dim} values but the grid {tuple(grid)} needs "
                             f"{grid[0] * grid[1]}")
        self.proprio_proj = mlp(proprio_dim, [width] * proprio_layers, latent_dim)
        self.heightmap = HeightMapCNN(grid, features, projection=projection, latent_dim=latent_dim)
        self.latent_mlp = mlp(2 * latent_dim, [width] * latent_layers, latent_dim)

    def encode_latent(self, obs: dict[str, Tensor]) -> Tensor:
        proprio = self.proprio_proj(obs[self.proprio_key])
        return self.latent_mlp(torch.cat([proprio, self.heightmap(obs[self.extero_key])], dim=-1))

    def obs_tokens(self, obs_hist: dict[str, Tensor]) -> Tensor:
        return self.proprio_proj(obs_hist[self.proprio_key])
