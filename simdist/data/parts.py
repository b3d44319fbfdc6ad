"""Datasets generated in parts: per-part seeds, the merged index over finished parts, run summaries.

A long generation run is split into parts (``out/part-NNNN``, each one engine run with its own seed);
``out/generate.json`` records the configuration and the finished parts, and after every part
``out/dataset.json`` indexes the finished parts' shards with their merged statistics, so ``out`` reads as
one dataset folder. Rerunning resumes: finished parts are skipped, the interrupted one is replayed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from simdist.data.schema import SCHEMA_VERSION, DatasetSpec, json_default
from simdist.fsutil import atomic_write_json

STATE_FILE = "generate.json"


def part_seed(seed: int, part: int) -> int:
    """Independent 32-bit seed of part ``part`` of a run with base ``seed``."""
    return int(np.random.SeedSequence([int(seed), int(part)]).generate_state(1)[0])


def write_index(out: Path, spec: DatasetSpec, parts: list[str], metadata: dict[str, Any]) -> None:
    """Write ``out/dataset.json`` listing the shards of the finished ``parts`` (merged statistics)."""
    from simdist.data.shards import DATASET_INFO, FORMAT_NAME, read_dataset_info
    from simdist.data.stats import RunningStats

    shards, dropped, acc = [], 0, RunningStats()
    for part in parts:
        info = read_dataset_info(out / part)
        shards += [{**sh, "name": f"{part}/{sh['name']}"} for sh in info["shards"]]
        dropped += int(info.get("dropped_episodes", 0))
        acc.merge(RunningStats.from_state_dict(info.get("stats_state", {})))
    index = {
        "format": FORMAT_NAME, "schema_version": SCHEMA_VERSION, "spec": spec.to_dict(), "prefix": "episodes",
        "shards": shards, "dropped_episode_ids": [], "metadata": {**metadata, "parts": parts},
        "num_episodes": sum(sh["episodes"] for sh in shards), "num_steps": sum(sh["steps"] for sh in shards),
        "dropped_episodes": dropped, "stats": acc.finalize().to_dict(), "stats_state": acc.state_dict(),
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    atomic_write_json(out / DATASET_INFO, index, default=json_default)


def summarize(state: dict[str, Any], wall: float, cpu: float, simulated: int) -> dict[str, Any]:
    """Totals over all parts plus this invocation's throughput."""
    parts = state["parts"].values()
    written = sum(p["transitions"] for p in parts)
    w = max(written, 1)
    return {
        "parts_done": len(state["parts"]), "parts": state["config"]["parts"],
        "transitions": written, "episodes": sum(p["episodes"] for p in parts),
        "dropped_diverged": sum(p["dropped"] for p in parts),
        "discarded_unfinished": sum(p["discarded_unfinished"] for p in parts),
        "expert_fraction": sum(p["expert_fraction"] * p["transitions"] for p in parts) / w,
        "noised_fraction": sum(p["noised_fraction"] * p["transitions"] for p in parts) / w,
        "expert_episode_fraction": sum(p["expert_episode_fraction"] * p["episodes"] for p in parts)
        / max(sum(p["episodes"] for p in parts), 1),
        "session": {"wall_s": wall, "cpu_s": cpu, "simulated_transitions": simulated,
                    "simulated_per_s": simulated / max(wall, 1e-9),
                    "simulated_per_cpu_s": simulated / max(cpu, 1e-9)},
    }
