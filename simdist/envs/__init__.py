"""Environments: the batched protocol (:mod:`simdist.envs.base`); the tasks' envs live with the tasks."""

from simdist.envs.base import ArraySpec, BatchedEnv, StepResult

__all__ = ["ArraySpec", "BatchedEnv", "StepResult"]
