"""Environments: the batched protocol (:mod:`simdist.envs.base`) and the registered tasks."""

from __future__ import annotations

import ctypes.util
import importlib
import importlib.util
import os
import sys


def _default_offscreen_gl() -> None:
    """On headless Linux with an EGL library, default ``MUJOCO_GL`` to ``egl`` so that ``mujoco.Renderer`` works
    (videos: :mod:`simdist.envs.go2.render`). MuJoCo reads the variable once, when it is first imported, so this
    runs before the tasks import it; a value the user set is kept."""
    if not sys.platform.startswith("linux") or "mujoco" in sys.modules:
        return
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    if ctypes.util.find_library("EGL"):
        os.environ.setdefault("MUJOCO_GL", "egl")


_default_offscreen_gl()

from simdist.envs.base import ArraySpec, BatchedEnv, StepResult  # noqa: E402

for _name in ("toy", "go2"):  # importing a task registers it as an ``env`` component
    if importlib.util.find_spec(f"simdist.envs.{_name}") is not None:
        importlib.import_module(f"simdist.envs.{_name}")

__all__ = ["ArraySpec", "BatchedEnv", "StepResult"]
