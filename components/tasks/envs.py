"""Importing this module registers the built-in tasks' environments (kind ``env``; imports MuJoCo)."""

from simdist.components.tasks.go2.env import Go2Env
from simdist.components.tasks.toy_reach.pointmass import ToyReachEnv

__all__ = ["Go2Env", "ToyReachEnv"]
