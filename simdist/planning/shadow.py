"""Shadow planners: how far would another model or planner move the action that is executed?

A driver planner acts; on every tick the same history also goes to shadow planners that never act, and
their actions are recorded beside the executed one. The RMS gap says how much a change (adapted dynamics,
another seed, the bare policy head) could change the behaviour: if swapping in adapted dynamics moves the
action less than reseeding the planner does, finetuning the dynamics cannot change what the robot does with
this planner, however much better the model predicts. (A real-time preset of 16 samples at std 0.1
around the policy head's chunk can be such a planner; measure it with this class.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


class ShadowPlanners:
    """Acts with ``driver``; records every shadow's action on the same history, per tick and env.

    Usable wherever a planner is (``act``, ``reset``, ``world_model``); every shadow must plan for a model
    with the driver's input spec. ``reset(None)`` starts a new run (e.g. a new batch of trials).
    """

    def __init__(self, driver: Any, shadows: Mapping[str, Any]) -> None:
        if not shadows:
            raise ValueError("give at least one shadow planner")
        spec = driver.world_model.config
        for name, planner in shadows.items():
            other = planner.world_model.config
            if (other.obs_spec, other.action_dim, other.history) != (spec.obs_spec, spec.action_dim, spec.history):
                raise ValueError(f"shadow {name!r} plans for another input spec than the driver")
        self.driver, self.shadows = driver, dict(shadows)
        self.world_model = driver.world_model
        self.runs: list[list[dict[str, np.ndarray]]] = []

    def reset(self, ids: Sequence[int] | None = None) -> None:
        """Reset envs ``ids`` of every planner; all envs (None) starts a new run."""
        if ids is None:
            self.runs.append([])
        for planner in (self.driver, *self.shadows.values()):
            planner.reset(ids)

    def act(self, history: Any) -> Any:
        """The driver's action (executed); the shadows' actions are recorded."""
        if not self.runs:
            self.runs.append([])
        executed = self.driver.act(history)
        tick = {"executed": executed.detach().cpu().numpy()}
        for name, planner in self.shadows.items():
            tick[name] = planner.act(history).detach().cpu().numpy()
        self.runs[-1].append(tick)
        return executed

    def gaps(self, run: int = -1, active_ticks: Sequence[int] | np.ndarray | None = None) -> dict[str, float]:
        """RMS over action dims of each shadow's action minus the executed one, averaged over the ticks of
        ``run``; ``active_ticks[i]``: how many of them env i was still running (all if None). Also
        ``executed_rms``, the executed action's own RMS, for scale."""
        ticks = self.runs[run]
        if not ticks:
            raise ValueError("no tick recorded in this run")
        executed = np.stack([t["executed"] for t in ticks])  # (T, B, A)
        steps, envs = executed.shape[:2]
        counts = np.full(envs, steps) if active_ticks is None else np.asarray(active_ticks)
        if counts.shape != (envs,):
            raise ValueError(f"active_ticks has shape {counts.shape}, expected ({envs},)")
        mask = np.arange(steps)[:, None] < counts[None, :]
        if not mask.any():
            raise ValueError("active_ticks leaves no tick to average over")
        out = {"executed_rms": float(np.sqrt((executed ** 2).mean(-1))[mask].mean())}
        for name in self.shadows:
            gap = np.stack([t[name] for t in ticks]) - executed
            out[name] = float(np.sqrt((gap ** 2).mean(-1))[mask].mean())
        return out
