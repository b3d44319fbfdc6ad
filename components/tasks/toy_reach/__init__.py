"""The ``toy-reach`` task: a point-mass reach with a scripted expert, for fast end-to-end tests.

Importing this package registers :class:`ToyReachTask` (``task``) and the ``toy`` preset without importing
MuJoCo; :class:`ToyReachEnv` (``env``) and the other names load on first use.
"""

import importlib
from typing import Any

from simdist.components.tasks.toy_reach import presets as _presets  # noqa: F401
from simdist.components.tasks.toy_reach.task import ToyReachTask

_LAZY = {
    "ExpertCritic": "critic", "fit_expert_critic": "critic", "LaggedPD": "expert", "PDPolicy": "expert",
    "RandomLinear": "expert", "expert_policy": "expert", "suboptimal_policies": "expert",
    "ToyReachEnv": "pointmass", "build_model": "pointmass", "reward_fn": "pointmass", "generate_toy_dataset": "data",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ExpertCritic",
    "fit_expert_critic",
    "LaggedPD",
    "PDPolicy",
    "RandomLinear",
    "ToyReachEnv",
    "ToyReachTask",
    "build_model",
    "expert_policy",
    "generate_toy_dataset",
    "reward_fn",
    "suboptimal_policies",
]
