"""The ``toy-reach`` task: a point-mass reach with a scripted expert, for fast end-to-end tests.

Importing this package registers :class:`ToyReachTask` (``task``) and the ``toy`` preset without importing
MuJoCo; :class:`ToyReachEnv` (``env``) and the other names load on first use.
"""

from simdist.components.tasks.toy_reach import presets as _presets  # noqa: F401
from simdist.components.tasks.toy_reach.task import ToyReachTask
from simdist.lazy import lazy_getattr

_LAZY = {
    "ExpertCritic": "critic", "fit_expert_critic": "critic", "LaggedPD": "expert", "PDPolicy": "expert",
    "RandomLinear": "expert", "expert_policy": "expert", "suboptimal_policies": "expert",
    "ToyReachEnv": "pointmass", "build_model": "pointmass", "reward_fn": "pointmass", "generate_toy_dataset": "data",
}

__all__ = ["ToyReachTask", *_LAZY]

__getattr__ = lazy_getattr(__name__, _LAZY, globals())
