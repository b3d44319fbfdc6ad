"""Shared by walk_start_error.py and on_policy_error.py: the protocol's straight walk with the world model's
policy head and the privileged expert side by side, one of them driving, the other asked what it would do.

The walk: 25 standing steps of zero action and command, then the straight-walk command at 0.5 m/s on a
10 m course. At every walking step both act on the same state (the head through its own observation
history) and the mean squared difference of their actions is recorded (action units); the driver's action is
applied. The go2 task runs it (``make_task("go2", ...).compare_walk``).
"""

from __future__ import annotations

import argparse
from typing import Any

import torch

from simdist import WorldModel, build_controller, make_task


def parser(description: str) -> argparse.ArgumentParser:
    """MODEL TERRAIN [--trials N] [--expert DIR] [--out JSON]."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("model")
    ap.add_argument("terrain", choices=["flat", "slope"])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--expert", default="hub/experts/go2")
    ap.add_argument("--out", default=None)
    return ap


def compare_walk(model: str, terrain: str, *, trials: int, walk_steps: int, driver: str, randomize: bool,
                 expert_path: str) -> Any:
    """Walk ``trials`` protocol trials for ``walk_steps`` steps with ``driver`` ("expert" or "head") acting: the
    task's ``WalkComparison`` (``errors``, ``active``, ``fell_at``, ``reasons``)."""
    if driver not in ("expert", "head"):
        raise ValueError(f"driver must be 'expert' or 'head', got {driver!r}")
    torch.set_num_threads(1)
    wm = WorldModel.from_pretrained(model).eval()
    expert = build_controller(f"expert:{expert_path}")
    task = make_task("go2", terrain=terrain, course_length=10.0, randomize=randomize)
    return task.compare_walk(wm, expert, trials=trials, walk_steps=walk_steps, driver=driver)
