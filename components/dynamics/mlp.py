"""``dynamics/mlp``: autoregressive latent MLP, z_{k+1} = f(z_k, a_k), stepped over the horizon."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from simdist.interfaces import Dynamics
from simdist.nn import mlp
from simdist.registry import register
from simdist.types import Encoding


@register("dynamics", "mlp")
class MLPDynamics(Dynamics):
    """Starts from the bare latent z_t and applies ``f`` T times; ``residual`` predicts z_{k+1} − z_k."""

    def __init__(
        self, latent_dim: int, action_dim: int, hidden: Sequence[int] = (256, 256), residual: bool = True,
    ) -> None:
        super().__init__()
        self.residual = residual
        self.net = mlp(latent_dim + action_dim, hidden, latent_dim)

    def prepare(self, encoding: Encoding) -> Encoding:
        return encoding

    def forward(self, prepared: Encoding, z0: Tensor, actions: Tensor) -> Tensor:
        lead = actions.shape[:-2]
        z = z0.reshape(z0.shape[0], *([1] * (len(lead) - 1)), z0.shape[-1]).expand(*lead, -1)
        out = []
        for k in range(actions.shape[-2]):
            step = self.net(torch.cat([z, actions[..., k, :]], dim=-1))
            z = z + step if self.residual else step
            out.append(z)
        return torch.stack(out, dim=-2)
