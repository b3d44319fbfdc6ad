"""How many MPPI sequences per ``imagine`` call suit the toy's tiny model: ``python -m results.toy.lag.chunks MODEL``.

Evaluates a toy world model's MPPI agent (128 samples x 4 iterations, 16 envs, one torch thread) on the ``lag``
profile at several ``score_chunk`` sizes and prints each one's wall-clock seconds and mean return (the same
returns mean the same plans); docs/speed.md records a run.
"""

from __future__ import annotations

import argparse
import time

import torch

import simdist


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a toy world-model folder, e.g. outputs/toy-lag/ref-s0/toy-sim")
    parser.add_argument("--chunks", default="128,1024,4096", help="score_chunk sizes to time")
    parser.add_argument("--trials", type=int, default=16)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = simdist.WorldModel.from_pretrained(args.model).eval()
    task = simdist.make_task("toy-reach", profile="lag")
    print("| score_chunk | seconds | mean return |\n|---|---|---|")
    for chunk in (int(c) for c in args.chunks.split(",")):
        agent = simdist.create("agent", "simdist", world_model=model).with_settings(
            planner="mppi", num_samples=128, iterations=4, num_elites=16, seed=0, score_chunk=chunk)
        started = time.perf_counter()
        result = task.evaluate(agent, trials=args.trials, seed=0, num_envs=16)
        print(f"| {chunk} | {time.perf_counter() - started:.1f} | {result.estimate().mean:.6f} |", flush=True)


if __name__ == "__main__":
    main()
