"""Environments: the batched protocol (:mod:`simdist.envs.base`) and the registered tasks."""

from __future__ import annotations

import importlib
import importlib.util

from simdist.envs.base import ArraySpec, BatchedEnv, StepResult

for _name in ("toy", "go2"):  # importing a task registers it as an ``env`` component
    if importlib.util.find_spec(f"simdist.envs.{_name}") is not None:
        importlib.import_module(f"simdist.envs.{_name}")

__all__ = ["ArraySpec", "BatchedEnv", "StepResult"]
