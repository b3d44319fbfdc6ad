"""The planning contract: the ``Planner`` base (input handling, eval/no-grad context, action bounds), its
``PlanResult``, the non-finite error, the discounted return and the score planners rank
sequences by (:func:`plan_score`: the return less an ensemble's disagreement penalty), and :func:`build_planner`,
which turns settings (a ``planner.json``'s, or a preset's) into a planner.

The algorithms (``mppi``, ``mppi_naive``, ``policy``) are registered plug-ins in ``simdist.components.planners``; each
declares the schema of its settings (``config_class``, e.g. ``MPPIConfig``) and its presets (``presets``), which
:func:`planner_preset` reads by name through the registry (the contract: :mod:`simdist.planning.settings`).
"""

from __future__ import annotations

import abc
import contextlib
import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from simdist.model.types import Imagination
from simdist.planning.history import ObservationHistory
from simdist.planning.inputs import NonFiniteError, check_finite, finite_actions, history_inputs, nonfinite_rows

__all__ = ["Bound", "NonFiniteError", "PlanResult", "Planner", "build_planner", "check_disagreement", "check_finite",
           "discounted_return", "eval_mode", "nonfinite_rows", "plan_score", "planner_preset", "planner_presets",
           "preset_settings"]

Bound = float | Sequence[float] | Tensor | None

@dataclass
class PlanResult:
    """One planning tick: ``action`` (B, A) to execute, ``plan`` (B, T, A), ``returns`` (B,) or None
    (the planner's estimate of the plan's return), and planner-specific ``diagnostics``."""

    action: Tensor
    plan: Tensor
    returns: Tensor | None = None
    diagnostics: dict[str, Tensor] = field(default_factory=dict)


def return_parts(rewards: Tensor, values: Tensor, discount: float, value_offset: int = 0) -> tuple[Tensor, Tensor]:
    """The two parts of :func:`discounted_return` over the last axis, (..., T) → (...) each: the horizon's
    rewards Σ_{k<T} γ^k r̂_k and the value term γ^(T+value_offset) V̂_last."""
    t = rewards.shape[-1]
    gammas = discount ** torch.arange(t, device=rewards.device, dtype=rewards.dtype)
    return (rewards * gammas).sum(-1), discount ** (t + value_offset) * values[..., -1]


def discounted_return(rewards: Tensor, values: Tensor, discount: float, value_offset: int = 0) -> Tensor:
    """R = Σ_{k<T} γ^k r̂_k + γ^(T+value_offset) V̂_last over the last axis: (..., T) → (...)."""
    horizon, value = return_parts(rewards, values, discount, value_offset)
    return horizon + value


def plan_score(imagination: Imagination, discount: float, value_offset: int = 0, disagreement: float = 0.0,
               value_weight: float = 1.0) -> Tensor:
    """What a planner ranks action sequences by: the discounted return, its value term weighted by
    ``value_weight`` w, minus ``disagreement`` λ times the discounted disagreement of an ensemble dynamics,
    Σ_{k<T} γ^k r̂_k + w γ^(T+offset) V̂_last − λ Σ_{k<T} γ^k u_k, (..., T) → (...).

    w = 1 and λ = 0 is the plain :func:`discounted_return`; w = 0 ranks by the horizon's rewards alone (a value
    head that cannot rank, e.g. one never trained); λ > 0 needs the imagination of an ensemble dynamics
    (``imagination.disagreement``, ValueError otherwise)."""
    horizon, value = return_parts(imagination.rewards, imagination.values, discount, value_offset)
    score = horizon + value if value_weight == 1.0 else horizon + value_weight * value
    if not disagreement:
        return score
    u = imagination.disagreement
    if u is None:
        raise ValueError(f"disagreement={disagreement} penalises the spread of an ensemble dynamics; this world "
                         "model has a single dynamics (use dynamics 'ensemble', or disagreement=0)")
    gammas = discount ** torch.arange(u.shape[-1], device=u.device, dtype=u.dtype)
    return score - disagreement * (u * gammas).sum(-1)


def check_disagreement(value: Any, world_model: nn.Module) -> float:
    """The disagreement penalty λ, validated: a finite number >= 0, and > 0 only for a world model whose dynamics
    is an ensemble."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < float("inf"):
        raise ValueError(f"disagreement must be a finite number >= 0, got {value!r}")
    if value > 0 and getattr(world_model, "dynamics_members", 1) < 2:
        raise ValueError(f"disagreement={value} penalises the spread of an ensemble dynamics; this world model has "
                         "a single dynamics (use dynamics 'ensemble', or disagreement=0)")
    return float(value)


@contextlib.contextmanager
def eval_mode(module: nn.Module) -> Iterator[None]:
    """Put ``module`` in eval mode under ``torch.no_grad``; restore each submodule's mode afterwards."""
    training = [m for m in module.modules() if m.training]
    module.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        for m in training:
            m.training = True


class Planner(abc.ABC):
    """Chooses actions for B envs from their observation histories with a :class:`~simdist.WorldModel`.

    ``history`` is an :class:`ObservationHistory` or a dict with ``obs_hist`` {group: (B, H+1, *shape)},
    ``act_hist`` (B, H, A) and ``command`` (B, C) (optional when the model has no command). Everything
    runs without gradients, in eval mode, on the model's current device. ``action_low``/``action_high``
    (scalars or (A,)) override the model config's bounds; with neither, actions are not clipped.
    """

    #: Whether the planner keeps state per env between ticks (a warm start, past plans). Planners without
    #: it may plan for any subset of envs (``PlannerPolicy(..)(obs, rows=...)``).
    per_env_state: bool = False
    #: a WorldModel, or a module with its ``config``, ``device`` and prediction methods
    world_model: Any

    def __init__(self, world_model: nn.Module, action_low: Bound = None, action_high: Bound = None) -> None:
        self.world_model = world_model
        cfg = self.world_model.config
        self.horizon, self.action_dim, self.command_dim = cfg.horizon, cfg.action_dim, cfg.command_dim
        self._low = self._bound(action_low if action_low is not None else cfg.action_low, "action_low")
        self._high = self._bound(action_high if action_high is not None else cfg.action_high, "action_high")

    # ------------------------------------------------------------------ public API
    def act(self, history: ObservationHistory | Mapping[str, Any]) -> Tensor:
        """The action (B, A) to execute now."""
        return self.plan(history).action

    def plan(self, history: ObservationHistory | Mapping[str, Any]) -> PlanResult:
        """Plan one tick; returns the first action, the whole plan and diagnostics."""
        with eval_mode(self.world_model):
            obs_hist, act_hist, command = self._inputs(history)
            result = self._plan(obs_hist, act_hist, command)
        finite_actions(result.action, type(self).__name__)
        return result

    def reset(self, ids: Sequence[int] | Tensor | None = None, seed: int | None = None) -> None:
        """Forget per-env state of envs ``ids`` (all if None); reseed the generator if ``seed`` is given."""
        return None

    @abc.abstractmethod
    def _plan(self, obs_hist: dict[str, Tensor], act_hist: Tensor, command: Tensor | None) -> PlanResult:
        """Plan on validated tensors (on the model's device); ``command`` is None for command-less models."""

    # ------------------------------------------------------------------ helpers
    @property
    def device(self) -> torch.device:
        """The world model's device."""
        return self.world_model.device

    @property
    def dtype(self) -> torch.dtype:
        """The world model's floating-point type."""
        return next(self.world_model.parameters()).dtype

    @property
    def action_bounds(self) -> tuple[Tensor | None, Tensor | None]:
        """(low, high), each (A,) on the model's device, or None."""
        dev = self.device
        return (None if self._low is None else self._low.to(dev),
                None if self._high is None else self._high.to(dev))

    def clip(self, actions: Tensor) -> Tensor:
        """Clip (..., A) actions to the bounds (no-op without bounds)."""
        low, high = self.action_bounds
        if low is None and high is None:
            return actions
        return torch.clamp(actions, min=low, max=high)

    def _bound(self, value: Bound, name: str) -> Tensor | None:
        if value is None:
            return None
        t = torch.as_tensor(value, dtype=torch.float32).flatten()
        if t.numel() == 1:
            t = t.expand(self.action_dim).clone()
        if t.numel() != self.action_dim:
            raise ValueError(f"{name} has {t.numel()} entries; model action_dim is {self.action_dim}")
        return t

    def _inputs(self, history: ObservationHistory | Mapping[str, Any]
                ) -> tuple[dict[str, Tensor], Tensor, Tensor | None]:
        cfg = self.world_model.config
        return history_inputs(history, cfg.obs_spec, cfg.action_dim, cfg.command_dim, cfg.history,
                              device=self.device, dtype=self.dtype, command_steps=self.horizon + 1)


# ---------------------------------------------------------------------------------------------- settings → planner
def build_planner(world_model: Any, settings: Mapping[str, Any] | str) -> Any:
    """A planner from a settings mapping such as a zoo model's ``planner.json``, or from a preset name
    (``"paper"``, ``"realtime"``: :func:`planner_preset`): ``planner`` names the registered planner (default
    ``mppi``), ``temporal_ensemble`` (optional; None or 0: off) wraps it in a
    :class:`~simdist.planning.ensemble.TemporalEnsemble`, everything else goes to the planner's constructor (which
    checks it against the planner's schema, e.g. ``MPPIConfig``)."""
    from simdist.registry import create

    kwargs = planner_preset(settings) if isinstance(settings, str) else dict(settings)
    name = kwargs.pop("planner", "mppi")
    decay = kwargs.pop("temporal_ensemble", None)
    planner = create("planner", name, world_model=world_model, **kwargs)
    if not decay:
        return planner
    from simdist.planning.ensemble import TemporalEnsemble

    return TemporalEnsemble(planner, decay)


def planner_presets() -> dict[str, dict[str, Any]]:
    """Every registered planner's presets (its class's ``presets``), by preset name: complete :func:`build_planner`
    settings."""
    from simdist.planning.settings import PlannerPreset
    from simdist.registry import get, list_components

    found: dict[str, dict[str, Any]] = {}
    for name in list_components("planner"):
        for key, preset in (getattr(get("planner", name), "presets", None) or {}).items():
            if key not in found:  # a subclass (mppi_naive) inherits its parent's; the parent names them
                found[key] = preset.settings(name) if isinstance(preset, PlannerPreset) else dict(preset)
    return found


def planner_preset(name: str, **overrides: Any) -> dict[str, Any]:
    """A copy of preset ``name``'s :func:`build_planner` settings (``planner``, the planner's arguments and
    ``temporal_ensemble``), with ``overrides`` replacing any of them. KeyError for an unknown name."""
    presets = planner_presets()
    if name not in presets:
        raise KeyError(f"unknown planner preset {name!r}; known presets: {sorted(presets)}")
    return {**copy.deepcopy(presets[name]), **overrides}


def preset_settings(name: str, **overrides: Any) -> dict[str, Any]:
    """Planner preset ``name``'s settings with ``overrides``, through its schema's budget rule where it has one
    (MPPI's ``at_budget``: a sample count also scales the policy samples and elites). Without
    ``planner`` and ``temporal_ensemble``."""
    from simdist.planning.settings import preset_acting

    settings = preset_acting(name, overrides=overrides)
    return {k: v for k, v in settings.items() if k not in ("planner", "temporal_ensemble")}
