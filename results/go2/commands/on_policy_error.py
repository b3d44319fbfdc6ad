"""The world model's policy-head error along its *own* walks (the covariate shift behind its falls).

The policy head walks the evaluation protocol (25 standing steps, then the straight-walk command at
0.5 m/s, 10 m course, randomised trials); at every walking step the privileged expert is asked what it
would do in the same state, and the mean squared difference of the two actions is recorded (action units).
Compare with walk_start_error.py, the error along the expert's walks. Per trial: where and why it fell and
the error in the 10 steps before, 10-50 and 50-150 steps before, and earlier.
Usage: python results/go2/commands/on_policy_error.py MODEL TERRAIN [--trials N] [--out JSON]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch

import simdist
from simdist.envs.go2.commands import CommandGenerator
from simdist.envs.go2.protocol import RESET_STEPS, _with_command, _yaw, make_course, protocol_env
from simdist.experts import load_policy
from simdist.planning import PlannerPolicy
from simdist.world_model import WorldModel

WALK_STEPS = 1000  # 20 s: twice the 10 m course at 0.5 m/s, the protocol's time limit


def _mean(e: np.ndarray, lo: int, hi: int) -> float | None:
    seg = e[max(0, lo):max(0, hi)]
    return float(seg.mean()) if len(seg) else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("terrain", choices=["flat", "slope"])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--expert", default="hub/experts/go2")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    wm = WorldModel.from_pretrained(args.model).eval()
    expert = load_policy(args.expert)
    b, steps = args.trials, RESET_STEPS + WALK_STEPS
    env = protocol_env(make_course(terrain=args.terrain, course_length=10.0), b, steps, randomize=True)
    student = PlannerPolicy(simdist.create("planner", "policy", world_model=wm), b)
    obs = env.reset(seed=0)
    gen, rng = CommandGenerator(b, env.dt, "straight", speed=0.5), np.random.default_rng(0)
    cmd = np.zeros((b, 3), np.float32)
    errors = np.full((WALK_STEPS, b), np.nan)
    active, fell_at, reasons = np.ones(b, bool), np.full(b, -1), [""] * b
    for t in range(steps):
        if t == RESET_STEPS:
            gen.reset(np.arange(b), rng, np.array(env.base_pos[:, :2]), _yaw(env))
            cmd = gen.command.astype(np.float32)
        actions = student(_with_command(obs, cmd))
        if t < RESET_STEPS:
            actions = np.zeros((b, 12), np.float32)
        else:
            wanted = np.asarray(expert(_with_command(obs, cmd)), np.float32)
            errors[t - RESET_STEPS] = np.where(active, ((actions - wanted) ** 2).mean(1), np.nan)
        res = env.step(actions)
        student.record(actions)
        if t >= RESET_STEPS:
            gen.step(rng, np.array(env.base_pos[:, :2]), _yaw(env))
            cmd = gen.command.astype(np.float32)
        obs = res.obs
        for i in np.flatnonzero(np.asarray(res.terminated, bool) & active):
            fell_at[i] = t - RESET_STEPS
            reasons[i] = ",".join(k for k, v in res.info["termination"].items() if v[i])
        active &= ~np.asarray(res.terminated, bool)
        if t >= RESET_STEPS and not active.any():
            break
    env.close()
    trials = []
    for i in range(b):
        e = errors[:, i][~np.isnan(errors[:, i])]
        k = int(fell_at[i]) if fell_at[i] >= 0 else len(e)
        trials.append({"fell_at_step": int(fell_at[i]) if fell_at[i] >= 0 else None, "reason": reasons[i] or None,
                       "mse_last_10": _mean(e, k - 10, k), "mse_10_50_before": _mean(e, k - 50, k - 10),
                       "mse_50_150_before": _mean(e, k - 150, k - 50), "mse_earlier": _mean(e, 0, k - 150),
                       "mse_whole": float(e.mean()) if len(e) else None})
        t_ = trials[-1]
        where = f"fell at walk step {k} ({t_['reason']})" if t_["fell_at_step"] is not None else "walked on"
        print(f"trial {i}: {where}; action MSE whole {t_['mse_whole']:.3f}, last 10 steps "
              f"{t_['mse_last_10'] or float('nan'):.3f}, earlier than 150 {t_['mse_earlier'] or float('nan'):.3f}")
    steady = [t_["mse_earlier"] for t_ in trials if t_["mse_earlier"] is not None]
    summary = {"model": args.model, "terrain": args.terrain, "trials": trials,
               "falls": int((fell_at >= 0).sum()),
               "mean_mse_earlier_than_150_steps_before_the_end": float(np.mean(steady)) if steady else None}
    print(f"falls {summary['falls']}/{b}; mean action MSE (more than 150 steps before the end): "
          f"{summary['mean_mse_earlier_than_150_steps_before_the_end']}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
