"""Planning with a world model: the planner contract (with :func:`build_planner` and the presets the registered
planners declare), the rolling input history, temporal ensembling and shadow planners. The planners themselves are
registered plug-ins: ``create("planner", "mppi", ...)`` or :func:`build_planner`."""

from __future__ import annotations

from simdist.lazy import lazy_getattr
from simdist.planning.actor import PlannerPolicy
from simdist.planning.history import ObservationHistory, history_for

_LAZY = {
    "Planner": "base",
    "PlanResult": "base",
    "NonFiniteError": "base",
    "discounted_return": "base",
    "plan_score": "base",
    "eval_mode": "base",
    "TemporalEnsemble": "ensemble",
    "build_planner": "base",
    "ShadowPlanners": "shadow",
    "FallbackOnNonFinite": "safety",
    "planner_preset": "base",
    "planner_presets": "base",
    "preset_settings": "base",
    "PlannerPreset": "settings",
}

__all__ = ["ObservationHistory", "PlannerPolicy", "history_for", *_LAZY]

__getattr__ = lazy_getattr(__name__, _LAZY, globals())
