"""How much the executed action changes from one tick to the next, with and without temporal ensembling.

Runs the evaluation protocol (randomised trials, 0.5 m/s) with a world model's planner for the first
``--walk-steps`` walking steps (default 100, 2 s: before most falls) and records every executed action;
reports the mean squared change between consecutive actions (action units) over walking steps 2 onwards.
Usage: python -m results.go2.analysis.action_jitter MODEL [MODEL ...] [--terrain slope] [--out JSON]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from simdist import build_controller, make_task

REALTIME = dict(num_samples=16, iterations=1, init_std=0.1, warm_start="policy")


class Recorder:
    """Passes ``act`` through to a planner and keeps every action it returns."""

    def __init__(self, planner: Any) -> None:
        self.planner, self.world_model, self.actions = planner, planner.world_model, []

    def reset(self, *args: Any, **kwargs: Any) -> None:
        self.planner.reset(*args, **kwargs)

    def act(self, history: Any) -> Any:
        action = self.planner.act(history)
        self.actions.append(np.asarray(action.detach().cpu(), np.float64))
        return action


def jitter(model: str, planner: str, decay: float | None, terrain: str, trials: int, walk_steps: int) -> float:
    kwargs = REALTIME if planner == "mppi" else {}
    rec = Recorder(build_controller(f"model:{model}", planner, preset="paper", temporal_ensemble=decay, **kwargs))
    task = make_task("go2", terrain=terrain, course_length=10.0, speeds=(0.5,), randomize=True)
    task.max_steps = task.standing_steps + walk_steps
    task.evaluate(rec, trials, seed=0)
    actions = np.stack(rec.actions)  # (steps, B, A)
    return float((np.diff(actions[1:], axis=0) ** 2).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--terrain", default="slope")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--walk-steps", type=int, default=100)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = []
    for model in args.models:
        for planner in ("policy", "mppi"):
            for decay in (None, 0.8):
                value = jitter(model, planner, decay, args.terrain, args.trials, args.walk_steps)
                rows.append({"model": model, "planner": planner, "temporal_ensemble": decay, "jitter": value})
                print(f"{model}  {planner:6s}  ensemble {decay or 'off':>4}  mean squared action change {value:.4f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"terrain": args.terrain, "trials": args.trials, "walk_steps": args.walk_steps, "rows": rows},
                      f, indent=1)


if __name__ == "__main__":
    main()
