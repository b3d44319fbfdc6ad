"""Scaling on this machine: data generation and pretraining with 1 and 2 processes, and the projection of the
paper's scale onto N machines from the measured per-process rates (docs/distributed.md).

    python -m results.scaling.measure generate   # Go2 data: 1 process vs 2 torchrun workers, same parts
    python -m results.scaling.measure train      # Go2 pretraining, global batch 512: 1 process vs 2 (gloo DDP)
    python -m results.scaling.measure project    # the paper's data and schedule on N machines

Each measurement writes ``results/scaling/<name>.json`` (atomically; delete it to rerun) and ``project``
prints the table of docs/distributed.md from them. Run from the repository root on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "results" / "scaling"
WORK = ROOT / "outputs" / "scaling"
#: Go2 generation: 2 parts of 40,000 transitions, 2-s episodes (the rate per simulated step is what scales)
GEN = ["--task", "go2", "--envs", "128", "--transitions", "80000", "--parts", "2", "--episode-length-s", "2",
       "--seed", "3", "--no-progress", "--json"]
#: the paper's scale (SIMDIST.md): Go2 data 102.4 M transitions; pretraining 369k steps of 512
PAPER_TRANSITIONS, PAPER_STEPS, PAPER_BATCH = 102_400_000, 369_000, 512


def _env(threads: int) -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), "HF_HUB_OFFLINE": "1"}


def _write(name: str, obj: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = OUT / f".{name}.json.tmp"
    tmp.write_text(json.dumps(obj, indent=1) + "\n")
    os.replace(tmp, OUT / f"{name}.json")
    print(json.dumps(obj, indent=1))


def _timed(cmd: list[str], env: dict[str, str], log: Path) -> float:
    print("+", " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        rc = subprocess.call(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
    if rc != 0:
        sys.exit(f"command failed (rc {rc}); see {log}")
    return time.perf_counter() - t0


def generate() -> None:
    """The same 2-part run by one process and by two torchrun workers (one thread each)."""
    WORK.mkdir(parents=True, exist_ok=True)
    rows = {}
    for workers in (1, 2):
        out = WORK / f"go2-gen-{workers}"
        shutil.rmtree(out, ignore_errors=True)
        launcher = ([sys.executable, "-m", "simdist.cli"] if workers == 1 else
                    [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                     "-m", "simdist.cli"])
        wall = _timed([*launcher, "generate", *GEN, "--out", str(out)], _env(1), WORK / f"gen-{workers}.log")
        state = json.loads((out / "generate.json").read_text())
        simulated = sum(p["session"]["simulated_transitions"] for p in state["parts"].values())
        part_walls = [p["session"]["wall_seconds"] for p in state["parts"].values()]
        rows[workers] = {"workers": workers, "wall_s": wall, "simulated_transitions": simulated,
                         "transitions_per_s": simulated / wall,
                         "per_process_transitions_per_s": simulated / sum(part_walls),
                         "part_wall_s": part_walls, "episodes": state["summary"]["episodes"]}
    rows[2]["speedup"] = rows[1]["wall_s"] / rows[2]["wall_s"]
    _write("generate", {"command": "simdist generate " + " ".join(GEN), "machine_cpus": os.cpu_count(),
                        "date": time.strftime("%Y-%m-%d"), "runs": list(rows.values())})


def train() -> None:
    """Go2 preset pretraining at a global batch of 512: 1 process (2 threads) vs 2 DDP processes (1 thread each,
    256 per rank), on the generated data."""
    data = WORK / "go2-gen-1"
    if not (data / "dataset.json").exists():
        sys.exit("run `measure.py generate` first (its data are the training data)")
    rows = []
    for procs in (1, 2):
        out = WORK / f"train-{procs}"
        shutil.rmtree(out, ignore_errors=True)
        cmd = [sys.executable, "-m", "simdist.cli", "fit", "--config", "recipes/go2/base.yaml",
               "--data.train", str(data), "--data.batch_size", str(PAPER_BATCH // procs), "--data.num_workers", "1",
               "--trainer.max_steps", "35", "--trainer.logger", "false", "--trainer.enable_checkpointing", "false",
               "--trainer.limit_val_batches", "0", "--trainer.default_root_dir", str(out),
               "--trainer.accelerator", "cpu", "--trainer.devices", str(procs),
               "--trainer.callbacks+=simdist.training.audit.StepTimer", "--trainer.callbacks.out_dir", str(out),
               "--trainer.callbacks.skip", "5"]
        if procs > 1:
            cmd += ["--trainer.strategy", "ddp"]
        wall = _timed(cmd, _env(2 // procs), WORK / f"train-{procs}.log")
        timing = json.loads((out / "timing.json").read_text())
        rows.append({"processes": procs, "threads_per_process": 2 // procs, "wall_s": wall, **timing})
    rows[1]["speedup"] = rows[1]["samples_per_s"] / rows[0]["samples_per_s"]
    _write("train", {"recipe": "recipes/go2/base.yaml (preset go2, 667,758 parameters), global batch 512",
                     "machine_cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d"), "runs": rows})


def project() -> None:
    """Hours for the paper's data and schedule on N of these machines, from the measured rates.

    Generation: independent workers, so N machines generate N times the measured machine rate (parts >= workers;
    the index merge is negligible). Training: synchronous data parallelism at the paper's global batch of 512;
    a step costs the measured compute divided over N machines plus a ring all-reduce of the fp32 gradient
    (2 (N-1)/N x 2.67 MB at an assumed 10 Gb/s, plus 2 (N-1) x an assumed 50 us latency)."""
    gen = json.loads((OUT / "generate.json").read_text())
    tr = json.loads((OUT / "train.json").read_text())
    machine_gen = max(r["transitions_per_s"] for r in gen["runs"])
    machine_train = max(r["samples_per_s"] for r in tr["runs"])
    grad_bytes, bandwidth, latency = 667_758 * 4, 10e9 / 8, 50e-6
    rows = []
    for n in (1, 8, 64, 256):
        gen_h = PAPER_TRANSITIONS / (machine_gen * n) / 3600
        allreduce = 2 * (n - 1) / n * grad_bytes / bandwidth + 2 * (n - 1) * latency
        step = PAPER_BATCH / machine_train / n + allreduce
        rows.append({"machines": n, "generation_h": gen_h, "step_s": step, "allreduce_s": allreduce,
                     "pretraining_h": PAPER_STEPS * step / 3600})
    lines = [f"generation {machine_gen:,.0f} transitions/s and pretraining {machine_train:,.0f} samples/s per "
             "2-core machine (measured)", "",
             "| machines | paper data, 102.4 M transitions | pretraining step (all-reduce) | paper pretraining, "
             "369k steps of 512 |", "|---|---|---|---|"]
    lines += [f"| {r['machines']} | {r['generation_h']:,.2f} h | {r['step_s'] * 1e3:,.0f} ms "
              f"({r['allreduce_s'] * 1e3:.1f} ms) | {r['pretraining_h']:,.1f} h |" for r in rows]
    print("\n".join(lines))
    _write("projection", {"assumptions": project.__doc__, "machine_generation_per_s": machine_gen,
                          "machine_samples_per_s": machine_train, "rows": rows})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("generate", "train", "project"))
    {"generate": generate, "train": train, "project": project}[parser.parse_args().what]()


if __name__ == "__main__":
    main()
