"""Freeze policies: which world-model components train in a phase, and which stay frozen in eval mode."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from torch import nn

from simdist.registry import create, register

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


@register("freeze_policy", "all")
class TrainAll(FreezePolicy):
    """Pretraining: every component trains."""

    def __init__(self, eval_frozen: bool = True) -> None:
        super().__init__(ALL, eval_frozen)


@register("freeze_policy", "dynamics_only")
class DynamicsOnly(FreezePolicy):
    """SimDist finetuning: only the dynamics trains; encoder, embeddings, heads, normaliser are frozen."""

    def __init__(self, eval_frozen: bool = True) -> None:
        super().__init__({"dynamics"}, eval_frozen)


@register("freeze_policy", "heads_only")
class HeadsOnly(FreezePolicy):
    """Reward, value and policy heads train; the representation and dynamics are frozen."""

    def __init__(self, eval_frozen: bool = True) -> None:
        super().__init__({"reward", "value", "policy"}, eval_frozen)
