"""MuJoCo Unitree Go2 locomotion: robot model, terrains, batched env, reality profiles.

Importing this package registers :class:`Go2Env` as ``("env", "go2")``.
"""

from simdist.envs.go2.env import Go2Env
from simdist.envs.go2.profiles import RealityProfile, builtin_profiles, forward_progress, load_profile
from simdist.envs.go2.robot import (
    ACTION_SCALE,
    DEFAULT_JOINT_POS,
    JOINT_NAMES,
    KD,
    KP,
    TORQUE_LIMIT,
    build_go2_spec,
)
from simdist.envs.go2.terrain import Terrain, make_flat, make_grid, make_slope_course

__all__ = [
    "ACTION_SCALE",
    "DEFAULT_JOINT_POS",
    "JOINT_NAMES",
    "KD",
    "KP",
    "TORQUE_LIMIT",
    "Go2Env",
    "RealityProfile",
    "Terrain",
    "build_go2_spec",
    "builtin_profiles",
    "forward_progress",
    "load_profile",
    "make_flat",
    "make_grid",
    "make_slope_course",
]
