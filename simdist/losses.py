"""SimDist's training objective (paper equation 2, SIMDIST.md section 3), in normalised units."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor, nn


class WorldModelLoss(nn.Module):
    """L = w_dyn·L_dyn + w_r·L_r + w_v·L_v + w_a·L_a; each term a mean of squared errors.

    L_dyn: predicted latents against stop-gradient targets E(o_{t+1..t+T}) from the same encoder.
    L_a: behaviour cloning masked to the leading run of expert steps (cumulative product of the expert
    flags), averaged over all elements as the official code does. Terms with weight 0 are skipped.
    """

    def __init__(self, dynamics: float = 1.0, reward: float = 1.0, value: float = 1.0, action: float = 4.0) -> None:
        super().__init__()
        self.weights = {"dynamics": dynamics, "reward": reward, "value": value, "action": action}

    @classmethod
    def dynamics_only(cls) -> WorldModelLoss:
        """Finetuning loss: latent consistency alone (no reward, value or action labels needed)."""
        return cls(1.0, 0.0, 0.0, 0.0)

    def forward(self, model: Any, batch: Mapping[str, Any], all_terms: bool = False) -> dict[str, Tensor]:
        """Loss terms and ``loss``; ``all_terms`` also evaluates zero-weight terms (for reporting)."""
        need = {k for k, w in self.weights.items() if w != 0 or all_terms}
        pred = model.predict(batch, heads=bool(need - {"dynamics"}))
        norm = model.normalizer
        terms: dict[str, Tensor] = {}
        if "dynamics" in need:
            terms["dynamics"] = (pred.latents - model.target_latents(batch["fut_obs"])).pow(2).mean()
        if "reward" in need:
            target = norm.normalize("rewards", batch["rewards"].unsqueeze(-1)).squeeze(-1)
            terms["reward"] = (pred.rewards - target).pow(2).mean()
        if "value" in need:
            target = norm.normalize("values", batch["values"].unsqueeze(-1)).squeeze(-1)
            terms["value"] = (pred.values - target).pow(2).mean()
        if "action" in need and pred.actions is not None:
            mask = torch.cumprod(batch["expert"].float(), dim=-1).unsqueeze(-1)
            target = norm.normalize("actions", batch["fut_acts"])
            terms["action"] = ((pred.actions - target) * mask).pow(2).mean()
        terms["loss"] = sum(self.weights[k] * v for k, v in terms.items() if self.weights[k] != 0)
        return terms
