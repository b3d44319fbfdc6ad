"""Reward and value heads over the latent trajectory: ``transformer`` (bidirectional, SIMDIST 2.6/2.7)
and ``mlp`` (per time step)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from simdist.model.interfaces import SequenceHead
from simdist.model.nn import SequenceEmbedding, TransformerEncoder, init_linear_, mlp
from simdist.registry import register


def reward_features(latents: Tensor, actions: Tensor, commands: Tensor) -> Tensor:
    """[z_{t+k}, a_{t+k}, c_{t+k}] for k = 0..T-1 (z_t first, then the first T-1 predictions)."""
    t = actions.shape[-2]
    return torch.cat([latents[..., :t, :], actions, commands[..., :t, :]], dim=-1)


def value_features(latents: Tensor, actions: Tensor, commands: Tensor) -> Tensor:
    """[ẑ_{t+1+k}, c_{t+1+k}] for k = 0..T-1."""
    return torch.cat([latents[..., 1:, :], commands[..., 1:, :]], dim=-1)


class TransformerSequenceHead(SequenceHead):
    """Linear embedding + positions, a bidirectional transformer encoder, Linear(D, 1)."""

    features = staticmethod(reward_features)

    def __init__(
        self, in_dim: int, latent_dim: int = 64, horizon: int = 25, num_layers: int = 1, num_heads: int = 4,
        mlp_factor: int = 4, attn_dropout: float = 0.05,
    ) -> None:
        super().__init__()
        self.embed = SequenceEmbedding(in_dim, latent_dim, horizon)
        self.encoder = TransformerEncoder(latent_dim, num_layers, num_heads, mlp_factor, attn_dropout)
        self.decoder = nn.Linear(latent_dim, 1)
        init_linear_(self.decoder)

    def forward(self, latents: Tensor, actions: Tensor, commands: Tensor) -> Tensor:
        x = self.embed(self.features(latents, actions, commands))
        return self.decoder(self.encoder(x)).squeeze(-1)

    def forward_last(self, latents: Tensor, actions: Tensor, commands: Tensor) -> Tensor:
        x = self.embed(self.features(latents, actions, commands))
        return self.decoder(self.encoder(x, last_only=True)).squeeze(-1)


class MLPSequenceHead(SequenceHead):
    """The same per-step features through an MLP, one time step at a time."""

    features = staticmethod(reward_features)

    def __init__(self, in_dim: int, hidden: Sequence[int] = (256, 256)) -> None:
        super().__init__()
        self.net = mlp(in_dim, hidden, 1)

    def forward(self, latents: Tensor, actions: Tensor, commands: Tensor) -> Tensor:
        return self.net(self.features(latents, actions, commands)).squeeze(-1)


@register("reward_head", "transformer")
class TransformerRewardHead(TransformerSequenceHead):
    def __init__(
        self, latent_dim: int, action_dim: int, command_dim: int = 0, horizon: int = 25, num_layers: int = 1,
        num_heads: int = 4, mlp_factor: int = 4, attn_dropout: float = 0.05,
    ) -> None:
        super().__init__(latent_dim + action_dim + command_dim, latent_dim, horizon, num_layers, num_heads,
                         mlp_factor, attn_dropout)


@register("value_head", "transformer")
class TransformerValueHead(TransformerSequenceHead):
    features = staticmethod(value_features)

    def __init__(
        self, latent_dim: int, command_dim: int = 0, horizon: int = 25, num_layers: int = 1, num_heads: int = 4,
        mlp_factor: int = 4, attn_dropout: float = 0.05,
    ) -> None:
        super().__init__(latent_dim + command_dim, latent_dim, horizon, num_layers, num_heads, mlp_factor,
                         attn_dropout)


@register("reward_head", "mlp")
class MLPRewardHead(MLPSequenceHead):
    def __init__(self, latent_dim: int, action_dim: int, command_dim: int = 0,
                 hidden: Sequence[int] = (256, 256)) -> None:
        super().__init__(latent_dim + action_dim + command_dim, hidden)


@register("value_head", "mlp")
class MLPValueHead(MLPSequenceHead):
    features = staticmethod(value_features)

    def __init__(self, latent_dim: int, command_dim: int = 0, hidden: Sequence[int] = (256, 256)) -> None:
        super().__init__(latent_dim + command_dim, hidden)
