"""CEM beside MPPI at equal compute (docs/planners.md): the same world model, the same score, the same number of
imagined sequences per tick (samples × iterations + policy samples), on the toy's nominal reach and the Go2's
nominal walk.

    python -m results.planners.cem agents            # the model folders: each base model with each planner.json
    python -m results.planners.cem evaluate          # simdist evaluate of every folder (one result file each)
    python -m results.planners.cem ticks             # time per tick of each task's folders, the planners alternated
    python -m results.planners.cem table             # the table of docs/planners.md from the result files
    python -m results.planners.cem all --dry-run     # what would run

Each planner acts from its folder's ``planner.json`` (the file a user ships), written by ``agents`` from the budget
below; ``evaluate`` is the project's own ``simdist evaluate --json`` on it, with the seeds fixed, one torch thread.
A step whose result file exists is skipped. The toy's base model is the demo's pretraining (the ``toy-model``
step of ``python -m results run planners-cem``); the Go2's is the zoo's ``hub/models/go2-slope``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from results.runner import ROOT, run_result_step, simdist_command, write_json
from simdist import bootstrap_ci, load_agent

OUT = Path("results/planners")
AGENTS = Path("outputs/planners/agents")
#: the base model of each walk
BASE = {"toy": "outputs/planners/toy/toy-sim", "toy-lag": "outputs/planners/toy/toy-sim", "go2": "hub/models/go2-slope",
        "go2-slope": "hub/models/go2-slope"}
#: the budget both planners spend per task: the toy demo's MPPI (128 + 6 × 4, 16 elites, std 2.0, shift warm start:
#: 518 sequences per tick) and the Go2 zoo model's planner.json (the real-time preset, 16 + 2 × 1, 4 elites, std 0.1
#: around the policy's chunk, temporal ensembling 0.8: 18 sequences per tick)
BUDGET: dict[str, dict[str, Any]] = {
    "toy": dict(num_samples=128, num_policy_samples=6, iterations=4, num_elites=16, init_std=2.0, warm_start="shift",
                score_chunk=1024, seed=42),
    "go2": dict(num_samples=16, num_policy_samples=2, iterations=1, num_elites=4, init_std=0.1, warm_start="policy",
                temporal_ensemble=0.8, seed=42),
}
BUDGET["toy-lag"], BUDGET["go2-slope"] = BUDGET["toy"], BUDGET["go2"]
PLANNERS = ("mppi", "cem")
#: each walk's protocol: the toy's reach in nominal simulation (32 trials) and, where the simulation-trained model is
#: wrong, on the ``lag`` profile (docs/plan-ranking.md); the Go2's nominal 10 m walks at 0.5 m/s on flat ground and on
#: the 5.7° slope (10 randomised trials each: docs/go2.md 4.1's walks)
PROTOCOL = {
    "toy": ["--task", "toy-reach", "--profile", "sim", "--trials", "32", "--envs", "16"],
    "toy-lag": ["--task", "toy-reach", "--profile", "lag", "--trials", "32", "--envs", "16"],
    "go2": ["--task", "go2", "--terrain", "flat", "--course-length", "10", "--speeds", "0.5", "--trials", "10",
            "--randomize", "--envs", "10"],
    "go2-slope": ["--task", "go2", "--terrain", "slope", "--course-length", "10", "--speeds", "0.5", "--trials", "10",
                  "--randomize", "--envs", "10"],
}
#: the evaluation seeds of each walk (0 where not listed): the slope walk, where CEM fell once in its first ten
#: trials, has ten more
SEEDS = {"go2-slope": (0, 1)}
#: envs per timed tick (the protocol's; the slope walk's ticks are the flat walk's) and timed ticks per planner
TICK_ENVS = {"toy": 16, "go2": 10}
TICKS = 60


def folder(task: str, planner: str) -> Path:
    """The model folder ``planner`` acts from on ``task`` (the Go2's walks share one per planner)."""
    return AGENTS / f"{task.partition('-')[0]}-{planner}"


def sequences(settings: dict[str, Any]) -> int:
    """Imagined sequences per env and tick."""
    return settings["num_samples"] * settings["iterations"] + settings["num_policy_samples"]


def make_agents(tasks: list[str], dry: bool) -> None:
    """Each task's base model saved with each planner's ``planner.json`` (the task's budget)."""
    for task in tasks:
        base = BASE[task]
        for planner in PLANNERS:
            out = folder(task, planner)
            print(f"{base} + planner.json {{planner: {planner}, {BUDGET[task]}}} -> {out}", flush=True)
            if not dry and not (ROOT / out / "planner.json").is_file():
                agent = load_agent(ROOT / base).with_settings(planner=planner, **BUDGET[task])
                agent.save_pretrained(ROOT / out)


def result_file(task: str, planner: str, seed: int) -> Path:
    """``results/planners/TASK_PLANNER.json`` (seed 0) or ``TASK_PLANNER_seedS.json``."""
    return OUT / (f"{task}_{planner}.json" if seed == 0 else f"{task}_{planner}_seed{seed}.json")


def evaluate(tasks: list[str], dry: bool) -> None:
    """``simdist evaluate --json`` of every folder, one result file per walk, planner and seed."""
    for task in tasks:
        for seed in SEEDS.get(task, (0,)):
            for planner in PLANNERS:
                out = result_file(task, planner, seed)
                if (ROOT / out).is_file():
                    print(f"[skip, done] {out}", flush=True)
                    continue
                run_result_step(out, simdist_command("evaluate", "--agent", str(folder(task, planner)),
                                                     *PROTOCOL[task], "--seed", str(seed), "--json"), dry)


def ticks(tasks: list[str], dry: bool) -> None:
    """Wall time of each folder's ticks on one torch thread, the planners alternated tick by tick (so that other
    work on the machine weighs on both alike), on random observations for the protocol's env count (a tick's work
    does not depend on the values): ``results/planners/ticks_TASK.json``."""
    import torch

    from simdist.planning import ObservationHistory

    torch.set_num_threads(1)
    for task in [t for t in tasks if t in TICK_ENVS]:
        out = OUT / f"ticks_{task}.json"
        print(f"time {TICKS} ticks per planner on {TICK_ENVS[task]} envs, alternated -> {out}", flush=True)
        if dry or (ROOT / out).is_file():
            continue
        planners = {p: load_agent(ROOT / folder(task, p)).planner for p in PLANNERS}
        model = planners["mppi"].world_model
        n, g = TICK_ENVS[task], torch.Generator().manual_seed(0)
        history = ObservationHistory.for_model(model, num_envs=n)
        history.reset({k: torch.randn(n, *s, generator=g) for k, s in model.config.obs_spec.items()},
                      command=torch.randn(n, model.config.command_dim, generator=g))
        times: dict[str, list[float]] = {p: [] for p in PLANNERS}
        for i in range(TICKS + 3):  # three warm-up ticks each
            for p, planner in planners.items():
                start = time.perf_counter()
                planner.plan(history)
                if i >= 3:
                    times[p].append(1e3 * (time.perf_counter() - start))
        (ROOT / OUT).mkdir(parents=True, exist_ok=True)
        write_json(ROOT / out, {"torch_threads": 1, "envs": n, "ticks": TICKS, "sequences_per_env": sequences(
            BUDGET[task]), **{p: {"median_ms": statistics.median(t), "p90_ms": float(np.quantile(t, 0.9)),
                                  "ms": [round(x, 3) for x in t]} for p, t in times.items()}})


def difference(a: list[float], b: list[float], resamples: int = 10_000, seed: int = 0) -> tuple[float, float, float]:
    """mean(a) − mean(b) with a percentile-bootstrap 95 % interval, each side resampled on its own (the trials
    of the two runs are not paired: an env that finishes early draws the next start in completion order)."""
    x, y, rng = np.asarray(a, np.float64), np.asarray(b, np.float64), np.random.default_rng(seed)
    d = (x[rng.integers(0, x.size, (resamples, x.size))].mean(1) - y[rng.integers(0, y.size, (resamples, y.size))]
         .mean(1))
    low, high = np.quantile(d, [0.025, 0.975])
    return float(x.mean() - y.mean()), float(low), float(high)


def tick_table() -> str:
    """Per timed task: each planner's median and 90th-percentile tick, and CEM's tick over MPPI's (the geometric
    mean of the tick-by-tick ratios, with its 95 % interval: the ticks alternate, so each pair shares the load)."""
    lines = ["| task | envs × sequences per env | MPPI tick, median (p90) ms | CEM tick, median (p90) ms | "
             "CEM / MPPI [95 % CI] |", "|---|---|---|---|---|"]
    for task in TICK_ENVS:
        path = ROOT / OUT / f"ticks_{task}.json"
        if not path.is_file():
            continue
        t = json.loads(path.read_text())
        r = bootstrap_ci(np.log(np.asarray(t["cem"]["ms"]) / np.asarray(t["mppi"]["ms"])))
        lines.append(f"| {task} | {t['envs']} × {t['sequences_per_env']} | {t['mppi']['median_ms']:.1f} "
                     f"({t['mppi']['p90_ms']:.1f}) | {t['cem']['median_ms']:.1f} ({t['cem']['p90_ms']:.1f}) | "
                     f"{np.exp(r.mean):.3f} [{np.exp(r.low):.3f}, {np.exp(r.high):.3f}] |")
    return "\n".join(lines)


def table() -> str:
    """The markdown tables of docs/planners.md: per walk and planner the metric's mean [95 % CI], trials, success
    rate and the difference CEM − MPPI [95 % CI]; then the ticks (:func:`tick_table`)."""
    lines = ["| walk (metric) | planner | sequences per env and tick | mean [95 % CI] | trials | success | "
             "CEM − MPPI [95 % CI] |", "|---|---|---|---|---|---|---|"]
    for task in BASE:
        runs = {}  # planner -> (metric, values, successes) over the seeds whose result files exist
        for p in PLANNERS:
            found = [json.loads((ROOT / f).read_text()) for f in (result_file(task, p, s) for s in
                                                                  SEEDS.get(task, (0,))) if (ROOT / f).is_file()]
            if found:
                runs[p] = (found[0]["summary"]["metric"], [v for r in found for v in r["values"]],
                           [ok for r in found for ok in r["success"]])
        for p, (metric, values, success) in runs.items():
            e = bootstrap_ci(values)
            diff = ""
            if p == "cem" and "mppi" in runs:
                mean, low, high = difference(values, runs["mppi"][1])
                diff = f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"
            lines.append(f"| {task} ({metric}) | {p} | {sequences(BUDGET[task])} | {e.mean:.3f} [{e.low:.3f}, "
                         f"{e.high:.3f}] | {e.n} | {np.mean(success):.2f} | {diff} |")
    return "\n".join(lines) + "\n\n" + tick_table()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m results.planners.cem", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("agents", "evaluate", "ticks", "table", "all"))
    parser.add_argument("--tasks", default=",".join(BASE), help=f"comma list of {', '.join(BASE)} (default: all)")
    parser.add_argument("--dry-run", action="store_true", help="print what would run, run nothing")
    args = parser.parse_args(argv)
    tasks = [t for t in BASE if t in args.tasks.split(",")]
    if not tasks or set(args.tasks.split(",")) - set(BASE):
        parser.error(f"--tasks: a comma list of {', '.join(BASE)}, got {args.tasks!r}")
    if args.what in ("agents", "all"):
        make_agents(tasks, args.dry_run)
    if args.what in ("evaluate", "all"):
        evaluate(tasks, args.dry_run)
    if args.what in ("ticks", "all"):
        ticks(tasks, args.dry_run)
    if args.what in ("table", "all") and not args.dry_run:
        print(table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
