"""The ``go2`` task: MuJoCo Unitree Go2 locomotion (robot model, terrains, batched env, reality profiles,
PPO expert, data-engine recipe, straight-walk protocol, demo).

Importing this package registers :class:`Go2Task` as ``("task", "go2")`` and the ``go2`` / ``go2-mlp``
world-model presets without importing MuJoCo; :class:`Go2Env` (``("env", "go2")``) and the other names
below load on first use.
"""

from __future__ import annotations

from simdist.components.tasks.go2 import official as _official  # noqa: F401  (registers its official model)
from simdist.components.tasks.go2 import presets as _presets  # noqa: F401
from simdist.components.tasks.go2.task import Go2Task
from simdist.lazy import lazy_getattr

_LAZY = {
    "Go2Env": "env", "RealityProfile": "profiles", "builtin_profiles": "profiles", "forward_progress": "profiles",
    "load_profile": "profiles", "PROFILE_SCHEMA": "profiles", "SurfacePatch": "profiles",
    "ACTION_SCALE": "robot", "DEFAULT_JOINT_POS": "robot", "JOINT_NAMES": "robot",
    "KD": "robot", "KP": "robot", "TORQUE_LIMIT": "robot", "build_go2_spec": "robot", "Terrain": "terrain",
    "make_flat": "terrain", "make_grid": "terrain", "make_slope_course": "terrain",
}

__all__ = ["Go2Task", *_LAZY]


__getattr__ = lazy_getattr(__name__, _LAZY, globals())
