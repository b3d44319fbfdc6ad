"""Datasets generated in parts, by one process or by many independent workers.

A generation run is split into parts (``out/part-NNNN``, each one engine run with its own seed
:func:`part_seed` and its own range of episode ids, so ids and seeds are unique over the whole dataset);
``out/generate.json`` records the configuration and the finished parts, and after every part
``out/dataset.json`` indexes the finished parts' shards with their merged statistics (the exact Chan merge
of :class:`~simdist.data.stats.RunningStats`), so ``out`` reads as one dataset folder. Rerunning resumes:
finished parts are skipped, an interrupted one is replayed.

**Workers.** :func:`run_parts` with ``rank``/``world`` runs the parts ``k`` with ``k % world == rank``.
Workers share nothing but the folder: each writes only its own parts, and the read-modify-write of
``generate.json`` and ``dataset.json`` happens under an exclusive lock on ``out/.generate.lock``
(``fcntl.flock``), so the last worker to finish leaves the index of every part. Any launcher that starts N
processes with a rank works; the documented one is ``torchrun`` (it ships with torch, sets ``RANK`` and
``WORLD_SIZE``, spans nodes with ``--nnodes`` and restarts failed workers), and a SLURM array's
``SLURM_ARRAY_TASK_ID`` / ``SLURM_ARRAY_TASK_COUNT`` are read too (:func:`worker_share`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from simdist.data.schema import SCHEMA_VERSION, DatasetSpec, json_default
from simdist.errors import InputError
from simdist.fsutil import atomic_write_json, inside, remove_stale_temporaries

STATE_FILE = "generate.json"
LOCK_FILE = ".generate.lock"
#: keys of a part's engine summary that describe the invocation (kept under ``session`` in generate.json)
SESSION_KEYS = ("skipped_existing", "written_episodes", "written_transitions", "seconds", "transitions_per_s",
                "simulated_transitions", "cpu_seconds", "wall_seconds", "out_dir")
#: ``run_part(part, seed, folder, budget, first_episode_id) -> the engine's summary``
RunPart = Callable[[int, int, Path, int, int], dict[str, Any]]


def part_seed(seed: int, part: int) -> int:
    """Independent 32-bit seed of part ``part`` of a run with base ``seed``."""
    return int(np.random.SeedSequence([int(seed), int(part)]).generate_state(1)[0])


def part_budgets(transitions: int, part_size: int | None, parts: int | None = None) -> list[int]:
    """The transition budget of every part: ``parts`` equal parts, else parts of about ``part_size``
    (0 or None: one part); they sum to ``transitions``."""
    if parts is not None and parts < 1:
        raise ValueError(f"--parts must be >= 1, got {parts}")
    n = parts if parts is not None else (max(1, math.ceil(transitions / part_size)) if part_size else 1)
    return [transitions // n + (k < transitions % n) for k in range(n)]


def first_episode_id(budgets: list[int], part: int, num_envs: int = 1) -> int:
    """Part ``part``'s first episode id: the ids the parts before it can use. A part with budget b on
    ``num_envs`` envs finishes at most b - 1 + num_envs episodes (each has at least one transition, and the
    last step may end one per env), so the ranges never overlap, whatever the episodes' lengths."""
    return int(sum(budgets[:part]) + part * max(0, num_envs - 1))


def worker_share(rank: int | None = None, world: int | None = None) -> tuple[int, int]:
    """(rank, world size) of this generation worker: as given, else ``RANK``/``WORLD_SIZE`` (torchrun), else
    a SLURM array's task id and count, else (0, 1)."""
    env = os.environ
    if rank is None and world is None:
        if "RANK" in env and "WORLD_SIZE" in env:
            rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
        elif "SLURM_ARRAY_TASK_ID" in env and "SLURM_ARRAY_TASK_COUNT" in env:
            rank = int(env["SLURM_ARRAY_TASK_ID"]) - int(env.get("SLURM_ARRAY_TASK_MIN", 0))
            world = int(env["SLURM_ARRAY_TASK_COUNT"])
        else:
            rank, world = 0, 1
    if rank is None or world is None:
        raise ValueError("give both --rank and --world-size, or neither")
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"--rank must be in [0, --world-size={world}), got {rank}")
    return rank, world


@contextlib.contextmanager
def folder_lock(out: Path) -> Iterator[None]:
    """An exclusive lock on ``out/.generate.lock`` (blocks until the other workers release it)."""
    with open(out / LOCK_FILE, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def run_parts(out: str | os.PathLike, *, config: dict[str, Any], spec: DatasetSpec | None, budgets: list[int],
              run_part: RunPart, seed: int, num_envs: int, rank: int = 0, world: int = 1,
              metadata: dict[str, Any] | None = None,
              state_extra: dict[str, Any] | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Generate (or resume) this worker's parts of the run ``config`` in ``out``; returns the summary of every
    part finished so far (all of them once the last worker is done).

    ``config`` (JSON-able; stored in ``generate.json``) must equal the stored one, else the folder holds a
    different run. ``run_part`` runs one engine call on ``num_envs`` envs; its summary is kept per part in
    ``generate.json``. ``spec`` None: the index takes the first part's.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    config = json.loads(json.dumps({**config, "parts": len(budgets), "part_budgets": budgets}, default=json_default))
    mine = [k for k in range(len(budgets)) if k % world == rank]
    for k in mine:  # what a killed run of this worker left mid-write
        if (out / f"part-{k:04d}").exists():
            remove_stale_temporaries(out / f"part-{k:04d}")
    with folder_lock(out):
        remove_stale_temporaries(out)  # generate.json / dataset.json temporaries are written under the lock
        state = _read_state(out, config)
        state.update(state_extra or {})
        atomic_write_json(out / STATE_FILE, state, default=json_default)
    meta = metadata or {}
    t0, c0 = time.perf_counter(), time.process_time()
    done_now = 0
    todo = [k for k in mine if f"part-{k:04d}" not in state["parts"]]
    for i, k in enumerate(todo):
        name, s = f"part-{k:04d}", part_seed(seed, k)
        log(f"[{name}] worker {rank}/{world}, {i + 1}/{len(todo)}: {budgets[k]:,} transitions, seed {s}")
        pt, pc = time.perf_counter(), time.process_time()
        summary = run_part(k, s, out / name, budgets[k], first_episode_id(budgets, k, num_envs))
        summary["cpu_seconds"] = time.process_time() - pc
        summary["wall_seconds"] = time.perf_counter() - pt
        summary["session"] = {key: summary.pop(key) for key in SESSION_KEYS if key in summary}
        with folder_lock(out):
            state = _read_state(out, config)
            state["parts"][name] = summary
            atomic_write_json(out / STATE_FILE, state, default=json_default)
            write_index(out, spec, sorted(state["parts"]), {"generator": state["config"], **meta})
        done_now += int(summary["session"].get("simulated_transitions", 0))
        elapsed = time.perf_counter() - t0
        left = sum(budgets[j] for j in todo[i + 1:])
        rate = done_now / max(elapsed, 1e-9)
        eta = f", ETA {left / rate / 60:.1f} min" if left and rate else ""
        log(f"[{name}] {summary['transitions']:,} transitions in {summary['episodes']:,} episodes "
            f"({summary['session'].get('skipped_existing', 0)} already written by an interrupted run), "
            f"{summary['dropped']} dropped, {summary['session'].get('transitions_per_s', 0):,.0f} simulated tr/s{eta}")
    with folder_lock(out):
        state = _read_state(out, config)
        if state["parts"]:
            write_index(out, spec, sorted(state["parts"]), {"generator": state["config"], **meta})
        result = summarize(state, wall=time.perf_counter() - t0, cpu=time.process_time() - c0, simulated=done_now)
        result["worker"] = {"rank": rank, "world": world, "parts": mine}
        state["summary"] = result
        atomic_write_json(out / STATE_FILE, state, default=json_default)
    return result


def run_in_parts_or_once(out: str | os.PathLike, run: Callable[[Path, int, int, int], dict[str, Any]], *,
                         parts: int | None, transitions: int, seed: int, num_envs: int, config: dict[str, Any],
                         rank: int = 0, world: int = 1, metadata: dict[str, Any] | None = None,
                         log: Callable[[str], None] = print) -> dict[str, Any]:
    """``run(folder, budget, seed, first_episode_id)`` once into ``out`` (``parts`` None: the engine's summary),
    or ``parts`` equal parts of it, this worker's share, through :func:`run_parts`."""
    if parts is None:
        return run(Path(out), transitions, seed, 0)
    return run_parts(out, config=config, spec=None, budgets=part_budgets(transitions, None, parts),
                     run_part=lambda k, s, folder, budget, first: run(folder, budget, s, first), seed=seed,
                     num_envs=num_envs, rank=rank, world=world, metadata=metadata, log=log)


def _read_state(out: Path, config: dict[str, Any]) -> dict[str, Any]:
    """``generate.json`` (a new one for ``config`` if absent); a different stored run is an error."""
    path = out / STATE_FILE
    state = json.loads(path.read_text()) if path.exists() else {"config": config, "parts": {}}
    if state["config"] != config:
        diff = {k: (state["config"].get(k), v) for k, v in config.items() if state["config"].get(k) != v}
        raise InputError(f"{out} holds a different generation run (stored, requested): {diff}; use another --out")
    for name in state["parts"]:
        inside(out, name, f"{path}: key 'parts.{name}'")
    return state


def write_index(out: Path, spec: DatasetSpec | None, parts: list[str], metadata: dict[str, Any]) -> None:
    """Write ``out/dataset.json`` listing the shards of the finished ``parts`` (merged statistics; ``spec``
    None: the first part's)."""
    from simdist.data.shards import DATASET_INFO, FORMAT_NAME, read_dataset_info
    from simdist.data.stats import RunningStats

    shards, dropped, acc = [], 0, RunningStats()
    infos = [read_dataset_info(out / part) for part in parts]
    spec_dict = json.loads(json.dumps(spec.to_dict())) if spec is not None else infos[0]["spec"]
    for part, info in zip(parts, infos):
        if info["spec"] != spec_dict:
            raise ValueError(f"{out / part}: spec {info['spec']} differs from the run's {spec_dict}")
        shards += [{**sh, "name": f"{part}/{sh['name']}"} for sh in info["shards"]]
        dropped += int(info.get("dropped_episodes", 0))
        acc.merge(RunningStats.from_state_dict(info.get("stats_state", {})))
    index = {
        "format": FORMAT_NAME, "schema_version": SCHEMA_VERSION, "spec": spec_dict, "prefix": "episodes",
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
