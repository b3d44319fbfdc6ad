"""Planner benchmarks: the analytic and executed FLOP of scoring action sequences, and the ``mppi``, ``naive``,
``realtime`` and ``envs`` sections of ``simdist bench`` (:mod:`simdist.tools.bench` describes them).

FLOP per scored sequence (width D, horizon T, context L, MLP factor f, action A, command C): dynamics ``2TAD +
Σ_layers [2TD²(6 + 2f) + 4T²D + 4TLD]``, each head ``2TFD + 2TD + Σ_layers [2TD²(4 + 2f) + 4T²D]`` (F = its
input width). For the default task's official model that is 12.45 MFLOP, so a paper tick (472 × 8 sequences)
is 47.0 GFLOP, counted here with ``torch.utils.flop_counter`` plus attention: the nominal work per tick
(``gflop_per_tick``). The fast planner executes less (``gflop_executed``: the value head at the last position
only, the fixed policy samples scored once per tick), so ``gflops`` is the executed work per second (the
hardware efficiency) and ``gflops_nominal`` the nominal work per second.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import torch

from simdist.benchmarking.measure import random_history, time_calls
from simdist.planning.base import planner_preset


# ---------------------------------------------------------------------- FLOP count
def imagine_flops(wm: Any, samples: int = 4, last_value_only: bool = False) -> float:
    """FLOP of scoring one action sequence (dynamics + reward + value heads; the context is shared).

    ``last_value_only``: the value head at the last position only, as the fast planner runs it. Matrix
    products are counted by ``torch.utils.flop_counter``; attention (which it does not count on CPU) as
    4·Tq·Tk·D per call, causal masks not discounted.
    """
    from torch.utils.flop_counter import FlopCounterMode

    from simdist.model.nn import MultiHeadAttention

    attention = [0]

    def hook(mod: MultiHeadAttention, args: tuple, kwargs: dict, out: torch.Tensor) -> None:
        x = args[0]
        kv = kwargs.get("kv")
        context = args[1] if len(args) > 1 else kwargs.get("context")
        tk = kv[0].shape[-2] if kv is not None else (context if context is not None else x).shape[-2]
        attention[0] += 4 * x.shape[:-1].numel() * tk * x.shape[-1]

    cfg = wm.config
    device = wm.device
    obs = {k: torch.zeros(1, cfg.history + 1, *s, device=device) for k, s in cfg.obs_spec.items()}
    act = torch.zeros(1, cfg.history, cfg.action_dim, device=device)
    cmd = torch.zeros(1, cfg.command_dim, device=device) if cfg.command_dim else None
    actions = torch.zeros(1, samples, cfg.horizon, cfg.action_dim, device=device)
    handles = [m.register_forward_hook(hook, with_kwargs=True) for m in wm.modules()
               if isinstance(m, MultiHeadAttention)]
    try:
        with torch.no_grad():
            enc = wm.encode(obs, act)
            prepared = wm.dynamics.prepare(enc)
            attention[0] = 0
            with FlopCounterMode(display=False) as counter:
                wm.imagine(enc, actions, cmd, prepared=prepared, last_value_only=last_value_only)
    finally:
        for h in handles:
            h.remove()
    counted = sum(v for op, v in counter.get_flop_counts().get("Global", {}).items()
                  if "attention" not in str(op))
    return (counted + attention[0]) / samples


def executed_flops(wm: Any, planner: Any) -> float:
    """FLOP the fast MPPI path runs per tick: the value head at the last position only, and the fixed
    base-policy samples scored in the first iteration only."""
    per_seq = imagine_flops(wm, last_value_only=True)
    return per_seq * planner.scored_sequences_per_tick


# ---------------------------------------------------------------------- sections
def planner_row(section: str, setting: str, threads: int | None, timing: dict[str, Any], **extra: Any
                ) -> dict[str, Any]:
    return {"section": section, "setting": setting, "threads": threads,
            "median_ms": 1e3 * timing["wall"]["median"], "p99_ms": 1e3 * timing["wall"]["p99"],
            "cpu_ms": 1e3 * timing["cpu"]["median"], "n": timing["wall"]["n"], **extra}


def flop_rates(flop: float, executed: float, timing: dict[str, Any]) -> dict[str, float]:
    """Nominal and executed GFLOP per tick and per second of median wall time."""
    wall = timing["wall"]["median"]
    return {"gflop_per_tick": flop / 1e9, "gflop_executed": executed / 1e9, "gflops": executed / 1e9 / wall,
            "gflops_nominal": flop / 1e9 / wall}


def time_compiled(wm: Any, settings: dict[str, Any], mode: Any, history: dict[str, Any], repeats: int,
                  warmup: int, device: torch.device) -> tuple[dict[str, Any], float]:
    """The planner of ``build_planner`` ``settings`` with ``compile=mode``: the timings of its ticks, and the
    first (compiling) tick's seconds."""
    from simdist.planning.base import build_planner

    planner = build_planner(wm, {**settings, "compile": mode})
    t0 = time.perf_counter()
    planner.plan(history)
    compile_s = time.perf_counter() - t0
    return time_calls(lambda: planner.plan(history), repeats, warmup, device), compile_s


def paper_settings(args: Any) -> dict[str, Any]:
    """The task's paper planner preset (``Task.planner_preset``: ``paper`` for legged locomotion,
    ``manipulation`` for the arm) as ``build_planner`` settings, with the ``--planner.KEY VALUE`` overrides
    applied (``args.planner_overrides``)."""
    return planner_preset(args.planner_preset, **(getattr(args, "planner_overrides", None) or {}))


def bench_planners(wm: Any, args: Any, threads: int | None, device: torch.device) -> list[dict[str, Any]]:
    """The ``mppi``, ``naive``, ``realtime`` and ``envs`` sections at one thread count."""
    from simdist.planning.base import build_planner

    rows: list[dict[str, Any]] = []
    paper, realtime = paper_settings(args), planner_preset("realtime")
    history = random_history(wm, 1)
    per_seq = imagine_flops(wm)
    if "mppi" in args.sections or "naive" in args.sections:
        fast = build_planner(wm, paper)
        flop = per_seq * fast.sequences_per_tick  # the nominal work: every sequence of every iteration, full heads
        executed = executed_flops(wm, fast)
        timing = time_calls(lambda: fast.plan(history), args.repeats, args.warmup, device)
        rows.append(planner_row(
            "mppi", fast.budget_label, threads, timing,
            **flop_rates(flop, executed, timing), gflops_per_cpu_s=executed / 1e9 / timing["cpu"]["median"],
            meets_control_period_p99=timing["wall"]["p99"] <= args.control_period))
        for mode in args.compile_modes:
            timing, compile_s = time_compiled(wm, paper, mode, history, args.repeats, args.warmup, device)
            rows.append(planner_row("mppi", f"compile={mode}", threads, timing, compile_s=compile_s,
                                    **flop_rates(flop, executed, timing)))
        if "naive" in args.sections:
            naive = build_planner(wm, {**paper, "planner": "mppi_naive"})
            timing = time_calls(lambda: naive.plan(history), args.naive_repeats, 1, device)
            fast.reset(seed=paper["seed"])
            naive.reset(seed=paper["seed"])
            a, b = fast.plan(history), naive.plan(history)
            fast_ms = rows[0]["median_ms"] if rows and rows[0]["section"] == "mppi" else float("nan")
            rows.append(planner_row(
                "naive", "official structure", threads, timing,
                speedup=1e3 * timing["wall"]["median"] / fast_ms,
                max_abs_plan_diff=float((a.plan - b.plan).abs().max()),
                max_abs_return_diff=float((a.returns - b.returns).abs().max())))
    if "realtime" in args.sections:
        # as deployed (its thread choice calibrated in the warm-up ticks), then on the caller's threads
        for tick_threads in (realtime.get("tick_threads"), None):
            rt = build_planner(wm, {**realtime, "tick_threads": tick_threads})
            timing = time_calls(partial(rt.plan, history), args.realtime_repeats, 50, device)
            report = rt.thread_report
            size = rt.budget_label
            rows.append(planner_row(
                "realtime", f"{size} te={realtime['temporal_ensemble']} threads={tick_threads or 'caller'}", threads,
                timing,
                meets_20ms_p99=1e3 * timing["wall"]["p99"] <= 20.0,
                tick_threads_chosen=report.get("chosen", threads if tick_threads is None else tick_threads),
                calibration_p90_ms=report.get("p90_ms")))
            if tick_threads is None:
                break
        for mode in args.compile_modes:
            timing, compile_s = time_compiled(wm, realtime, mode, history, args.realtime_repeats, 10, device)
            rows.append(planner_row("realtime", f"compile={mode}", threads, timing, compile_s=compile_s,
                                    meets_20ms_p99=1e3 * timing["wall"]["p99"] <= 20.0))
    if "envs" in args.sections:
        preset = realtime if args.envs_preset == "realtime" else paper
        for envs in args.envs:
            planner = build_planner(wm, preset)
            hist = random_history(wm, envs)
            repeats = max(3, args.repeats // max(1, envs // 8))
            timing = time_calls(partial(planner.plan, hist), repeats, 1, device)
            rows.append(planner_row(
                "envs", f"{args.envs_preset} x{envs} envs", threads, timing,
                ticks_per_s=1.0 / timing["wall"]["median"], env_ticks_per_s=envs / timing["wall"]["median"]))
    return rows
