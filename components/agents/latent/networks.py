"""Critic and value MLPs on frozen-encoder features, and the bridge to torchrl's loss modules (which read
TensorDicts: ``observation``, ``action``, ``("next", "reward")`` ...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor, nn

__all__ = ["QNetwork", "ValueNetwork", "feedforward", "torchrl_actor", "torchrl_critic", "torchrl_value",
           "transition_tensordict"]


def feedforward(in_dim: int, hidden: Sequence[int], out_dim: int, layer_norm: bool = False) -> nn.Sequential:
    """Linear → (LayerNorm →) ReLU per hidden layer, then a linear output (RLPD's critic pattern with
    ``layer_norm``; IQL's plain 2×256 ReLU MLPs without)."""
    layers: list[nn.Module] = []
    last = in_dim
    for width in hidden:
        layers.append(nn.Linear(last, width))
        if layer_norm:
            layers.append(nn.LayerNorm(width))
        layers.append(nn.ReLU())
        last = width
    layers.append(nn.Linear(last, out_dim))
    return nn.Sequential(*layers)


class QNetwork(nn.Module):
    """Q(f, a) -> (B, 1) for features ``f`` and normalised actions ``a``."""

    def __init__(self, feature_dim: int, action_dim: int, hidden: Sequence[int], layer_norm: bool = False) -> None:
        super().__init__()
        self.net = feedforward(feature_dim + action_dim, hidden, 1, layer_norm)

    def forward(self, observation: Tensor, action: Tensor) -> Tensor:
        return self.net(torch.cat([observation, action], dim=-1))


class ValueNetwork(nn.Module):
    """V(f) -> (B, 1)."""

    def __init__(self, feature_dim: int, hidden: Sequence[int], layer_norm: bool = False) -> None:
        super().__init__()
        self.net = feedforward(feature_dim, hidden, 1, layer_norm)

    def forward(self, observation: Tensor) -> Tensor:
        return self.net(observation)


def torchrl_actor(head: nn.Module, return_log_prob: bool = False) -> Any:
    """A torchrl ``ProbabilisticActor`` over ``head`` (``features -> (mean, std)``): an independent Gaussian
    over normalised actions, sharing ``head``'s parameters."""
    from tensordict.nn import TensorDictModule
    from torchrl.modules import ProbabilisticActor
    from torchrl.modules.distributions import IndependentNormal

    module = TensorDictModule(head, in_keys=["observation"], out_keys=["loc", "scale"])
    return ProbabilisticActor(module, in_keys=["loc", "scale"], distribution_class=IndependentNormal,
                              return_log_prob=return_log_prob)


def torchrl_critic(network: QNetwork) -> Any:
    from tensordict.nn import TensorDictModule

    return TensorDictModule(network, in_keys=["observation", "action"], out_keys=["state_action_value"])


def torchrl_value(network: ValueNetwork) -> Any:
    from tensordict.nn import TensorDictModule

    return TensorDictModule(network, in_keys=["observation"], out_keys=["state_value"])


def network_params(loss: Any, *names: str) -> dict[str, list[nn.Parameter]]:
    """The parameters of each named network of a torchrl ``loss`` (``"actor"``: ``loss.actor_network_params``),
    one optimiser group per name."""
    return {name: list(getattr(loss, f"{name}_network_params").values(True, True)) for name in names}


def transition_tensordict(batch: Mapping[str, Tensor], rewards: Tensor | None = None) -> Any:
    """A :meth:`~simdist.components.agents.latent.Transitions.take` batch in torchrl's layout (``rewards`` replaces
    the batch's)."""
    from tensordict import TensorDict

    n = batch["features"].shape[0]
    r = batch["rewards"] if rewards is None else rewards
    terminal = batch["terminal"].reshape(n, 1)
    return TensorDict({
        "observation": batch["features"], "action": batch["actions"],
        ("next", "observation"): batch["next_features"], ("next", "reward"): r.reshape(n, 1).float(),
        ("next", "done"): terminal, ("next", "terminated"): terminal,
    }, batch_size=[n])
