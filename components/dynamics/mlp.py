"""``dynamics/mlp``: autoregressive latent MLP, z_{k+1} = f(z_k, a_k[, a_{k-1}, …, a_{k-m}]), stepped over the
horizon."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from simdist.model.interfaces import Dynamics
from simdist.model.nn import mlp
from simdist.model.types import Encoding
from simdist.registry import register


@register("dynamics", "mlp")
class MLPDynamics(Dynamics):
    """Starts from the bare latent z_t and applies ``f`` T times; ``residual`` predicts z_{k+1} − z_k.

    ``action_context`` m > 0 also feeds each step the m actions before a_k (the encoding's past actions for the
    first steps, then the sequence's own), so that an actuation delay of up to m steps, which a Markov latent
    cannot carry, can be represented: the action chosen now may act only later. 0 (the default) is the plain
    z_{k+1} = f(z_k, a_k).
    """

    def __init__(
        self, latent_dim: int, action_dim: int, hidden: Sequence[int] = (256, 256), residual: bool = True,
        action_context: int = 0, history: int | None = None,
    ) -> None:
        super().__init__()
        if isinstance(action_context, bool) or not isinstance(action_context, int) or action_context < 0:
            raise ValueError(f"dynamics mlp: action_context must be an integer >= 0, got {action_context!r}")
        if history is not None and action_context > history:
            raise ValueError(f"dynamics mlp: action_context {action_context} exceeds the model's history {history}")
        self.residual = residual
        self.action_context = action_context
        self.net = mlp(latent_dim + action_dim * (1 + action_context), hidden, latent_dim)

    def prepare(self, encoding: Encoding) -> Encoding:
        return encoding

    def forward(self, prepared: Encoding, z0: Tensor, actions: Tensor) -> Tensor:
        lead = actions.shape[:-2]
        z = z0.reshape(z0.shape[0], *([1] * (len(lead) - 1)), z0.shape[-1]).expand(*lead, -1)
        m = self.action_context
        if m:
            past = prepared.actions
            if past is None:
                raise ValueError("dynamics mlp with action_context needs an encoder that passes on the past actions")
            past = past[:, -m:].reshape(past.shape[0], *([1] * (len(lead) - 1)), m, past.shape[-1])
            actions = torch.cat([past.expand(*lead, m, -1), actions], dim=-2)
        out = []
        for k in range(actions.shape[-2] - m):
            window = actions[..., k : k + m + 1, :].flip(-2).flatten(-2)  # a_k, a_{k-1}, …, a_{k-m}
            step = self.net(torch.cat([z, window], dim=-1))
            z = z + step if self.residual else step
            out.append(z)
        return torch.stack(out, dim=-2)
