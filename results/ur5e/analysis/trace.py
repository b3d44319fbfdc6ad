"""Where does a controller fail on a UR5e task? Per lattice cell: how close the TCP came to the object, the
most the object was lifted, the closest it came to its assembled pose and how long the gripper was closed.

    python -m results.ur5e.analysis.trace --task ur5e-peg --grid narrow --controller expert
    python -m results.ur5e.analysis.trace --task ur5e-peg --grid narrow --controller bc.pt   # state_bc --save

``--controller``: ``expert``, ``scripted:NAME``, a saved agent's folder (``--planner policy|mppi``) or a file
written by ``state_bc.py --save``. ``--profile`` unset: the training simulator.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def trace(task, controller, cells: int = 8, seed: int = 0, max_steps: int = 225) -> list[dict]:  # type: ignore[no-untyped-def]
    """One episode on each of the first ``cells`` lattice cells (no resets), stepped to the time limit."""
    from simdist.planning import history_for

    env = task.evaluation_env(cells, seed)
    try:
        obs = env.reset(seed=seed)
        history = history_for(controller, cells)
        if history is not None:
            history.reset(obs)
            controller.reset()
        elif hasattr(controller, "reset"):
            controller.reset(np.arange(cells))
        start = env.assembly.object_pose(env)[0].copy()
        stats = {"reach_m": np.full(cells, np.inf), "lift_m": np.zeros(cells), "goal_m": np.full(cells, np.inf),
                 "closed_steps": np.zeros(cells, int), "success_step": np.full(cells, -1)}
        for t in range(max_steps):
            act = np.asarray(controller.act(history) if history is not None else controller(obs), np.float32)
            step = env.step(act)
            obs = step.obs
            if history is not None:
                history.push(obs, act)
            tcp = env.tcp_pose()[0]
            obj = env.assembly.object_pose(env)[0]
            stats["reach_m"] = np.minimum(stats["reach_m"], np.linalg.norm(tcp - obj, axis=1))
            stats["lift_m"] = np.maximum(stats["lift_m"], obj[:, 2] - start[:, 2])
            stats["goal_m"] = np.minimum(stats["goal_m"], step.info["distance"])
            stats["closed_steps"] += act[:, 6] > 0
            new = step.info["success"] & (stats["success_step"] < 0)
            stats["success_step"][new] = t
        return [{k: round(float(v[e]), 4) for k, v in stats.items()} for e in range(cells)]
    finally:
        env.close()


def load_controller(task, spec: str, planner: str = "policy"):  # type: ignore[no-untyped-def]
    agent = task.builtin_agent(spec)
    if agent is not None:
        return agent
    if Path(spec).is_dir():  # a saved agent; PLANNER after a colon (default: the policy head)
        from simdist import load_agent

        agent = load_agent(spec)
        return agent.with_settings(planner=planner) if agent.plans else agent
    from results.ur5e.analysis.state_bc import load_saved

    return load_saved(spec).act_on


def main() -> None:
    from simdist import make_task

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--task", default="ur5e-peg")
    p.add_argument("--grid", default="narrow", choices=("narrow", "wide"))
    p.add_argument("--profile")
    p.add_argument("--controller", default="expert")
    p.add_argument("--planner", default="policy", help="a saved agent's planner: policy or mppi")
    p.add_argument("--cells", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    task = make_task(args.task, grid=args.grid, profile=args.profile)
    rows = trace(task, load_controller(task, args.controller, args.planner), args.cells, args.seed)
    print(json.dumps({"controller": args.controller, "cells": rows}, indent=1))


if __name__ == "__main__":
    main()
