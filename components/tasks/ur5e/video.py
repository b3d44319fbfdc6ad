"""Short rollout videos of a policy on a UR5e task (one lattice cell, rendered afterwards from the stored states):
:func:`write_rollout_video`. The GIFs of docs/ur5e.md are made by ``python -m results.ur5e.video``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from simdist.components.tasks.ur5e.render import CAMERA_NAMES, GIF_COLORS, render_states


class _CellRecorder:
    """A view of a UR5eEnv that stores env ``cell``'s ``physics`` rows after reset and every step, and reports
    only that env's episode end (the others step on), so ``rollout(..., episodes=1)`` runs exactly its episode."""

    def __init__(self, env: Any, cell: int) -> None:
        self.env, self.cell = env, int(cell)
        self.rows: list[np.ndarray] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def reset(self, *args: Any, **kwargs: Any) -> dict[str, np.ndarray]:
        obs = self.env.reset(*args, **kwargs)
        self.rows = [obs["physics"][self.cell].copy()]
        return obs

    def step(self, actions: np.ndarray) -> Any:
        result = self.env.step(actions)
        self.rows.append(result.obs["physics"][self.cell].copy())
        others = np.arange(self.env.num_envs) != self.cell
        result.terminated = np.where(others, False, result.terminated)
        result.truncated = np.where(others, False, result.truncated)
        return result


def rollout_states(task: Any, agent: Any, *, grid: str = "wide", cell: int = 0, seed: int = 0
                   ) -> tuple[Any, np.ndarray, dict[str, Any]]:
    """Run ``agent`` on lattice cell ``cell`` of ``grid`` (one episode on ``task``'s profile) and return the env's
    model, the episode's ``physics`` rows (T + 1, reset included) and its final info (success, cell, ...).
    Envs 0..cell run together (a seeded reset serves the lattice in order); only env ``cell`` is kept."""
    from simdist.components.tasks.ur5e.env import UR5eEnv
    from simdist.components.tasks.ur5e.task import LATTICE_CELLS
    from simdist.workflows.rollout import rollout

    if not 0 <= cell < LATTICE_CELLS:
        raise ValueError(f"cell must be in [0, {LATTICE_CELLS}), got {cell}")
    profile = task.profile
    env = UR5eEnv(task.assembly(), cell + 1, task.env_config(grid=grid), profile=profile, seed=seed)
    try:
        recorder = _CellRecorder(env, cell)
        result = rollout(recorder, agent, episodes=1, seed=seed)
        model = env.model
    finally:
        env.close()
    info = {k: v for k, v in result.final_info[0].items() if k != "final_obs"}
    return model, np.stack(recorder.rows), info


def episode_frames(model: mujoco.MjModel, rows: np.ndarray, cameras: Sequence[str] = ("front",), size: int = 160,
                   every: int = 1) -> np.ndarray:
    """(N, size, size * len(cameras), 3) frames of every ``every``-th row (the last always), cameras side by
    side."""
    keep = list(range(0, len(rows), max(1, int(every))))
    if keep[-1] != len(rows) - 1:
        keep.append(len(rows) - 1)
    images = render_states(model, rows[keep], cameras, size)
    return np.concatenate([images[f"image_{cam}"] for cam in cameras], axis=2)


def write_rollout_video(task_name: str = "ur5e-peg", agent_spec: str = "expert", out: str | Path | None = None, *,
                        grid: str = "wide", cell: int = 0, profile: str | None = None,
                        cameras: Sequence[str] = ("front",), size: int = 160, every: int = 1,
                        fps: float | None = None, seed: int = 0, label: bool = True) -> dict[str, Any]:
    """Render one lattice episode of ``agent_spec`` (an agent the task provides, e.g. ``expert``, or one
    ``simdist evaluate --agent`` accepts) on ``task_name`` to a GIF at ``out`` (``fps``: default real time,
    control rate / ``every``). Returns the path, frame count, episode outcome and seconds taken."""
    from simdist.offscreen import label_frames, write_gif
    from simdist.tasks import make_task

    started = time.perf_counter()
    if out is None:
        agent_name = agent_spec.replace(":", "-").replace("/", "-")
        out = f"results/ur5e/{task_name.removeprefix('ur5e-')}-{agent_name}.gif"
    out = Path(out)
    if out.suffix.lower() != ".gif":
        raise ValueError(f"only GIF videos are written (pillow), got {out}")
    unknown = [cam for cam in cameras if cam not in CAMERA_NAMES]
    if unknown or not cameras:  # before the episode runs
        raise ValueError(f"unknown camera {unknown[0]!r}: the cell has {', '.join(CAMERA_NAMES)}" if unknown
                         else "no cameras given")
    kwargs: dict[str, Any] = {"grid": grid}
    if profile is not None:
        kwargs["profile"] = None if profile in ("none", "sim") else profile
    task = make_task(task_name, **kwargs)
    agent = task.builtin_agent(agent_spec)
    if agent is None:
        from simdist.agents import build_controller

        agent = build_controller(agent_spec, seed=seed, task=task)
    model, rows, info = rollout_states(task, agent, grid=grid, cell=cell, seed=seed)
    simulated = time.perf_counter()
    frames = episode_frames(model, rows, cameras, size, every)
    rendered = time.perf_counter()
    success = bool(info.get("success", False))
    if label:
        frames = label_frames(frames, f"{agent_spec} {grid}#{cell} {'success' if success else 'fail'} "
                                      f"{(len(rows) - 1) / task.control_hz:.1f}s")
    fps = float(fps) if fps is not None else task.control_hz / max(1, int(every))
    write_gif(frames, out, fps=fps, colors=GIF_COLORS)
    return {"path": str(out), "frames": len(frames), "steps": len(rows) - 1, "success": success,
            "cell": int(info.get("cell", cell)), "bytes": out.stat().st_size,
            "sim_s": simulated - started, "render_s": rendered - simulated, "seconds": time.perf_counter() - started}
