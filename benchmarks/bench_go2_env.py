"""Throughput of the batched Go2 env: closed-loop control steps/s vs bare physics.

Closed loop = ``Go2Env.step`` (PD physics, all observations incl. the 315-point height
scan and the 433-d privileged vector, all reward terms, terminations, commands) plus
``reset(ids=...)`` of finished envs, driven by random N(0, 1) actions. Bare physics =
``Batch.step(nstep=4)`` with random controls on the same model, batch size and threads.

    python benchmarks/bench_go2_env.py --envs 256 --steps 200 [--terrain rough] [--json]

Each number is the median over ``--repeats`` timed runs. The machine may be shared, so
the script also measures process CPU time and reports an *uncontended estimate*: physics
CPU time divided by the thread count (Batch threads scale ~linearly on 2 cores, see
PPO_NOTES 1) plus the single-threaded numpy CPU time of observations/rewards/resets.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from typing import Any

import mujoco
import numpy as np

from simdist import create


def closed_loop(env: Any, steps: int, rng: np.random.Generator) -> tuple[float, float]:
    """(control steps per wall second, CPU seconds per control step)."""
    b = env.num_envs
    acts = rng.standard_normal((steps, b, 12)).astype(np.float32)
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(steps):
        r = env.step(acts[i])
        done = r.terminated | r.truncated
        if done.any():
            env.reset(ids=np.flatnonzero(done))
    return b * steps / (time.perf_counter() - t0), (time.process_time() - c0) / (b * steps)


def bare_physics(env: Any, steps: int, rng: np.random.Generator) -> tuple[float, float]:
    """(control steps per wall second, CPU seconds per control step)."""
    b = env.num_envs
    ctrl = env.default_joint_pos + env.action_scale * rng.standard_normal((steps, b, 12))
    stage = mujoco.mjtStage.mjSTAGE_VEL.value
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(steps):
        env.ctrl[:] = ctrl[i]
        env.batch.step(nstep=env.substeps, stage=stage)
    return b * steps / (time.perf_counter() - t0), (time.process_time() - c0) / (b * steps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=256)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="physics threads (0: all CPUs)")
    ap.add_argument("--terrain", default="flat", choices=["flat", "rough"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    env = create("env", "go2", num_envs=args.envs, terrain=args.terrain, terrain_mode="random", nthread=args.threads,
                 seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    closed_loop(env, 20, rng)  # warm-up
    loop_runs = [closed_loop(env, args.steps, rng) for _ in range(args.repeats)]
    env.reset()
    bare_physics(env, 20, rng)
    bare_runs = [bare_physics(env, args.steps, rng) for _ in range(args.repeats)]
    loop, bare = [x[0] for x in loop_runs], [x[0] for x in bare_runs]
    cpu_loop = statistics.median(x[1] for x in loop_runs)
    cpu_phys = statistics.median(x[1] for x in bare_runs)
    threads = env.batch.nthread
    est_loop = 1.0 / (cpu_phys / threads + max(cpu_loop - cpu_phys, 0.0))
    out = {
        "envs": args.envs,
        "steps": args.steps,
        "threads": threads,
        "terrain": args.terrain,
        "closed_loop_steps_per_s": round(statistics.median(loop)),
        "bare_physics_steps_per_s": round(statistics.median(bare)),
        "closed_loop_runs": [round(x) for x in loop],
        "bare_physics_runs": [round(x) for x in bare],
        "uncontended_estimate_closed_loop": round(est_loop),
        "uncontended_estimate_bare_physics": round(threads / cpu_phys),
        "numpy_overhead_us_per_step": round(1e6 * max(cpu_loop - cpu_phys, 0.0), 2),
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
        print(f"  uncontended estimate from CPU time: closed loop {out['uncontended_estimate_closed_loop']}, "
              f"bare physics {out['uncontended_estimate_bare_physics']} control steps/s "
              f"(numpy overhead {out['numpy_overhead_us_per_step']} us per env step)")
        print(f"  1-min load average during run: {out['load_avg_1min']}")


if __name__ == "__main__":
    main()
