"""``SGFTAgent``: SGFT-SAC (Yin, Westenbroek et al., 2025), the variant SimDist compares against.

A value function V_sim learned in simulation shapes the reward, r̃ = r + γ V_sim(s′) − V_sim(s), and the
horizon is cut to H = 1 (the real-robot SGFT-SAC runs, BASELINES.md 4.2): the critic's target is r̃ itself,
with no bootstrap through a learned critic, and the actor maximises Q − α log π. V_sim is option (b) of
BASELINES.md 4.3, a small MLP on the frozen features regressed on the simulation data's value labels
(``values[t]`` = V(s_{t+1}), so V_sim(f_{t+1}) is fitted to it) by :meth:`pretrain`, then frozen. SGFT-SAC's
own SAC settings are not public; RLPD's are used (ensemble, LayerNorm, symmetric sampling, ``utd``), as
BASELINES.md 4.2 recommends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

from simdist.components.agents.latent import LatentModel
from simdist.components.agents.latent.networks import ValueNetwork
from simdist.components.agents.latent.redq import REDQSACAgent
from simdist.registry import register

__all__ = ["SGFTAgent"]


@register("agent", "sgft")
class SGFTAgent(REDQSACAgent):
    """SGFT-SAC on frozen SimDist features; see the module docstring."""

    default_settings: ClassVar[dict[str, Any]] = {**REDQSACAgent.default_settings}

    @classmethod
    def build_parts(cls, model: LatentModel, settings: Mapping[str, Any]) -> dict[str, nn.Module]:
        return {**super().build_parts(model, settings), "v_sim": ValueNetwork(model.feature_dim, settings["hidden"])}

    @classmethod
    def backup_gamma(cls, settings: Mapping[str, Any]) -> float:
        return 0.0  # H = 1: the target is the shaped reward, nothing bootstrapped

    @property
    def v_sim(self) -> nn.Module:
        return self.model.parts["v_sim"]

    def optimizer_groups(self) -> dict[str, list[nn.Parameter]]:
        return {**super().optimizer_groups(), "v_sim": list(self.v_sim.parameters())}

    @torch.no_grad()
    def rewards(self, batch: Mapping[str, Tensor]) -> Tensor:
        """r + γ V_sim(f′) − V_sim(f), with V_sim(f′) = 0 on terminal steps."""
        v = self.v_sim(batch["features"]).squeeze(-1)
        v_next = self.v_sim(batch["next_features"]).squeeze(-1) * (~batch["terminal"]).float()
        return batch["rewards"] + self.settings["gamma"] * v_next - v

    def update(self, batch: Mapping[str, Tensor], optimizers: Mapping[str, torch.optim.Optimizer]) -> dict[str, float]:
        """Pretraining: one regression step of V_sim on the simulation value labels; online: SAC on the shaped
        rewards with V_sim frozen."""
        if self.phase != "pretraining":
            return super().update(batch, optimizers)
        pred = self.v_sim(batch["next_features"]).squeeze(-1)
        loss = ((pred - batch["values"]) ** 2).mean()
        optimizers["v_sim"].zero_grad(set_to_none=True)
        loss.backward()
        optimizers["v_sim"].step()
        return {"loss_v_sim": float(loss.detach())}
