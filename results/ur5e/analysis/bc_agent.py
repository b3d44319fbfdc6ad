"""The `bc` agent (SimDist's state encoder with an MLP head, behaviour cloning alone) on a UR5e task's
simulation data, evaluated closed loop: does the world model's encoder architecture, trained on the action
alone, read the state well enough to act?

    python -m results.ur5e.analysis.bc_agent --task ur5e-peg --data outputs/ur5e/ur5e-peg-cpu \
        --out outputs/ur5e-peg-bc --json results/ur5e/analysis/bc-agent-ur5e-peg.json

Trains on the clean expert steps (``expert_only``) with the preset's encoder and history, saves the agent's
Hub folder to ``--out`` (a rerun with the folder present only evaluates), then evaluates ``--trials`` passes
over each grid's lattice in the training simulator (``--profile`` for a reality profile).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    from simdist import WorldModel, get, load_agent, make_task

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--task", default="ur5e-peg")
    p.add_argument("--data", required=True)
    p.add_argument("--out", required=True, help="the agent's folder")
    p.add_argument("--steps", type=int, default=8000)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--grids", default="narrow,wide")
    p.add_argument("--profile")
    p.add_argument("--trials", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json")
    args = p.parse_args()
    grids = args.grids.split(",")
    if any(g not in ("narrow", "wide") for g in grids):
        p.error(f"--grids: narrow and/or wide, got {args.grids!r}")
    report: dict = {"command": "python -m results.ur5e.analysis.bc_agent " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v is not None and k != "json")}
    out = Path(args.out)
    if not (out / "config.json").is_file():
        t0 = time.perf_counter()
        config = WorldModel.from_preset(get("task", args.task).preset).config
        agent = get("agent", "bc").train(args.data, config, steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                              end_lr=args.lr / 10, front_pad=config.history, seed=args.seed, expert_only=True,
                              progress=True, out=out.with_name(out.name + "-logs"))
        agent.save_pretrained(out, description=f"single-step BC on {args.data} (clean expert steps)")
        losses = agent.train_losses
        report["train"] = {"seconds": time.perf_counter() - t0, "first_loss": losses[0],
                           "last_loss_mean_100": sum(losses[-100:]) / len(losses[-100:])}
    agent = load_agent(out)
    report["profile"] = args.profile or "sim"
    for grid in grids:
        task = make_task(args.task, grid=grid, profile=args.profile)
        report[grid] = task.evaluate(agent, trials=args.trials, seed=args.seed).summary()
        print(grid, report[grid], flush=True)
    text = json.dumps(report, indent=1, default=float)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
