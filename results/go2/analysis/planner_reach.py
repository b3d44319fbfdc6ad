"""How far can adapting the dynamics move what the planner executes? A shadow measurement on a proxy-real course.

The zero-shot planner (BASE) drives the protocol's trials; ``simdist.planning.ShadowPlanners`` also gives each
walking tick's history to the planner with the ADAPTED model, to the BASE planner with another sampling seed
(the noise floor) and to the frozen policy head, none of which act. Reported per speed: the RMS gap (action
units, 1 = 0.25 rad) between each shadow's action and the executed one, over the ticks each trial walked.

Usage: python -m results.go2.analysis.planner_reach BASE ADAPTED --profile P [--samples 16 --iterations 1
       --init-std 0.1 --warm-start policy --temporal-ensemble 0.8 --trials 3 --speeds 0.1,0.3,0.5 --out JSON]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from simdist import build_controller, make_task
from simdist.planning import ShadowPlanners

SHADOWS = ("adapted", "reseeded", "policy_head")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("adapted")
    parser.add_argument("--profile", required=True)
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--init-std", type=float, default=0.1)
    parser.add_argument("--warm-start", default="policy")
    parser.add_argument("--temporal-ensemble", type=float, default=0.8)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--speeds", default="0.1,0.3,0.5")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    def planner(spec: str, seed: int, kind: str = "mppi") -> Any:
        return build_controller(f"model:{spec}", kind, preset="paper", num_samples=args.samples,
                                iterations=args.iterations, seed=seed, init_std=args.init_std,
                                warm_start=args.warm_start,
                                temporal_ensemble=args.temporal_ensemble)

    shadowed = ShadowPlanners(planner(args.base, args.seed), {
        "adapted": planner(args.adapted, args.seed), "reseeded": planner(args.base, args.seed + 1000),
        "policy_head": planner(args.base, args.seed, "policy")})
    speeds = tuple(float(s) for s in args.speeds.split(","))
    result = make_task("go2", profile=args.profile, speeds=speeds).evaluate(shadowed, args.trials, args.seed)
    protocol = result.details["protocol"]  # the straight-walk protocol's record: one entry per speed
    per_speed = []
    assert len(shadowed.runs) == len(protocol["speeds"])  # the protocol resets every env once per speed
    for k, trials in enumerate(protocol["speeds"]):
        walked = np.round(np.asarray(trials["walk_time"]) / 0.02).astype(int)
        per_speed.append({"speed": trials["speed"], "progress": trials["progress"], **shadowed.gaps(k, walked)})
        print(json.dumps(per_speed[-1]), flush=True)
    keys = ("executed_rms", *SHADOWS)
    summary = {"base": args.base, "adapted": args.adapted, "profile": args.profile, "settings": vars(args),
               "mean": {k: float(np.mean([s[k] for s in per_speed])) for k in keys}, "speeds": per_speed}
    print(json.dumps(summary["mean"]))
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
