"""Height-map CNN (SIMDIST.md 2.3) and the ``encoder/heightmap_cnn`` component."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from simdist.model.nn import GELU, init_linear_, mlp
from simdist.registry import register

from .history import InterleavedHistoryEncoder


def same_padding(size: int, kernel: int, stride: int) -> tuple[int, int]:
    """Flax/TensorFlow ``SAME`` padding (low, high) for one spatial axis."""
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def restore_height_map(flat: Tensor, grid: Sequence[int]) -> Tensor:
    """IsaacLab scan order → image: reshape to ``grid`` (rows, cols), flip both axes, transpose.

    ``flat`` (..., rows·cols) → (..., 1, cols, rows), i.e. (..., C, H, W) with H along the base's x.
    """
    rows, cols = grid
    img = flat.reshape(*flat.shape[:-1], rows, cols).flip(-1, -2).transpose(-1, -2)
    return img.unsqueeze(-3)


class HeightMapCNN(nn.Module):
    """Stride-2 ``SAME`` convs with GELU between, a learned 2-D positional encoding, then an MLP."""

    def __init__(
        self,
        grid: Sequence[int] = (15, 21),
        features: Sequence[int] = (8, 16, 32),
        kernel: int = 3,
        stride: int = 2,
        projection: Sequence[int] = (192, 128),
        latent_dim: int = 64,
    ) -> None:
        super().__init__()
        self.grid, self.kernel, self.stride = tuple(grid), kernel, stride
        chans = [1, *features]
        self.convs = nn.ModuleList(nn.Conv2d(a, b, kernel, stride) for a, b in zip(chans[:-1], chans[1:]))
        init_linear_(self.convs)
        h, w = grid[1], grid[0]  # the restored image is (cols, rows)
        self.pads: list[tuple[int, int, int, int]] = []
        for _ in features:
            ph, pw = same_padding(h, kernel, stride), same_padding(w, kernel, stride)
            self.pads.append((pw[0], pw[1], ph[0], ph[1]))
            h, w = math.ceil(h / stride), math.ceil(w / stride)
        self.out_hw = (h, w)
        self.pos_h = nn.Parameter(0.02 * torch.randn(h, features[-1]))
        self.pos_w = nn.Parameter(0.02 * torch.randn(w, features[-1]))
        self.act = GELU()
        self.proj = mlp(h * w * features[-1], projection, latent_dim)

    def forward(self, flat: Tensor) -> Tensor:
        lead = flat.shape[:-1]
        x = restore_height_map(flat.reshape(-1, flat.shape[-1]), self.grid)
        for i, (conv, pad) in enumerate(zip(self.convs, self.pads)):
            x = conv(F.pad(x, pad))
            if i < len(self.convs) - 1:
                x = self.act(x)
        x = x.permute(0, 2, 3, 1) + self.pos_h[:, None] + self.pos_w[None]  # (N, H, W, C) like Flax
        return self.proj(x.flatten(1)).reshape(*lead, -1)


@register("encoder", "heightmap_cnn")
class HeightMapEncoder(InterleavedHistoryEncoder):
    """z = CNN(current height map); history tokens are the past actions only (the paper feeds only the
    latest high-dimensional observation to the encoder)."""

    def __init__(
        self,
        action_dim: int,
        latent_dim: int = 64,
        history: int = 25,
        key: str = "extero",
        grid: Sequence[int] = (15, 21),
        features: Sequence[int] = (8, 16, 32),
        projection: Sequence[int] = (192, 128),
    ) -> None:
        super().__init__(latent_dim, action_dim, history)
        self.key = key
        self.cnn = HeightMapCNN(grid, features, projection=projection, latent_dim=latent_dim)

    def encode_latent(self, obs: dict[str, Tensor]) -> Tensor:
        return self.cnn(obs[self.key])

    def obs_tokens(self, obs_hist: dict[str, Tensor]) -> None:
        return None
