"""simdist: planning world models pretrained in simulation and adapted to the real world in minutes.

Heavy parts (torch, Lightning, MuJoCo) load lazily on first attribute access, so ``import simdist``
stays fast.
"""

from __future__ import annotations

from simdist.lazy import lazy_getattr
from simdist.offscreen import default_offscreen_gl
from simdist.registry import KINDS, create, get, list_components, register

default_offscreen_gl()  # before any task imports MuJoCo

__version__ = "0.1.0"

#: the public API: what users call (README, docs/), each loaded from its submodule on first access
_LAZY = {
    "load_agent": "agents",
    "build_controller": "agents",
    "Agent": "agents",
    "make_task": "tasks",
    "Task": "tasks",
    "EvaluationResult": "evaluation",
    "build_planner": "planning.ensemble",
    "WorldModel": "world_model",
    "WorldModelConfig": "config",
    "ComponentSpec": "config",
    "FreezePolicy": "freeze",
    "FinetuneConfig": "freeze",
    "WorldModelLoss": "losses",
    "Normalizer": "normalization",
    "AdaptationLoop": "adaptation",
    "AdaptConfig": "adaptation",
    "value_trace": "adaptation",
    "roc_auc": "adaptation",
    "bootstrap_ci": "evaluation",
    "seeds_bootstrap_ci": "evaluation",
}

__all__ = ["KINDS", "create", "get", "list_components", "register", "__version__", *_LAZY]

__getattr__ = lazy_getattr(__name__, _LAZY, globals())
