"""``REDQSACAgent``: SAC with a REDQ-style critic ensemble (torchrl's ``REDQLoss``) on frozen SimDist features,
the body RLPD and SGFT-SAC share: ``num_critics`` LayerNorm critics whose TD target is the minimum over a random
subset of ``target_subset``, ``utd`` critic updates per actor and temperature update, MSE critic loss, target
entropy −|A|/2 and no α floor. The actor is the single-step BC policy's Gaussian head. Subclasses choose the
rewards (:meth:`rewards`) and the backup's discount (:meth:`backup_gamma`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

from simdist.components.agents.latent import LatentAgent, LatentModel
from simdist.components.agents.latent.bc_policy import BCPolicy
from simdist.components.agents.latent.networks import (
    QNetwork,
    network_params,
    torchrl_actor,
    torchrl_critic,
    transition_tensordict,
)
from simdist.model.config import ConfigError

__all__ = ["REDQSACAgent"]


class REDQSACAgent(LatentAgent):
    """SAC with a REDQ critic ensemble on frozen SimDist features; subclasses register it with their settings."""

    policy_class = BCPolicy
    default_settings: ClassVar[dict[str, Any]] = {
        "utd": 20,
        "num_critics": 10,
        "target_subset": 2,
        "layer_norm": True,
        "polyak": 0.005,
        "alpha_init": 1.0,
    }

    @classmethod
    def build_parts(cls, model: LatentModel, settings: Mapping[str, Any]) -> dict[str, nn.Module]:
        from torchrl.objectives import REDQLoss, ValueEstimators

        if settings["num_critics"] < 2 or not 1 <= settings["target_subset"] < settings["num_critics"]:
            raise ConfigError(f"{cls.agent_type}: need num_critics >= 2 and 1 <= target_subset < num_critics, got "
                             f"{settings['num_critics']}, {settings['target_subset']}")
        critic = QNetwork(model.feature_dim, model.action_dim, settings["hidden"], settings["layer_norm"])
        loss = REDQLoss(torchrl_actor(model.gaussian_head(), return_log_prob=True), torchrl_critic(critic),
                        num_qvalue_nets=settings["num_critics"], sub_sample_len=settings["target_subset"],
                        loss_function="l2", alpha_init=float(settings["alpha_init"]), min_alpha=1e-8,
                        max_alpha=1e8, target_entropy=-model.action_dim / 2.0)
        loss.make_value_estimator(ValueEstimators.TD0, gamma=cls.backup_gamma(settings))
        _ = loss.target_entropy  # registers its buffer now, so a fresh and a used loss have the same state keys
        return {"loss": loss}

    @classmethod
    def backup_gamma(cls, settings: Mapping[str, Any]) -> float:
        """The discount of the critic's TD target."""
        return float(settings["gamma"])

    def optimizer_groups(self) -> dict[str, list[nn.Parameter]]:
        return {**network_params(self.loss_module, "actor", "qvalue"), "alpha": [self.loss_module.log_alpha]}

    def rewards(self, batch: Mapping[str, Tensor]) -> Tensor:
        """The rewards the critic learns from (the batch's)."""
        return batch["rewards"]

    def update(self, batch: Mapping[str, Tensor], optimizers: Mapping[str, torch.optim.Optimizer]) -> dict[str, float]:
        """One critic step (and, every ``utd``-th update, one actor and temperature step), then Polyak."""
        out = self.loss_module(transition_tensordict(batch, self.rewards(batch)))
        policy_step = (self.counters["updates"] + 1) % self.settings["utd"] == 0
        names = ("qvalue", "actor", "alpha") if policy_step else ("qvalue",)
        total = out["loss_qvalue"] + (out["loss_actor"] + out["loss_alpha"] if policy_step else 0.0)
        for name in names:
            optimizers[name].zero_grad(set_to_none=True)
        total.backward()
        for name in names:
            optimizers[name].step()
        self.target_updater().step()
        return {"loss_qvalue": float(out["loss_qvalue"].detach()), "loss_actor": float(out["loss_actor"].detach()),
                "alpha": float(out["alpha"].detach()), "entropy": float(out["entropy"].detach())}
