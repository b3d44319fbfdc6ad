"""``IQLAgent``: Implicit Q-Learning (Kostrikov et al., 2022) with torchrl's ``IQLLoss``.

Twin critics with Polyak targets, a state value fitted by expectile regression against the target critics'
minimum, and advantage-weighted regression of the Gaussian actor, all on dataset actions only
(BASELINES.md 2.1). The actor starts from the single-step BC policy, the offline phase is
:meth:`~simdist.components.agents.latent.LatentAgent.pretrain` on the simulation data (the paper: "the value function
pretrained in simulation"), and the online phase adds real transitions with one update per transition
(``utd`` 1, after every episode when the adaptation loop calls it per episode).

Defaults are the official AntMaze (sparse reward) settings: expectile 0.9, inverse temperature β 10, Adam
3e-4, (256, 256) MLPs, γ 0.99, Polyak 0.005, batch 256. For dense rewards (``rewards="logged"``) the paper's
locomotion settings are expectile 0.7, β 3. torchrl's own defaults (expectile 0.5, temperature 1) are not the
paper's, so every one is set here. One deviation, said: batches mix the real data with the prior by
``online_fraction`` (0.5) instead of one uniform buffer, where the prior would drown the few real transitions.
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
    ValueNetwork,
    network_params,
    torchrl_actor,
    torchrl_critic,
    torchrl_value,
    transition_tensordict,
)
from simdist.model.config import ConfigError
from simdist.registry import register

__all__ = ["IQLAgent"]


@register("agent", "iql")
class IQLAgent(LatentAgent):
    """IQL on frozen SimDist features; see the module docstring."""

    policy_class = BCPolicy
    default_settings: ClassVar[dict[str, Any]] = {
        "expectile": 0.9,
        "temperature": 10.0,  # β, the inverse temperature of the advantage weights (torchrl's ``temperature``)
        "polyak": 0.005,
    }

    @classmethod
    def build_parts(cls, model: LatentModel, settings: Mapping[str, Any]) -> dict[str, nn.Module]:
        from torchrl.objectives import IQLLoss, ValueEstimators

        if not 0.0 < settings["expectile"] < 1.0:
            raise ConfigError(f"iql: expectile must be in (0, 1), got {settings['expectile']!r}")
        f, a, hidden = model.feature_dim, model.action_dim, settings["hidden"]
        loss = IQLLoss(torchrl_actor(model.gaussian_head()), torchrl_critic(QNetwork(f, a, hidden)),
                       torchrl_value(ValueNetwork(f, hidden)), num_qvalue_nets=2, loss_function="l2",
                       temperature=float(settings["temperature"]), expectile=float(settings["expectile"]))
        loss.make_value_estimator(ValueEstimators.TD0, gamma=float(settings["gamma"]))
        return {"loss": loss}

    def optimizer_groups(self) -> dict[str, list[nn.Parameter]]:
        return network_params(self.loss_module, "actor", "qvalue", "value")

    @torch.no_grad()
    def advantage_weights(self, batch: Mapping[str, Tensor]) -> Tensor:
        """The actor's advantage weights exp(β(min Q − V)) under the target critics, clipped at 100, one per
        transition of ``batch`` (a ``Transitions.take`` batch): how strongly each action is cloned (all alike:
        behaviour cloning; a few large: selective)."""
        data = transition_tensordict(batch)
        loss = self.loss_module
        qs = []
        for params in loss.target_qvalue_network_params.unbind(0):
            with params.to_module(loss.qvalue_network):
                qs.append(loss.qvalue_network(data.clone())["state_action_value"])
        q = torch.stack(qs).min(0).values.squeeze(-1)
        with loss.value_network_params.to_module(loss.value_network):
            v = loss.value_network(data.clone())["state_value"].squeeze(-1)
        return torch.exp(self.settings["temperature"] * (q - v)).clamp(max=100.0)

    def update(self, batch: Mapping[str, Tensor], optimizers: Mapping[str, torch.optim.Optimizer]) -> dict[str, float]:
        """Value, actor and critic losses of one batch (each depends on its own parameters only, the others'
        outputs detached inside the loss), one Adam step each, then the Polyak update of the target critics."""
        out = self.loss_module(transition_tensordict(batch))
        total = out["loss_actor"] + out["loss_qvalue"] + out["loss_value"]
        for opt in optimizers.values():
            opt.zero_grad(set_to_none=True)
        total.backward()
        for opt in optimizers.values():
            opt.step()
        self.target_updater().step()
        return {k: float(out[k].detach()) for k in ("loss_actor", "loss_qvalue", "loss_value")}
