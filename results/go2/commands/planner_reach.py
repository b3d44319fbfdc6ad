"""How far can adapting the dynamics move what the planner executes? A shadow measurement on a proxy-real course.

The zero-shot planner (BASE) drives the trials; on every walking tick the same history also goes to shadow
controllers that never act: the planner with the ADAPTED model, the same BASE planner with another sampling
seed (the noise floor: what MPPI's own sampling changes) and the frozen policy head. Reported: the RMS
difference (action units, 1 = 0.25 rad) between each shadow's action and the executed one, over the ticks each
trial walked. If the adapted planner differs from the executed action no more than a reseeded BASE planner
does, finetuning the dynamics cannot change the behaviour, however much better it predicts.

Usage: python results/go2/commands/planner_reach.py BASE ADAPTED --profile P [--samples 16 --iterations 1
       --init-std 0.1 --warm-start policy --temporal-ensemble 0.8 --trials 3 --speeds 0.1,0.3,0.5 --out JSON]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from simdist.envs.go2.protocol import make_course, run_protocol
from simdist.tools.evaluate import build_controller

SHADOWS = ("adapted", "reseeded", "policy_head")


class ShadowedPlanner:
    """Acts with ``driver``; records each shadow's action on the same history, per tick and env."""

    def __init__(self, driver: Any, shadows: dict[str, Any]) -> None:
        self.driver, self.shadows = driver, shadows
        self.world_model = driver.world_model
        self.runs: list[list[dict[str, np.ndarray]]] = []  # one list of ticks per speed (batch of trials)

    def reset(self, ids: Any = None) -> None:
        """A new batch of trials (the protocol resets every env once per speed)."""
        if ids is None:
            self.runs.append([])
        for planner in (self.driver, *self.shadows.values()):
            planner.reset(ids)

    def act(self, history: Any) -> np.ndarray:
        executed = self.driver.act(history).detach().cpu().numpy()
        tick = {"executed": executed}
        for name, planner in self.shadows.items():
            tick[name] = planner.act(history).detach().cpu().numpy()
        self.runs[-1].append(tick)
        return executed


def rms_differences(ticks: list[dict[str, np.ndarray]], walked_ticks: np.ndarray) -> dict[str, float]:
    """RMS over action dims, averaged over the (tick, env) pairs where the env was still walking."""
    mask = np.arange(len(ticks))[:, None] < walked_ticks[None, :]
    executed = np.stack([t["executed"] for t in ticks])
    out = {"executed_rms": float(np.sqrt((executed ** 2).mean(-1))[mask].mean())}
    for name in SHADOWS:
        diff = np.stack([t[name] for t in ticks]) - executed
        out[name] = float(np.sqrt((diff ** 2).mean(-1))[mask].mean())
    return out


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
        return build_controller(f"model:{spec}", kind, args.samples, args.iterations, seed=seed,
                                init_std=args.init_std, warm_start=args.warm_start,
                                temporal_ensemble=args.temporal_ensemble)

    shadowed = ShadowedPlanner(planner(args.base, args.seed), {
        "adapted": planner(args.adapted, args.seed), "reseeded": planner(args.base, args.seed + 1000),
        "policy_head": planner(args.base, args.seed, "policy")})
    speeds = [float(s) for s in args.speeds.split(",")]
    result = run_protocol(shadowed, make_course(args.profile), speeds=speeds, trials=args.trials, seed=args.seed)
    per_speed = []
    for trials, ticks in zip(result.speeds, shadowed.runs, strict=True):
        walked = np.round(np.asarray(trials.walk_time) / 0.02).astype(int)
        per_speed.append({"speed": trials.speed, "progress": trials.progress, **rms_differences(ticks, walked)})
        print(json.dumps(per_speed[-1]), flush=True)
    keys = ("executed_rms", *SHADOWS)
    summary = {"base": args.base, "adapted": args.adapted, "profile": args.profile, "settings": vars(args),
               "mean": {k: float(np.mean([s[k] for s in per_speed])) for k in keys}, "speeds": per_speed}
    print(json.dumps(summary["mean"]))
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
