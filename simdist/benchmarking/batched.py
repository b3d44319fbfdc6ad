"""The ``paper-batched`` section of ``simdist bench``: the paper's planner as the protocol acts with it (the
task's paper preset acting as the released code does, no ensembling), one tick for 1, 4, 8, 16, ... envs at once, eager
and under each ``--compile`` mode, against the fp32 matrix-product floor measured in the same run
(:mod:`simdist.benchmarking.floor`).

Each row: the median and p99 wall time of one batched tick, its CPU time, env-ticks per second of wall and of
CPU time, the floor (the tick's executed FLOP at the GEMM rate its own linear layers' shapes reach here, on the
row's threads) and the ratio of the median tick to it, the same in CPU seconds (``floor_cpu_ms``, the GEMM rate
per CPU second; ``cpu_floor_ratio``: the tick's CPU time over it, which a shared machine's load barely moves),
and the 1-minute load average when the row finished.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import torch

from simdist.benchmarking.floor import gemm_rate, gemm_shapes
from simdist.benchmarking.measure import load_average, random_history, time_calls
from simdist.benchmarking.planning import executed_flops, paper_settings, planner_row, time_compiled

SECTION = "paper-batched"


def protocol_settings(args: Any) -> dict[str, Any]:
    """The paper planner as the protocol acts with it: ``paper_settings`` with the settings that act as the
    released code does (its schema's ``released_code``: MPPI's official initial mean)."""
    from simdist.planning.settings import planner_class

    settings = paper_settings(args)
    schema = getattr(planner_class(settings.get("planner", "mppi")), "config_class", None)
    return {**settings, **getattr(schema, "released_code", {})}


def scoring_gemm_rate(wm: Any, settings: dict[str, Any], envs: int, threads: int | None) -> dict[str, float]:
    """The GEMM rate (:func:`~simdist.benchmarking.floor.gemm_rate`) at the shapes of one scoring iteration of
    ``envs`` envs (recorded on the calling thread; later iterations repeat the same shapes)."""
    from simdist.planning.base import build_planner

    probe = build_planner(wm, {**settings, "iterations": 1, "parallel_chunks": False, "compile": False})
    score = probe.executor.score_fn
    recorded: list[Any] = []

    def recording(*a: Any) -> Any:
        out: list[Any] = []
        recorded.append(gemm_shapes(lambda: out.append(score(*a))))
        return out[0]

    probe.executor.score_fn = recording
    probe.plan(random_history(wm, envs))
    shapes = sum(recorded[1:], recorded[0])
    return gemm_rate(shapes, threads)


def bench_paper_batched(wm: Any, args: Any, threads: int | None, device: torch.device) -> list[dict[str, Any]]:
    """The section's rows at one thread count: per env count, eager then each compile mode."""
    from simdist.planning.base import build_planner

    settings = protocol_settings(args)
    rows: list[dict[str, Any]] = []
    reference = build_planner(wm, settings)
    per_env = executed_flops(wm, reference)
    size = reference.budget_label
    for envs in args.batched_envs:
        history = random_history(wm, envs)
        rate = scoring_gemm_rate(wm, settings, envs, threads) if device.type == "cpu" else None
        floor_s = per_env * envs / (rate["gflops"] * 1e9) if rate else None
        floor_cpu_s = per_env * envs / (rate["gflops_per_cpu_s"] * 1e9) if rate else None
        variants: list[tuple[str, Any]] = [("eager", None), *((f"compile={m}", m) for m in args.compile_modes)]
        for label, mode in variants:
            extra: dict[str, Any] = {}
            if mode is None:
                planner = build_planner(wm, settings)
                timing = time_calls(partial(planner.plan, history), args.batched_repeats, args.warmup, device)
            else:
                timing, extra["compile_s"] = time_compiled(wm, settings, mode, history, args.batched_repeats,
                                                           args.warmup, device)
            wall, cpu, load = timing["wall"]["median"], timing["cpu"]["median"], load_average()
            rows.append(planner_row(
                SECTION, f"{label} x{envs} envs", threads, timing, envs=envs,
                env_ticks_per_s=envs / wall, env_ticks_per_cpu_s=envs / cpu,
                gflops=per_env * envs / wall / 1e9,
                gemm_gflops=rate["gflops"] if rate else None,
                floor_ms=1e3 * floor_s if floor_s else None,
                floor_ratio=wall / floor_s if floor_s else None,
                floor_cpu_ms=1e3 * floor_cpu_s if floor_cpu_s else None,
                cpu_floor_ratio=cpu / floor_cpu_s if floor_cpu_s else None,
                load_1min=load[0] if load else None, planner=size, **extra))
    return rows
