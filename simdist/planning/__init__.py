"""Planning with a world model: the planner contract, the rolling input history, temporal ensembling, shadow
planners and presets. The planners themselves are registered plug-ins: ``create("planner", "mppi", ...)`` or
:func:`build_planner`."""

from __future__ import annotations

import importlib
from typing import Any

from simdist.planning.actor import PlannerPolicy
from simdist.planning.history import ObservationHistory, history_for

_LAZY = {
    "Planner": "simdist.planning.base",
    "PlanResult": "simdist.planning.base",
    "NonFiniteError": "simdist.planning.base",
    "WARM_STARTS": "simdist.planning.base",
    "discounted_return": "simdist.planning.base",
    "plan_score": "simdist.planning.base",
    "eval_mode": "simdist.planning.base",
    "TemporalEnsemble": "simdist.planning.ensemble",
    "build_planner": "simdist.planning.ensemble",
    "ShadowPlanners": "simdist.planning.shadow",
    "FallbackOnNonFinite": "simdist.planning.safety",
    "planner_preset": "simdist.planning.presets",
}

__all__ = ["ObservationHistory", "PlannerPolicy", "history_for", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'simdist.planning' has no attribute {name!r}")
