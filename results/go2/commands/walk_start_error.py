"""The world model's policy-head error along the expert's own walks, by time since walking started.

The privileged expert walks the evaluation protocol (25 standing steps of zero action, then the
straight-walk command at 0.5 m/s); at every walking step the world model's policy head sees the same
history and its first action is compared with the expert's (mean squared error, action units).
Usage: python results/go2/commands/walk_start_error.py MODEL TERRAIN [--randomize] [--out JSON]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch

from simdist.envs.go2.commands import CommandGenerator
from simdist.envs.go2.protocol import RESET_STEPS, _with_command, _yaw, make_course, protocol_env
from simdist.experts import load_policy
from simdist.planning.history import ObservationHistory
from simdist.world_model import WorldModel

BINS = ((0, 10), (10, 25), (25, 50), (50, 100), (100, 200), (200, 500))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("terrain", choices=["flat", "slope"])
    ap.add_argument("--randomize", action="store_true")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--expert", default="hub/experts/go2")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    wm = WorldModel.from_pretrained(args.model).eval()
    expert = load_policy(args.expert)
    b, steps = args.trials, RESET_STEPS + BINS[-1][1]
    env = protocol_env(make_course(terrain=args.terrain, course_length=10.0), b, steps, randomize=args.randomize)
    obs = env.reset(seed=0)
    gen, rng = CommandGenerator(b, env.dt, "straight", speed=0.5), np.random.default_rng(0)
    cmd = np.zeros((b, 3), np.float32)
    history = ObservationHistory.for_model(wm, num_envs=b)
    history.reset(obs, command=cmd)
    errors = []
    for t in range(steps):
        if t == RESET_STEPS:
            gen.reset(np.arange(b), rng, np.array(env.base_pos[:, :2]), _yaw(env))
            cmd = gen.command.astype(np.float32)
        actions = np.zeros((b, 12), np.float32)
        if t >= RESET_STEPS:
            history.command[:] = torch.as_tensor(cmd)
            actions = np.asarray(expert(_with_command(obs, cmd)), np.float32)
            with torch.no_grad():
                obs_hist, act_hist, command = history.as_inputs()
                head = wm.policy_actions(wm.encode(obs_hist, act_hist), command)[:, 0].numpy()
            errors.append(((head - actions) ** 2).mean(1))
        res = env.step(actions)
        if t >= RESET_STEPS:
            gen.step(rng, np.array(env.base_pos[:, :2]), _yaw(env))
            cmd = gen.command.astype(np.float32)
        obs = res.obs
        history.push(obs, actions, command=cmd)
    env.close()
    e = np.array(errors)
    rows = [{"steps_after_walk_start": [lo, hi], "action_mse": float(e[lo:hi].mean()),
             "worst_trial": float(e[lo:hi].mean(0).max())} for lo, hi in BINS]
    for r in rows:
        lo, hi = r["steps_after_walk_start"]
        print(f"steps {lo:>3}-{hi:<3} after the walk starts: action MSE {r['action_mse']:.4f} "
              f"(worst trial {r['worst_trial']:.4f})")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"model": args.model, "terrain": args.terrain, "randomize": args.randomize,
                       "trials": b, "bins": rows}, f, indent=1)


if __name__ == "__main__":
    main()
