"""Throughput of the batched Go2 env: closed-loop control steps/s vs bare physics.

Closed loop = ``Go2Env.step`` (PD physics, all observations incl. the 315-point height
scan and the 433-d privileged vector, all reward terms, terminations, commands) plus
``reset(ids=...)`` of finished envs, driven by random N(0, 1) actions. Bare physics =
``Batch.step(nstep=4)`` with random controls on the same model, batch size and threads.

    PYTHONPATH=. python benchmarks/bench_go2_env.py --envs 256 --steps 200 [--terrain rough] [--json]

Each number is the median over ``--repeats`` timed runs (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import mujoco
import numpy as np

from simdist.envs.go2 import Go2Env
from simdist.envs.go2.robot import ACTION_SCALE, DEFAULT_JOINT_POS, N_SUBSTEPS


def closed_loop(env: Go2Env, steps: int, rng: np.random.Generator) -> float:
    b = env.num_envs
    acts = rng.standard_normal((steps, b, 12)).astype(np.float32)
    t0 = time.perf_counter()
    for i in range(steps):
        r = env.step(acts[i])
        done = r.terminated | r.truncated
        if done.any():
            env.reset(ids=np.flatnonzero(done))
    return b * steps / (time.perf_counter() - t0)


def bare_physics(env: Go2Env, steps: int, rng: np.random.Generator) -> float:
    b = env.num_envs
    ctrl = DEFAULT_JOINT_POS + ACTION_SCALE * rng.standard_normal((steps, b, 12))
    stage = mujoco.mjtStage.mjSTAGE_VEL.value
    t0 = time.perf_counter()
    for i in range(steps):
        env.ctrl[:] = ctrl[i]
        env.batch.step(nstep=N_SUBSTEPS, stage=stage)
    return b * steps / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=256)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="physics threads (0: all CPUs)")
    ap.add_argument("--terrain", default="flat", choices=["flat", "rough"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    env = Go2Env(args.envs, terrain=args.terrain, terrain_mode="random", nthread=args.threads, seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    closed_loop(env, 20, rng)  # warm-up
    loop = [closed_loop(env, args.steps, rng) for _ in range(args.repeats)]
    env.reset()
    bare_physics(env, 20, rng)
    bare = [bare_physics(env, args.steps, rng) for _ in range(args.repeats)]
    out = {
        "envs": args.envs,
        "steps": args.steps,
        "threads": env.batch.nthread,
        "terrain": args.terrain,
        "closed_loop_steps_per_s": round(statistics.median(loop)),
        "bare_physics_steps_per_s": round(statistics.median(bare)),
        "closed_loop_runs": [round(x) for x in loop],
        "bare_physics_runs": [round(x) for x in bare],
        "mujoco": mujoco.__version__,
        "cpu_count": os.cpu_count(),
        "load_avg_1min": round(os.getloadavg()[0], 2),
        "machine": platform.processor() or platform.machine(),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"Go2Env B={args.envs} threads={out['threads']} terrain={args.terrain} mujoco {out['mujoco']}")
        print(f"  closed loop (obs+rewards+resets): {out['closed_loop_steps_per_s']:>8} control steps/s  "
              f"runs {out['closed_loop_runs']}")
        print(f"  bare physics (Batch.step nstep=4): {out['bare_physics_steps_per_s']:>8} control steps/s  "
              f"runs {out['bare_physics_runs']}")
        print(f"  1-min load average during run: {out['load_avg_1min']}")


if __name__ == "__main__":
    main()
