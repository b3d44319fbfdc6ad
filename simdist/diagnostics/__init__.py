"""Planning diagnostics of a world model: action information (does the prediction use the future actions?),
its validation callback, and plan ranking against true returns (``simdist diagnose``, ``simdist mechanism``).

Public (loaded on first access): the plan-ranking measurement, for scripts that drive it their own way (e.g. with
shadow planners beside the driver): visit states and keep the planner's candidates, the true returns and their
parts, the model's scores and their parts, and the reports."""

from __future__ import annotations

from simdist.lazy import lazy_getattr

_LAZY = {name: "mechanism" for name in (
    "MechanismConfig", "VisitedStates", "visit_states", "drive_and_clone", "true_returns", "true_return_parts",
    "predicted_returns", "predicted_parts", "ranking_report", "split_report", "split_truth", "run_mechanism",
    "spearman")} | {name: "action_information" for name in ("ActionInformation", "action_information",
                                                            "dataset_windows")}

__all__ = [*_LAZY]

__getattr__ = lazy_getattr(__name__, _LAZY, globals())
