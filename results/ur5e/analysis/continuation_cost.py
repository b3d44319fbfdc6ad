"""What a value continuation costs with and without stepping only the rows still running.

One batch of 16 peg simulations is driven 20 steps by the scripted expert with N(0, 0.5²) action noise (a
perturbed data-engine state), cloned, and labelled twice by :func:`continuation_returns`: once as the data
engine does (``UR5eEnv.active``: finished rows stop costing physics), once with every row stepped to the end
(the earlier behaviour). Prints the rows still running along the continuation, both times and the largest
label difference (0: the same labels), and writes them as JSON:

    python results/ur5e/analysis/continuation_cost.py --json results/ur5e/analysis/continuation-cost.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from simdist.components.tasks.ur5e import value as V
from simdist.components.tasks.ur5e.assembly import PegAssembly
from simdist.components.tasks.ur5e.env import ArmEnvConfig, UR5eEnv
from simdist.components.tasks.ur5e.expert import make_expert
from simdist.fsutil import atomic_write_json


class EveryRowEnv(UR5eEnv):
    """The env with ``active`` ignored: every row steps, as before the option."""

    @property
    def active(self) -> None:
        return None

    @active.setter
    def active(self, value: Any) -> None:
        pass


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--envs", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", required=True)
    args = p.parse_args()
    env = UR5eEnv(PegAssembly(), args.envs, ArmEnvConfig(nthread=1), seed=args.seed)
    obs = env.reset(seed=args.seed)
    expert, rng = make_expert(PegAssembly()), np.random.default_rng(args.seed)
    expert.reset()
    for _ in range(20):
        noisy = expert(obs) + rng.normal(0.0, 0.5, (args.envs, 7))
        obs = env.step(np.clip(noisy, -1, 1).astype(np.float32)).obs
    snap = V.snapshot(env, np.arange(args.envs))
    env.close()
    running: list[int] = []
    accumulate = V._accumulate

    def counting(env: Any, step: Any, ret: Any, disc: Any, alive: np.ndarray, gamma: float) -> None:
        accumulate(env, step, ret, disc, alive, gamma)
        running.append(int(alive.sum()))

    def label(cls: type) -> tuple[np.ndarray, float]:
        start = time.process_time()
        out = V.continuation_returns(lambda n, s: cls(PegAssembly(), n, ArmEnvConfig(nthread=1), seed=s),
                                     lambda: make_expert(PegAssembly()), snap, batch=args.envs)
        return out, time.process_time() - start

    V._accumulate = counting
    active, active_s = label(UR5eEnv)
    V._accumulate = accumulate
    every, every_s = label(EveryRowEnv)
    row_steps = int(sum(running))
    result = {"rows": args.envs, "steps": len(running), "running_every_10_steps": running[::10],
              "row_steps_active": row_steps, "row_steps_every_row": args.envs * len(running),
              "cpu_s_active": active_s, "cpu_s_every_row": every_s, "speedup": every_s / active_s,
              "max_label_difference": float(np.abs(active - every).max()),
              "command": "python results/ur5e/analysis/continuation_cost.py " + " ".join(sys.argv[1:])}
    print(f"{args.envs} rows, {len(running)} steps; running every 10 steps: {running[::10]}")
    print(f"CPU s: {active_s:.2f} (running rows only) vs {every_s:.2f} (every row), {every_s / active_s:.2f}x; "
          f"row-steps {row_steps} vs {args.envs * len(running)}; largest label difference "
          f"{result['max_label_difference']:.3g}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out, result)


if __name__ == "__main__":
    main()
