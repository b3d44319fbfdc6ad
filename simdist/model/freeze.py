"""Freeze policies and the finetuning defaults, in one place.

:class:`FreezePolicy`: which world-model components train in a phase, which stay frozen in eval mode, and the loss
that training them on real data means (:meth:`~FreezePolicy.loss_weights`). The registered presets (``all``,
``dynamics_only``, ``heads_only``) are components like any other (kind ``freeze_policy``,
:mod:`simdist.components.freeze_policies`). Text (an option, a recipe key, a config field) becomes a policy once, at
the edge, with :meth:`FreezePolicy.parse`; from there the object travels (the adaptation loop hands it to the agent,
the agent to its Lightning module) and nothing parses it again.

:class:`FinetuneConfig`: the finetuning defaults (freeze policy, budget, schedule), which ``AdaptConfig``, the
SimDist agent's ``finetune`` and ``FinetuneModule`` all read.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from torch import nn

from simdist.errors import InputError
from simdist.registry import RegistryError, create
from simdist.schema import Validated, bounds

ALL = "all"
#: the component names of ``WorldModel.components`` (and of the agents' models: a BC policy's ``encoder`` and
#: ``policy``); one of them alone is a policy too (``"dynamics"``, ``"policy"``)
COMPONENTS = ("encoder", "dynamics", "reward", "value", "policy", "decoder", "action_embedding", "command_embedding")


class FreezePolicyError(InputError):
    """Text that is not a freeze policy: neither a registered preset nor a set of components."""


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
        """A policy from a registered preset name, a component name (:data:`COMPONENTS`), a comma-separated or
        iterable set of components; a policy is returned as it is. :class:`FreezePolicyError` (a ValueError whose
        message starts ``freeze=VALUE``) for anything else, for a name that is not a component and for no name.
        Call it once, where the text comes in."""
        if isinstance(value, FreezePolicy):
            return value
        if isinstance(value, str):
            if "," not in value:
                try:
                    return create("freeze_policy", value)
                except RegistryError as err:
                    if value in COMPONENTS:
                        return cls({value})
                    raise FreezePolicyError(f"freeze={value!r} is not a freeze policy: {err}") from err
        text: object = value
        listed = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
        names: list[object] = list(listed) if isinstance(listed, Iterable) else [listed]
        if all(isinstance(v, str) for v in names):
            unknown = [n for n in names if n not in COMPONENTS]
            if unknown or not names:
                raise FreezePolicyError(f"freeze={text!r} is not a freeze policy: " + (
                    f"{unknown[0]!r} is not a component ({', '.join(COMPONENTS)})" if unknown else "it trains nothing"))
            return cls(str(n) for n in names)
        raise FreezePolicyError(f"freeze={text!r} is not a freeze policy: expected a preset name or component names")

    @property
    def spec(self) -> str:
        """The policy as text that :meth:`parse` reads back: a registered preset's name, else ``all`` or the
        comma-separated components (``eval_frozen`` is not part of it)."""
        key = type(self).__dict__.get("_simdist_registry_key")
        if key is not None and key[0] == "freeze_policy":
            return str(key[1])
        return ALL if self.trainable == ALL else ",".join(sorted(self.trainable))

    def with_eval_frozen(self, eval_frozen: bool) -> FreezePolicy:
        """A copy that keeps frozen components in eval mode (``eval_frozen``) or lets them follow the model's mode;
        the policy itself is not changed (it may be shared)."""
        if eval_frozen == self.eval_frozen:
            return self
        policy = copy.copy(self)
        policy.eval_frozen = eval_frozen
        return policy

    def trainable_names(self, model: HasComponents) -> set[str]:
        """The names of ``model``'s components this policy trains (never the normaliser)."""
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


@dataclass(frozen=True)
class FinetuneConfig(Validated):
    """The finetuning defaults: SimDist's supervised system identification on real data (SIMDIST.md 5).

    ``freeze``: the trainable parts (a preset name, a component set, or a :class:`FreezePolicy`; only the dynamics
    by default). The budget of one finetuning: ``epochs`` of ``windows_per_epoch`` windows (None: one pass over
    the data) in batches of ``batch_size``. The schedule: warm up to ``lr`` over ``warmup_steps``, then cosine down
    to ``end_lr`` (None: ``lr / 2``) over ``decay_steps`` (None: ``max(10 * warmup_steps, 2000)``, a short run's).
    ``value_target``: what a value head trains on when the policy trains it (real data has no value labels: the TD
    return).

    ``FinetuneConfig()`` is an adaptation stage's finetuning (``simdist adapt``, ``Agent.finetune``);
    :meth:`official` is the official recipe's long schedule (warm-up 2,000 steps, decay over 400,000), the
    defaults of :class:`~simdist.training.FinetuneModule` for LightningCLI recipes.
    """

    freeze: Any = "dynamics_only"
    epochs: int = field(default=3, metadata=bounds(ge=1))
    windows_per_epoch: int | None = field(default=6_000, metadata=bounds(ge=1))
    batch_size: int = field(default=32, metadata=bounds(ge=1))
    lr: float = field(default=2e-4, metadata=bounds(gt=0))
    end_lr: float | None = field(default=None, metadata=bounds(gt=0))
    warmup_steps: int = field(default=50, metadata=bounds(ge=0))
    decay_steps: int | None = field(default=None, metadata=bounds(ge=1))
    value_target: str = field(default="td", metadata=bounds(choices=("label", "td")))

    @classmethod
    def official(cls) -> FinetuneConfig:
        """The official finetuning recipe's schedule (SIMDIST.md 5.2): warm-up 2,000 steps, decay over 400,000."""
        return cls(warmup_steps=2_000, decay_steps=400_000)

    @property
    def policy(self) -> FreezePolicy:
        """``freeze`` as a :class:`FreezePolicy` (parsed here when it is text: call it at the edge)."""
        return FreezePolicy.parse(self.freeze)

    @property
    def final_lr(self) -> float:
        """The learning rate the schedule decays to: ``end_lr``, else ``lr / 2``."""
        return self.lr / 2 if self.end_lr is None else self.end_lr

    @property
    def schedule_steps(self) -> int:
        """The steps the schedule decays over: ``decay_steps``, else ``max(10 * warmup_steps, 2000)``."""
        return max(10 * self.warmup_steps, 2_000) if self.decay_steps is None else self.decay_steps

    def budget(self) -> dict[str, Any]:
        """The budget and schedule as the keyword arguments an agent's ``finetune`` takes (``epochs``,
        ``windows_per_epoch``, ``batch_size``, ``lr``, ``warmup_steps``; ``decay_steps`` when set)."""
        budget: dict[str, Any] = {"epochs": self.epochs, "windows_per_epoch": self.windows_per_epoch,
                                  "batch_size": self.batch_size, "lr": self.lr, "warmup_steps": self.warmup_steps}
        if self.decay_steps is not None:
            budget["decay_steps"] = self.decay_steps
        return budget


#: the finetuning defaults of an adaptation stage and of ``Agent.finetune``
FINETUNE = FinetuneConfig()
#: the official recipe's finetuning defaults (``FinetuneModule``)
OFFICIAL_FINETUNE = FinetuneConfig.official()
