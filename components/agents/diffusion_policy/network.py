"""The noise-prediction network of Diffusion Policy: a FiLM-conditioned 1-D temporal convolutional U-Net.

The layout follows the CNN-based Diffusion Policy (Chi et al., BASELINES.md 5.2): residual blocks of two
Conv1d (kernel 5) → GroupNorm(8) → Mish blocks, the second modulated by a per-channel FiLM scale and bias
predicted from [sinusoidal diffusion-step embedding, global condition]; ``len(down_dims)`` resolution levels
with two residual blocks each, stride-2 down- and up-sampling and skip connections; two residual blocks in the
middle. As in the official network, the up path has one level fewer than the down path and the skip of the
finest level is not read.

It is written here rather than imported: no pinned, maintained library ships it in a form that fits (LeRobot's
port requires Python >= 3.12 and torch < 2.12, and the official repository is not a package).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn

__all__ = ["ConditionalUnet1D", "FiLMResidualBlock", "sinusoidal_embedding"]


def sinusoidal_embedding(steps: Tensor, dim: int) -> Tensor:
    """Transformer-style embedding (N, dim) of the diffusion steps ``steps`` (N,): sines then cosines of
    geometrically spaced frequencies from 1 down to 1/10000."""
    half = dim // 2
    freqs = torch.exp(torch.arange(half, device=steps.device, dtype=torch.float32) * (-math.log(10000.0) / (half - 1)))
    angles = steps.float()[:, None] * freqs[None, :]
    return torch.cat([angles.sin(), angles.cos()], dim=-1)


def _conv_block(c_in: int, c_out: int, kernel: int, groups: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv1d(c_in, c_out, kernel, padding=kernel // 2), nn.GroupNorm(groups, c_out), nn.Mish())


class FiLMResidualBlock(nn.Module):
    """Two conv blocks; the output of the first is scaled and shifted per channel by a function of the condition;
    a 1×1 convolution matches the residual's channels when they change."""

    def __init__(self, c_in: int, c_out: int, cond_dim: int, kernel: int, groups: int) -> None:
        super().__init__()
        self.first = _conv_block(c_in, c_out, kernel, groups)
        self.second = _conv_block(c_out, c_out, kernel, groups)
        self.film = nn.Sequential(nn.Mish(), nn.Linear(cond_dim, 2 * c_out))
        self.residual = nn.Conv1d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x: Tensor, cond: Tensor) -> Tensor:
        """``x`` (B, c_in, T), ``cond`` (B, cond_dim) → (B, c_out, T)."""
        scale, bias = self.film(cond).unsqueeze(-1).chunk(2, dim=1)
        h = self.first(x) * scale + bias
        return self.second(h) + self.residual(x)


class _Level(nn.Module):
    """Two residual blocks and a resampling (or none) of one U-Net level."""

    def __init__(self, c_in: int, c_out: int, cond_dim: int, kernel: int, groups: int, resample: nn.Module) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([FiLMResidualBlock(c_in, c_out, cond_dim, kernel, groups),
                                     FiLMResidualBlock(c_out, c_out, cond_dim, kernel, groups)])
        self.resample = resample

    def run(self, x: Tensor, cond: Tensor) -> Tensor:
        for block in self.blocks:
            x = block(x, cond)
        return x


class ConditionalUnet1D(nn.Module):
    """ε_θ(A^k, k, c): predicts the noise (B, T, action_dim) in a noisy action chunk ``sample`` (B, T, action_dim)
    at diffusion steps ``steps`` (B,) given the global condition ``cond`` (B, cond_dim).

    ``T`` must be divisible by ``2 ** (len(down_dims) - 1)``.
    """

    def __init__(self, action_dim: int, cond_dim: int, down_dims: Sequence[int] = (64, 128, 256), kernel_size: int = 5,
                 n_groups: int = 8, step_embed_dim: int = 256) -> None:
        super().__init__()
        dims = [int(action_dim), *(int(d) for d in down_dims)]
        self.step_embed_dim = int(step_embed_dim)
        self.step_encoder = nn.Sequential(nn.Linear(step_embed_dim, 4 * step_embed_dim), nn.Mish(),
                                          nn.Linear(4 * step_embed_dim, step_embed_dim))
        film_dim = step_embed_dim + int(cond_dim)
        k, g, n = kernel_size, n_groups, len(down_dims)
        self.down = nn.ModuleList([
            _Level(dims[i], dims[i + 1], film_dim, k, g,
                   nn.Conv1d(dims[i + 1], dims[i + 1], 3, stride=2, padding=1) if i < n - 1 else nn.Identity())
            for i in range(n)])
        self.mid = nn.ModuleList([FiLMResidualBlock(dims[-1], dims[-1], film_dim, k, g) for _ in range(2)])
        # up level j reads the skip of down level n-1-j and returns to the channels of down level n-2-j
        self.up = nn.ModuleList([
            _Level(2 * dims[i + 1], dims[i], film_dim, k, g,
                   nn.ConvTranspose1d(dims[i], dims[i], 4, stride=2, padding=1))
            for i in reversed(range(1, n))])
        self.head = nn.Sequential(_conv_block(dims[1], dims[1], k, g), nn.Conv1d(dims[1], action_dim, 1))
        self.downsamplings = n - 1

    def forward(self, sample: Tensor, steps: Tensor, cond: Tensor) -> Tensor:
        if sample.shape[1] % (2 ** self.downsamplings):
            raise ValueError(f"chunk length {sample.shape[1]} is not divisible by {2 ** self.downsamplings}")
        steps = steps.reshape(-1).expand(sample.shape[0]) if steps.numel() == 1 else steps.reshape(-1)
        film = torch.cat([self.step_encoder(sinusoidal_embedding(steps.to(sample.device), self.step_embed_dim)), cond],
                         dim=-1)
        x = sample.transpose(1, 2)
        skips = []
        for level in self.down:
            x = level.run(x, film)
            skips.append(x)
            x = level.resample(x)
        for block in self.mid:
            x = block(x, film)
        for level in self.up:
            x = level.resample(level.run(torch.cat([x, skips.pop()], dim=1), film))
        return self.head(x).transpose(1, 2)
