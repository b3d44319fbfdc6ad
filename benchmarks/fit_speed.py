"""Go2 pretraining throughput of real ``simdist fit`` runs: today's path against the faster configurations,
alternated in one run so that the machine's state hits them alike (docs/speed.md, "Pretraining runs").

    python benchmarks/fit_speed.py --data DIR [--configs today,ddp2,...] [--rounds 2] [--steps 30]

Every configuration trains the recipe ``recipes/go2/base.yaml`` (the official preset, batch 128 windows) on the
same data with the same seed for ``--skip`` + ``--steps`` steps; ``simdist.training.audit.StepTimer`` measures
the steps after the first ``--skip`` (which hold start-up and any compilation). The configurations:

* ``today``: one process on the machine's threads, float32, every window encoded on its own;
* ``ddp2``: two processes of one torch thread each (gloo DDP), 64 windows per rank (the same global batch of
  128, so the same mean loss and, averaged over the ranks, the same gradient);
* ``+chunks``: windows drawn as chunks of 16 consecutive windows whose future observations are encoded once
  (``data.windows_per_chunk``);
* ``+compile``: the training loss through ``torch.compile`` (``model.init_args.compile``);
* ``+bf16``: ``trainer.precision bf16-mixed`` (its effect on the loss: ``simdist bench --sections train``).

The data: any Go2 dataset, e.g. ``simdist generate --task go2 --transitions 40000 --seed 7 --out DIR``.
The JSON (``--out``) holds every run's windows/s and the speed-up of each configuration's median over the
rounds against ``today``'s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECIPE = "recipes/go2/base.yaml"
BATCH = 128
CHUNK = 16
OPTIONS = ("chunks", "compile", "bf16")


def cpu_features() -> list[str]:
    """The CPU's vector extensions that decide the float32 and bfloat16 matrix rates (Linux; empty elsewhere)."""
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        return []
    return sorted(f for f in flags.split(":", 1)[1].split() if f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16"))


def parse_config(name: str) -> tuple[int, set[str]]:
    """``today`` or ``ddp2``, with ``+chunks``/``+compile``/``+bf16``, as (processes, options)."""
    base, *options = name.split("+")
    if base not in ("today", "ddp2") or set(options) - set(OPTIONS) or len(set(options)) != len(options):
        raise SystemExit(f"--configs: unknown configuration {name!r}: today or ddp2, each with optional "
                         f"+{', +'.join(OPTIONS)}")
    return (2 if base == "ddp2" else 1), set(options)


def fit_command(name: str, data: Path, out: Path, steps: int, skip: int) -> tuple[list[str], dict[str, str]]:
    """The ``simdist fit`` command line and environment of one configuration."""
    procs, options = parse_config(name)
    cmd = [sys.executable, "-m", "simdist.cli", "fit", "--config", RECIPE, "--data.train", str(data),
           "--data.batch_size", str(BATCH // procs), "--trainer.max_steps", str(skip + steps),
           "--trainer.logger", "false", "--trainer.enable_checkpointing", "false", "--trainer.limit_val_batches", "0",
           "--trainer.enable_progress_bar", "false", "--trainer.default_root_dir", str(out),
           "--trainer.accelerator", "cpu", "--trainer.devices", str(procs),
           "--trainer.callbacks+=simdist.training.audit.StepTimer", "--trainer.callbacks.out_dir", str(out),
           "--trainer.callbacks.skip", str(skip), "--model.init_args.diagnostics", "false"]
    if procs > 1:
        cmd += ["--trainer.strategy", "ddp"]
    if "chunks" in options:
        cmd += ["--data.windows_per_chunk", str(CHUNK)]
    if "compile" in options:
        cmd += ["--model.init_args.compile", "true"]
    if "bf16" in options:
        cmd += ["--trainer.precision", "bf16-mixed"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if procs > 1:  # one torch thread per rank; today's path keeps the caller's threads
        env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return cmd, env


def run_one(name: str, data: Path, work: Path, steps: int, skip: int, round_: int) -> dict:
    out = work / f"{name}-r{round_}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cmd, env = fit_command(name, data, out, steps, skip)
    t0 = time.perf_counter()
    with open(out / "fit.log", "w") as log:
        rc = subprocess.call(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t0
    if rc != 0 or not (out / "timing.json").exists():
        raise SystemExit(f"configuration {name} failed (rc {rc}); see {out / 'fit.log'}")
    timing = json.loads((out / "timing.json").read_text())
    return {"config": name, "round": round_, "run_wall_s": wall, "windows_per_s": timing["samples_per_s"], **timing}


def summarize(runs: list[dict], names: list[str]) -> list[dict]:
    """Per configuration: the median windows/s over the rounds and its ratio to ``today``'s (or the first)."""
    medians = {n: statistics.median(r["windows_per_s"] for r in runs if r["config"] == n) for n in names}
    ref = medians.get("today", medians[names[0]])
    return [{"config": n, "windows_per_s": medians[n], "speedup_vs_today": medians[n] / ref,
             "rounds": [r["windows_per_s"] for r in runs if r["config"] == n]} for n in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a Go2 dataset folder (dataset.json inside)")
    parser.add_argument("--configs", default="today,ddp2,ddp2+chunks+compile,ddp2+chunks+compile+bf16")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per run")
    parser.add_argument("--skip", type=int, default=5, help="steps before the timing starts")
    parser.add_argument("--work", type=Path, default=ROOT / "outputs" / "fit-speed")
    parser.add_argument("--out", type=Path, default=None, help="the JSON of every run and the summary")
    args = parser.parse_args()
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    for n in names:
        parse_config(n)
    if not (args.data / "dataset.json").exists():
        raise SystemExit(f"--data {args.data}: no dataset.json (make one with `simdist generate --task go2 "
                         "--transitions 40000 --seed 7 --out DIR`)")
    if args.rounds < 1 or args.steps < 2 or args.skip < 1:
        raise SystemExit("--rounds must be >= 1, --steps >= 2 and --skip >= 1")
    runs: list[dict] = []
    total, t0 = args.rounds * len(names), time.perf_counter()
    for r in range(args.rounds):
        for n in names:
            runs.append(run_one(n, args.data, args.work, args.steps, args.skip, r))
            done = len(runs)
            eta = (time.perf_counter() - t0) / done * (total - done)
            print(f"[{done}/{total}] {n} round {r}: {runs[-1]['windows_per_s']:.0f} windows/s "
                  f"(run {runs[-1]['run_wall_s']:.0f} s; ETA {eta / 60:.1f} min)", flush=True)
    summary = summarize(runs, names)
    print("| configuration | windows/s (median over rounds) | speed-up vs today | rounds |")
    print("|---|---|---|---|")
    for s in summary:
        print(f"| {s['config']} | {s['windows_per_s']:.0f} | {s['speedup_vs_today']:.2f}x | "
              f"{', '.join(f'{x:.0f}' for x in s['rounds'])} |")
    if args.out:
        record = {"date": time.strftime("%Y-%m-%d"), "machine_cpus": os.cpu_count(), "recipe": RECIPE,
                  "cpu_features": cpu_features(),
                  "global_batch": BATCH, "steps": args.steps, "skip": args.skip, "load_avg_end": os.getloadavg(),
                  "runs": runs, "summary": summary}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1) + "\n")
        os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
