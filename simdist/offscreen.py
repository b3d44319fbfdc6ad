"""Offscreen rendering default for MuJoCo on headless Linux."""

from __future__ import annotations

import ctypes.util
import os
import sys


def default_offscreen_gl() -> None:
    """On headless Linux with an EGL library, default ``MUJOCO_GL`` to ``egl`` so that ``mujoco.Renderer`` works
    (videos). MuJoCo reads the variable once, when it is first imported, so this runs before the tasks
    import it; a value the user set is kept."""
    if not sys.platform.startswith("linux") or "mujoco" in sys.modules:
        return
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    if ctypes.util.find_library("EGL"):
        os.environ.setdefault("MUJOCO_GL", "egl")
