"""Shared by walk_start_error.py and on_policy_error.py: the protocol's straight walk with the world model's
policy head and the privileged expert side by side, one of them driving, the other asked what it would do.

The walk: 25 standing steps of zero action and command, then the straight-walk command at 0.5 m/s on a
10 m course. At every walking step both act on the same state (the head through its own observation
history, :class:`simdist.planning.PlannerPolicy`) and the mean squared difference of their actions is
recorded (action units); the driver's action is applied.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import torch

import simdist
from simdist import WorldModel
from simdist.components.tasks.go2.commands import CommandGenerator
from simdist.components.tasks.go2.protocol import RESET_STEPS, base_yaw, make_course, protocol_env, with_command
from simdist.experts import load_policy
from simdist.planning import PlannerPolicy


def parser(description: str) -> argparse.ArgumentParser:
    """MODEL TERRAIN [--trials N] [--expert DIR] [--out JSON]."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("model")
    ap.add_argument("terrain", choices=["flat", "slope"])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--expert", default="hub/experts/go2")
    ap.add_argument("--out", default=None)
    return ap


@dataclass
class WalkComparison:
    """``errors`` (walking steps, trials): head-vs-expert action MSE; ``active`` (same shape): the trial had
    not terminated before that step; ``fell_at`` (trials,): step (from the walk start) of the first
    termination, -1 if none; ``reasons``: its termination terms."""

    errors: np.ndarray
    active: np.ndarray
    fell_at: np.ndarray
    reasons: list[str]


def compare_walk(model: str, terrain: str, *, trials: int, walk_steps: int, driver: str, randomize: bool,
                 expert_path: str) -> WalkComparison:
    """Walk ``trials`` protocol trials for ``walk_steps`` steps with ``driver`` ("expert" or "head") acting."""
    if driver not in ("expert", "head"):
        raise ValueError(f"driver must be 'expert' or 'head', got {driver!r}")
    torch.set_num_threads(1)
    wm = WorldModel.from_pretrained(model).eval()
    expert = load_policy(expert_path)
    b = trials
    env = protocol_env(make_course(terrain=terrain, course_length=10.0), b, RESET_STEPS + walk_steps,
                       randomize=randomize)
    head = PlannerPolicy(simdist.create("planner", "policy", world_model=wm), b)
    obs = env.reset(seed=0)
    gen, rng = CommandGenerator(b, env.dt, "straight", speed=0.5), np.random.default_rng(0)
    cmd = np.zeros((b, 3), np.float32)
    errors, was_active = np.zeros((walk_steps, b), np.float32), np.zeros((walk_steps, b), bool)
    active, fell_at, reasons = np.ones(b, bool), np.full(b, -1), [""] * b
    for t in range(RESET_STEPS + walk_steps):
        if t == RESET_STEPS:
            gen.reset(np.arange(b), rng, np.array(env.base_pos[:, :2]), base_yaw(env))
            cmd = gen.command.astype(np.float32)
        seen = with_command(obs, cmd)
        head_action = head(seen)
        if t < RESET_STEPS:
            actions = np.zeros((b, 12), np.float32)
        else:
            wanted = np.asarray(expert(seen), np.float32)
            errors[t - RESET_STEPS] = ((head_action - wanted) ** 2).mean(1)
            was_active[t - RESET_STEPS] = active
            actions = wanted if driver == "expert" else head_action
        res = env.step(actions)
        head.record(actions)
        if t >= RESET_STEPS:
            gen.step(rng, np.array(env.base_pos[:, :2]), base_yaw(env))
            cmd = gen.command.astype(np.float32)
        obs = res.obs
        for i in np.flatnonzero(np.asarray(res.terminated, bool) & active):
            fell_at[i] = t - RESET_STEPS
            reasons[i] = ",".join(k for k, v in res.info["termination"].items() if v[i])
        active &= ~np.asarray(res.terminated, bool)
    env.close()
    return WalkComparison(errors, was_active, fell_at, reasons)
