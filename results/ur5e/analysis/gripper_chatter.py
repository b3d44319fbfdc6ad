"""Gripper chatter under MPPI: sign flips per episode of the binary gripper command, per ``binary_mode``.

The env closes the gripper where the command's 7th dimension is > 0. The official MPPI outputs the weighted mean
of its elites there; with a weak ranking that mean sits near 0 and its sign can flip tick to tick. This runs the
manipulation MPPI (the task's planner preset) with each mode on the Narrow lattice in nominal simulation and
counts the flips of the executed command per episode (mean with a 95 % bootstrap interval over episodes)::

    python -m results.ur5e.analysis.gripper_chatter --model outputs/ur5e-peg/model --steps 60 \\
        --json results/ur5e/analysis/gripper-chatter-ur5e-peg.json

``--model preset`` uses the ``ur5e-peg`` preset's randomly initialised model: a ranking that is pure noise.
``--profile`` names the reality profile (default ``sim``); the rows committed before it existed ran on the task's
default profile, ``peg-real`` (``--profile peg-real`` reproduces them).
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

import simdist
from simdist import bootstrap_ci
from simdist.data import atomic_write_json
from simdist.planning import ObservationHistory, build_planner, planner_preset

GRIPPER = 6


def chatter(world_model: simdist.WorldModel, task: simdist.Task, mode: str, *, envs: int, steps: int, seed: int
            ) -> dict:
    """Flips per episode of the gripper command under MPPI ``binary_mode`` ``mode`` (``envs`` Narrow lattice
    cells, ``steps`` control steps each)."""
    planner = build_planner(world_model, planner_preset("manipulation", binary_dims=[GRIPPER], binary_mode=mode,
                                                        seed=seed))
    env = task.evaluation_env(envs, seed)
    hist = ObservationHistory.for_model(world_model, envs)
    signs = []
    try:
        obs = env.reset(seed=seed)
        hist.reset(obs, command=hist.command_of(obs))
        for _ in range(steps):
            a = planner.plan(hist).action.numpy().astype(np.float32)
            signs.append(a[:, GRIPPER] > 0)
            step = env.step(a)
            hist.push(step.obs, torch.from_numpy(a), command=hist.command_of(step.obs))
    finally:
        env.close()
    s = np.stack(signs)
    per_episode = (s[1:] != s[:-1]).sum(0).astype(float)
    return {"mode": mode, "flips_per_episode": asdict(bootstrap_ci(per_episode)), "episodes": envs, "steps": steps,
            "closed_fraction": float(s.mean())}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="preset", help="a model folder or 'preset' (random init)")
    p.add_argument("--task", default="ur5e-peg")
    p.add_argument("--profile", default="sim", help="the reality profile (default sim: the training simulator)")
    p.add_argument("--envs", type=int, default=8)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--modes", default="mean,elite,hysteresis")
    p.add_argument("--json", required=True)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    wm = simdist.WorldModel.from_preset(args.task) if args.model == "preset" else \
        simdist.load_agent(args.model).world_model
    task = simdist.make_task(args.task, grid="narrow", profile=args.profile)
    rows = [chatter(wm.eval(), task, m, envs=args.envs, steps=args.steps, seed=args.seed)
            for m in args.modes.split(",")]
    for r in rows:
        f = r["flips_per_episode"]
        print(f"{r['mode']}: {f['mean']:.1f} [{f['low']:.1f}, {f['high']:.1f}] flips in {r['steps']} steps "
              f"({r['episodes']} episodes), closed {r['closed_fraction']:.2f}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out, {"model": args.model, "task": task.describe(),
                            "command": "python -m results.ur5e.analysis.gripper_chatter "
                            + " ".join(__import__("sys").argv[1:]), "rows": rows})


if __name__ == "__main__":
    main()
