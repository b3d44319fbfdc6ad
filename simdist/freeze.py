"""Freeze policies: which world-model components train in a phase, which stay frozen in eval mode, and the loss
that training them on real data means. The registered presets (``all``, ``dynamics_only``, ``heads_only``) are
components like any other (:mod:`simdist.components.freeze_policies`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from torch import nn

from simdist.registry import create

ALL = "all"


class HasComponents(Protocol):
    """A module with named parts, such as ``WorldModel``."""

    training: bool

    @property
    def components(self) -> dict[str, nn.Module]: ...


class FreezePolicy:
    """Trains the named components (or ``"all"``); everything else gets ``requires_grad=False`` and, with
    ``eval_frozen``, stays in eval mode (dropout off) even while the rest trains.

    The normaliser is never trainable. Component names are those of ``WorldModel.components``:
    encoder, dynamics, reward, value, policy, action_embedding, command_embedding.
    """

    def __init__(self, trainable: str | Iterable[str] = ALL, eval_frozen: bool = True) -> None:
        self.trainable = ALL if trainable == ALL else frozenset(trainable)
        self.eval_frozen = eval_frozen

    def __repr__(self) -> str:
        names = self.trainable if self.trainable == ALL else sorted(self.trainable)
        return f"{type(self).__name__}(trainable={names!r})"

    @classmethod
    def parse(cls, value: FreezePolicy | str | Iterable[str]) -> FreezePolicy:
        """A policy from a registered preset name, a comma-separated or iterable set of components."""
        if isinstance(value, FreezePolicy):
            return value
        if isinstance(value, str):
            if "," not in value:
                return create("freeze_policy", value)
            value = [v.strip() for v in value.split(",") if v.strip()]
        return cls(value)

    def trainable_names(self, model: HasComponents) -> set[str]:
        components = model.components
        if isinstance(self.trainable, str):  # ALL
            return {n for n in components if n != "normalizer"}
        unknown = self.trainable - set(components)
        if unknown:
            raise KeyError(f"freeze policy names unknown components {sorted(unknown)}; "
                           f"this model has {sorted(components)}")
        return set(self.trainable) - {"normalizer"}

    def apply(self, model: HasComponents) -> dict[str, bool]:
        """Set ``requires_grad`` per component and put frozen ones in eval mode; returns name → trains."""
        names = self.trainable_names(model)
        for name, module in model.components.items():
            module.requires_grad_(name in names)
        self.set_modes(model, training=model.training)
        return {name: name in names for name in model.components}

    def set_modes(self, model: HasComponents, training: bool) -> None:
        """``model.train(training)`` except that frozen components stay in eval mode."""
        names = self.trainable_names(model)
        for name, module in model.components.items():
            module.train(training and (name in names or not self.eval_frozen or self.trainable == ALL))

    def loss_weights(self, model: HasComponents) -> dict[str, float]:
        """The finetuning loss this policy means on real data: latent consistency for the dynamics; a policy that
        also trains the reward or value head trains it on what real data offers (the logged rewards, and TD
        targets built from them). The action (policy-head) loss needs expert labels, which real data lacks."""
        trainable = self.trainable_names(model)
        return {"dynamics": 1.0, "reward": float("reward" in trainable), "value": float("value" in trainable),
                "action": 0.0}
