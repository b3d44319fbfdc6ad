"""Offscreen rendering for MuJoCo on headless Linux: the GL default, a renderer with a helpful error, GIF writing."""

from __future__ import annotations

import ctypes.util
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np


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


def _load_llvm_users_first() -> None:
    """Import triton (torch's compiler backend) before the first GL context, if it is installed: Mesa's
    software renderer and triton each bring an LLVM, and triton imported after an EGL context has been
    made crashes the process (measured: segmentation fault on the import; the other order works)."""
    import importlib.util

    if "triton" not in sys.modules and importlib.util.find_spec("triton") is not None:
        try:
            import triton  # noqa: F401
        except Exception:  # noqa: BLE001 - a broken optional install must not stop rendering
            pass


def make_renderer(model: Any, width: int, height: int) -> Any:
    """A ``mujoco.Renderer`` (MuJoCo imported here, after :func:`default_offscreen_gl`), or a RuntimeError that
    says how to enable offscreen rendering."""
    _load_llvm_users_first()
    import mujoco

    model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
    model.vis.global_.offheight = max(model.vis.global_.offheight, height)
    try:
        return mujoco.Renderer(model, height=height, width=width)
    except Exception as err:  # noqa: BLE001 - the GL backends raise many kinds of errors
        backend = os.environ.get("MUJOCO_GL", "<unset>")
        raise RuntimeError(
            f"MuJoCo offscreen rendering is unavailable (MUJOCO_GL={backend}): {type(err).__name__}: {err}. "
            "Set MUJOCO_GL=egl (GPU or Mesa EGL) or MUJOCO_GL=osmesa in the environment before starting Python "
            "(MuJoCo reads it when first imported), or skip the videos."
        ) from err


def write_gif(frames: np.ndarray | list[np.ndarray], path: str | Path, fps: float = 25.0, hold_s: float = 1.0,
              colors: int = 64) -> Path:
    """Write ``frames`` (N, H, W, 3) as a looping GIF, atomically (a temporary file beside ``path``, then renamed).

    All frames share one ``colors``-colour palette (median cut over the first, middle and last frame, no
    dithering): about half the size of per-frame palettes and no flicker. The last frame is held ``hold_s``.
    """
    from PIL import Image

    from simdist.fsutil import atomic_path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = np.asarray(frames, np.uint8)
    sample = np.concatenate([frames[0], frames[len(frames) // 2], frames[-1]], axis=0)
    palette = Image.fromarray(sample).quantize(colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    images = [Image.fromarray(f).quantize(palette=palette, dither=Image.Dither.NONE) for f in frames]
    durations = [1000.0 / fps] * len(images)
    durations[-1] += 1000.0 * hold_s
    with atomic_path(path) as tmp:
        images[0].save(tmp, format="GIF", save_all=True, append_images=images[1:], duration=durations, loop=0)
    return path


def label_frames(frames: np.ndarray, text: str) -> np.ndarray:
    """``frames`` with ``text`` drawn in the top-left corner."""
    from PIL import Image, ImageDraw

    out = np.empty_like(frames)
    for i, frame in enumerate(frames):
        img = Image.fromarray(frame)
        draw = ImageDraw.Draw(img)
        _, _, right, bottom = draw.textbbox((4, 3), text)
        draw.rectangle((0, 0, right + 4, bottom + 3), fill=(20, 20, 24))
        draw.text((4, 3), text, fill=(255, 255, 255))
        out[i] = np.asarray(img)
    return out


def offscreen_gl_error() -> str | None:
    """Why this process cannot render offscreen (None: it can): tries an 8 x 8 renderer."""
    import mujoco

    try:
        make_renderer(mujoco.MjModel.from_xml_string("<mujoco/>"), 8, 8).close()
    except RuntimeError as err:
        return str(err)
    return None
