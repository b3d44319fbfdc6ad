"""Planning with a world model: the rolling input history and (lazily) the registered planners."""

from __future__ import annotations

import importlib
from typing import Any

from simdist.planning.actor import PlannerPolicy
from simdist.planning.history import ObservationHistory

_LAZY = {
    "Planner": "simdist.components.planners.base",
    "PlanResult": "simdist.components.planners.base",
    "discounted_return": "simdist.components.planners.base",
    "MPPIPlanner": "simdist.components.planners.mppi",
    "NaiveMPPIPlanner": "simdist.components.planners.mppi",
    "PolicyPlanner": "simdist.components.planners.policy",
    "TemporalEnsemble": "simdist.planning.ensemble",
    "build_planner": "simdist.planning.ensemble",
    "ShadowPlanners": "simdist.planning.shadow",
    "FallbackOnNonFinite": "simdist.planning.safety",
    "planner_preset": "simdist.planning.presets",
}

__all__ = ["ObservationHistory", "PlannerPolicy", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'simdist.planning' has no attribute {name!r}")
