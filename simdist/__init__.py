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
    "EnvFactory": "capabilities",
    "EvaluationProtocol": "capabilities",
    "StateCloning": "capabilities",
    "DataGeneration": "capabilities",
    "ExpertTrainer": "capabilities",
    "EvaluationResult": "evaluation",
    "collect_episodes": "workflows.rollout",
    "build_planner": "planning.base",
    "WorldModel": "model.world_model",
    "WorldModelConfig": "model.config",
    "ComponentSpec": "model.config",
    "FreezePolicy": "model.freeze",
    "FinetuneConfig": "model.freeze",
    "WorldModelLoss": "model.losses",
    "Normalizer": "model.normalization",
    "AdaptationLoop": "workflows.adaptation",
    "AdaptConfig": "workflows.adaptation",
    "value_trace": "workflows.adaptation",
    "roc_auc": "workflows.adaptation",
    "bootstrap_ci": "evaluation",
    "seeds_bootstrap_ci": "evaluation",
}

__all__ = ["KINDS", "create", "get", "list_components", "register", "__version__", *_LAZY]

__getattr__ = lazy_getattr(__name__, _LAZY, globals())
