"""simdist: planning world models pretrained in simulation and adapted to the real world in minutes.

Heavy parts (torch, Lightning, MuJoCo) load lazily on first attribute access, so ``import simdist``
stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from simdist.offscreen import default_offscreen_gl
from simdist.registry import KINDS, create, get, list_components, register

default_offscreen_gl()  # before any task imports MuJoCo

__version__ = "0.1.0"

#: the public API: what users call (README, docs/), loaded on first access
_LAZY = {
    "load_agent": "simdist.agents",
    "build_controller": "simdist.agents",
    "Agent": "simdist.agents",
    "make_task": "simdist.tasks",
    "Task": "simdist.tasks",
    "EvaluationResult": "simdist.evaluation",
    "build_planner": "simdist.planning.ensemble",
    "WorldModel": "simdist.world_model",
    "WorldModelConfig": "simdist.config",
    "ComponentSpec": "simdist.config",
    "FreezePolicy": "simdist.freeze",
    "WorldModelLoss": "simdist.losses",
    "Normalizer": "simdist.normalization",
    "AdaptationLoop": "simdist.adaptation",
    "AdaptConfig": "simdist.adaptation",
    "value_trace": "simdist.adaptation",
    "roc_auc": "simdist.adaptation",
    "bootstrap_ci": "simdist.evaluation",
    "seeds_bootstrap_ci": "simdist.evaluation",
}

__all__ = ["KINDS", "create", "get", "list_components", "register", "__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'simdist' has no attribute {name!r}")
