"""The adaptation loop's real-data collection in 1 and N worker processes (``simdist adapt --collection.workers N``)
on the toy task: wall and CPU seconds for the same data, and a check that the data are the same.

    python -m results.collection.measure [--workers 2] [--minutes 1.0] [--samples 256]

A tiny seeded toy-reach world model (built here, untrained: the planner's cost per step is what matters) logs
``--minutes`` of toy data (10 Hz, 60-step episodes) one env at a time (``--num_envs 1``) with an MPPI budget of
``--samples`` samples x 2 iterations, once per worker count; the episodes (ids, arrays, meta) are compared. Writes
``results/collection/toy.json`` (atomically) and prints it. Run from the repository root; report the machine's load
beside the numbers (CPU seconds: parent and workers, from ``resource.getrusage``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).resolve().parent / "toy.json"


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _model(folder: Path) -> str:
    import torch

    from simdist import WorldModel, WorldModelConfig

    mlp = {"name": "mlp", "kwargs": {"hidden": [64, 64]}}
    torch.manual_seed(0)
    model = WorldModel(WorldModelConfig(obs_spec={"state": [4]}, action_dim=2, command_dim=0, history=4, horizon=8,
                                        latent_dim=32, encoder=mlp, dynamics=mlp, reward_head=mlp, value_head=mlp,
                                        policy_head=None))
    return str(model.save_pretrained(folder))


def _collect(agent: str, out: Path, workers: int, minutes: float, samples: int) -> dict[str, Any]:
    from simdist import AdaptationLoop, AdaptConfig, make_task

    cfg = AdaptConfig(schedule=[0.0, minutes], num_envs=1, heldout_episodes=1, seed=5,
                      planner_overrides={"num_samples": samples, "iterations": 2}, collection={"workers": workers})
    loop = AdaptationLoop(agent, make_task("toy-reach"), out, cfg, log=lambda m: None)
    cpu, wall = _cpu(), time.perf_counter()
    loop.collect_until(minutes, loop.base, stage=1)
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    episodes = loop.episodes(loop.data_dir)
    return {"workers": workers, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "episodes": len(episodes),
            "steps": int(sum(len(e) for e in episodes)), "data": episodes}


def _same(a: list[Any], b: list[Any]) -> bool:
    return [e.episode_id for e in a] == [e.episode_id for e in b] and all(
        x.meta == y.meta and np.array_equal(x.actions, y.actions) and
        all(np.array_equal(x.obs[g], y.obs[g]) for g in x.obs) for x, y in zip(a, b))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--samples", type=int, default=256)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        agent = _model(Path(tmp) / "model")
        runs = [_collect(agent, Path(tmp) / f"run-{w}", w, args.minutes, args.samples) for w in (1, args.workers)]
    same = _same(runs[0].pop("data"), runs[1].pop("data"))
    result = {"command": "python -m results.collection.measure " + " ".join(sys.argv[1:] if argv is None else argv),
              "minutes": args.minutes, "samples": args.samples, "num_envs": 1, "same_data": same, "runs": runs,
              "wall_ratio": round(runs[1]["wall_s"] / runs[0]["wall_s"], 3),
              "cpu_ratio": round(runs[1]["cpu_s"] / runs[0]["cpu_s"], 3), "cores": os.cpu_count(),
              "load_before": os.getloadavg()[0]}
    tmp_out = OUT.with_name(f".{OUT.name}.tmp")
    tmp_out.write_text(json.dumps(result, indent=1) + "\n")
    tmp_out.replace(OUT)
    print(json.dumps(result, indent=1))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
