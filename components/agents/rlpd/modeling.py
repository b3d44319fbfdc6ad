"""``RLPDAgent``: RL with Prior Data (Ball et al., 2023) with torchrl's ``REDQLoss``.

Plain SAC plus RLPD's three changes (BASELINES.md 3.1): every batch half prior data, half online data
(``online_fraction`` 0.5; the prior is the simulation data and the demos, never mixed into the online buffer);
LayerNorm in the critics; ``utd`` 20 critic updates per real transition with an ensemble of 10 critics whose
target is the minimum over a random subset of 2 (torchrl's ``REDQLoss``). The actor (mean over all critics) and
the temperature step once per ``utd`` critic steps; target entropy −|A|/2, α₀ 1, MSE critic loss and no α
floor (torchrl's REDQ defaults of smooth-L1 and α ≥ 0.1 are not RLPD's). The actor starts from the
single-step BC policy (the paper's start, instead of RLPD's random-action warm-up); the critics start fresh.

Deviations, said: the Gaussian actor has a state-independent log-std on an unsquashed mean (it is the BC
head; actions are clipped to the bounds when executed); torchrl's REDQ keeps the entropy term in the backup,
which RLPD switches off for sparse tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

from simdist.components.agents.bc.policy import BCPolicy
from simdist.components.agents.latent import LatentAgent, LatentModel
from simdist.components.agents.latent.networks import QNetwork, torchrl_actor, torchrl_critic, transition_tensordict
from simdist.config import ConfigError
from simdist.registry import register

__all__ = ["RLPDAgent"]


@register("agent", "rlpd")
class RLPDAgent(LatentAgent):
    """RLPD on frozen SimDist features; see the module docstring."""

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

    @property
    def loss_module(self) -> Any:
        return self.model.parts["loss"]

    def optimizer_groups(self) -> dict[str, list[nn.Parameter]]:
        loss = self.loss_module
        return {"actor": list(loss.actor_network_params.values(True, True)),
                "qvalue": list(loss.qvalue_network_params.values(True, True)), "alpha": [loss.log_alpha]}

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
