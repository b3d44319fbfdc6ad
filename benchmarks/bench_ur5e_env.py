"""Throughput of the batched UR5e env with the scripted expert and state observations, vs bare stepping.

Closed loop = the scripted expert's actions, ``UR5eEnv.step`` (targets, the physics substeps, success,
rewards, observations) and ``reset(ids=...)`` of finished episodes, on the training simulator
(randomisation and diverse resets). Bare stepping = the ``Batch.step`` calls inside that same loop (the
physics of the same states), timed around the call; their ratio says what the Python around the physics
costs.

    python benchmarks/bench_ur5e_env.py --task ur5e-peg --envs 16,32 --hz 5,10 [--json OUT]

Each number is the median over ``--repeats`` timed runs of ``--steps`` control steps.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import numpy as np

from simdist import make_task


def run(task_name: str, envs: int, hz: int, steps: int, seed: int) -> dict[str, float]:
    """One timed run: env-steps/s of the closed loop and of its physics alone."""
    task = make_task(task_name, profile=None, control_hz=hz)
    env = task.make_env(envs, seed, real=False)
    expert = task.builtin_agent("expert")  # the scripted expert at the task's control rate
    physics = [0.0]
    step = env.batch.step

    def timed_step(*args, **kwargs):
        t = time.perf_counter()
        try:
            return step(*args, **kwargs)
        finally:
            physics[0] += time.perf_counter() - t

    env.batch.step = timed_step  # type: ignore[method-assign]
    obs = env.reset(seed=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        res = env.step(expert(obs))
        obs = res.obs
        done = np.flatnonzero(res.terminated | res.truncated)
        if len(done):
            obs = env.reset(ids=done)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    env.close()
    n = envs * steps
    return {"env_steps_per_s": n / wall, "physics_env_steps_per_s": n / physics[0],
            "closed_over_bare": wall / physics[0], "cpu_ms_per_env_step": 1000 * cpu / n,
            "us_per_mj_step_per_thread": 1e6 * physics[0] * 2 / (n * round(1 / (hz * 0.002)))}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--task", default="ur5e-peg")
    p.add_argument("--envs", default="16,32")
    p.add_argument("--hz", default="5,10")
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="write the results here")
    args = p.parse_args()
    rows = []
    for hz in (int(h) for h in args.hz.split(",")):
        for envs in (int(b) for b in args.envs.split(",")):
            runs = [run(args.task, envs, hz, args.steps, args.seed + r) for r in range(args.repeats)]
            row = {"task": args.task, "control_hz": hz, "envs": envs,
                   **{k: statistics.median(r[k] for r in runs) for k in runs[0]}}
            rows.append(row)
            print(f"{args.task} {hz:>2} Hz, B={envs:>3}: {row['env_steps_per_s']:7.0f} env-steps/s closed loop, "
                  f"{row['physics_env_steps_per_s']:7.0f} bare stepping (x{row['closed_over_bare']:.2f}), "
                  f"{row['us_per_mj_step_per_thread']:.1f} us per mj_step per thread", flush=True)
    meta = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "load_1min": os.getloadavg()[0], "steps": args.steps, "repeats": args.repeats}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
