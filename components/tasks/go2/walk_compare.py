"""The protocol's straight walk with a world model's policy head and the expert side by side
(:meth:`Go2Task.compare_walk <simdist.components.tasks.go2.task.Go2Task.compare_walk>`).

The walk: the protocol's standing steps of zero action and command, then the straight-walk command at
``speed`` (0.5 m/s) on the task's course. At every walking step both act on the same state (the head through
its own observation history, :class:`simdist.planning.PlannerPolicy`) and the mean squared difference of their
actions is recorded (action units); the driver's action is applied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from simdist.components.tasks.go2.commands import CommandGenerator
from simdist.components.tasks.go2.protocol import Course, base_yaw, protocol_env, with_command
from simdist.planning.actor import PlannerPolicy
from simdist.registry import create

DRIVERS = ("expert", "head")


@dataclass
class WalkComparison:
    """``errors`` (walking steps, trials): head-vs-expert action MSE; ``active`` (same shape): the trial had
    not terminated before that step; ``fell_at`` (trials,): step (from the walk start) of the first
    termination, -1 if none; ``reasons``: its termination terms."""

    errors: np.ndarray
    active: np.ndarray
    fell_at: np.ndarray
    reasons: list[str]


def compare_walk(course: Course, world_model: Any, expert: Callable[[dict[str, np.ndarray]], Any], *, trials: int,
                 walk_steps: int, driver: str, randomize: bool, standing_steps: int,
                 speed: float = 0.5) -> WalkComparison:
    """Walk ``trials`` trials of ``course`` for ``walk_steps`` steps after ``standing_steps``, ``driver``
    ("expert" or "head": ``world_model``'s policy head) acting."""
    if driver not in DRIVERS:
        raise ValueError(f"driver must be 'expert' or 'head', got {driver!r}")
    b = trials
    env = protocol_env(course, b, standing_steps + walk_steps, randomize=randomize)
    head = PlannerPolicy(create("planner", "policy", world_model=world_model), b)
    obs = env.reset(seed=0)
    gen, rng = CommandGenerator(b, env.dt, "straight", speed=speed), np.random.default_rng(0)
    cmd = np.zeros((b, 3), np.float32)
    errors, was_active = np.zeros((walk_steps, b), np.float32), np.zeros((walk_steps, b), bool)
    active, fell_at, reasons = np.ones(b, bool), np.full(b, -1), [""] * b
    for t in range(standing_steps + walk_steps):
        if t == standing_steps:
            gen.reset(np.arange(b), rng, np.array(env.base_pos[:, :2]), base_yaw(env))
            cmd = gen.command.astype(np.float32)
        seen = with_command(obs, cmd)
        head_action = head(seen)
        if t < standing_steps:
            actions = np.zeros((b, 12), np.float32)
        else:
            wanted = np.asarray(expert(seen), np.float32)
            errors[t - standing_steps] = ((head_action - wanted) ** 2).mean(1)
            was_active[t - standing_steps] = active
            actions = wanted if driver == "expert" else head_action
        res = env.step(actions)
        head.record(actions)
        if t >= standing_steps:
            gen.step(rng, np.array(env.base_pos[:, :2]), base_yaw(env))
            cmd = gen.command.astype(np.float32)
        obs = res.obs
        for i in np.flatnonzero(np.asarray(res.terminated, bool) & active):
            fell_at[i] = t - standing_steps
            reasons[i] = ",".join(k for k, v in res.info["termination"].items() if v[i])
        active &= ~np.asarray(res.terminated, bool)
    env.close()
    return WalkComparison(errors, was_active, fell_at, reasons)
