"""What a value continuation costs with and without stepping only the rows still running.

Batches of 16 peg simulations (four by default) in the training simulator are driven 20 steps by the scripted expert
with N(0, 0.5²) action noise (a perturbed data-engine state), cloned, and labelled twice by the task's expert
continuation (``StateCloning.true_returns`` with no prefix: the scripted expert until each episode ends): once as the
library does now (``active``: finished rows stop costing physics), once with every row stepped to the end (the
earlier behaviour, by making ``active`` always None for the run). Prints the rows still running along the
continuation, both CPU times and the largest label difference (0: the same labels), and writes them as JSON:

    python -m results.ur5e.analysis.continuation_cost --json results/ur5e/analysis/continuation-cost.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from simdist import make_task
from simdist.data import atomic_write_json


def perturbed_states(task: Any, envs: int, seed: int) -> Any:
    """``envs`` simulations after 20 steps of the scripted expert with N(0, 0.5²) action noise, cloned."""
    env = task.make_env(envs, seed, real=True)
    obs = env.reset(seed=seed)
    expert, rng = task.builtin_agent("expert"), np.random.default_rng(seed)
    expert.reset()
    for _ in range(20):
        noisy = np.asarray(expert(obs)) + rng.normal(0.0, 0.5, (envs, 7))
        obs = env.step(np.clip(noisy, -1, 1).astype(np.float32)).obs
    states = task.snapshot_states(env, np.arange(envs))
    env.close()
    return states, type(env)


def label(task: Any, states: Any, envs: int, seed: int, cls: type, every_row: bool) -> tuple[np.ndarray, float, list]:
    """The continuation labels of ``states``, their CPU seconds and the rows stepped at each step."""
    running: list[int] = []
    step = cls.step

    def counted(self: Any, actions: np.ndarray) -> Any:
        running.append(self.num_envs if self.active is None else int(np.sum(self.active)))
        return step(self, actions)

    cls.step = counted
    if every_row:  # the earlier behaviour: ``active`` always None, every row steps
        cls.active = property(lambda self: None, lambda self, value: None)
    try:
        start = time.process_time()
        out = task.true_returns(states, np.arange(envs), np.zeros((envs, 0, 7), np.float32), gamma=0.99, seed=seed)
        return out, time.process_time() - start, running
    finally:
        cls.step = step
        if every_row:
            del cls.active


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--envs", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batches", type=int, default=4, help="batches, seeded seed, seed + 1, ...")
    p.add_argument("--json", required=True)
    args = p.parse_args()
    task = make_task("ur5e-peg", profile="sim")
    active_s = every_s = worst = 0.0
    active_steps = every_steps = 0
    traces = []
    for seed in range(args.seed, args.seed + args.batches):
        states, cls = perturbed_states(task, args.envs, seed)
        active, cpu, running = label(task, states, args.envs, seed, cls, every_row=False)
        active_s, active_steps = active_s + cpu, active_steps + sum(running)
        traces.append(running[::10])
        every, cpu, running = label(task, states, args.envs, seed, cls, every_row=True)
        every_s, every_steps = every_s + cpu, every_steps + sum(running)
        worst = max(worst, float(np.abs(active - every).max()))
    result = {"rows": args.envs, "batches": args.batches, "running_every_10_steps": traces,
              "row_steps_active": active_steps, "row_steps_every_row": every_steps, "cpu_s_active": active_s,
              "cpu_s_every_row": every_s, "speedup": every_s / active_s, "max_label_difference": worst,
              "command": "python -m results.ur5e.analysis.continuation_cost " + " ".join(sys.argv[1:])}
    for trace in traces:
        print(f"{args.envs} rows; running every 10 steps: {trace}")
    print(f"CPU s: {active_s:.2f} (running rows only) vs {every_s:.2f} (every row), {every_s / active_s:.2f}x; "
          f"row-steps {active_steps} vs {every_steps}; largest label difference {worst:.3g}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out, result)


if __name__ == "__main__":
    main()
