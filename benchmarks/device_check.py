"""The prepared GPU check: paper-size planner ticks and pretraining throughput, into one dated JSON file.

Every measurement is one ``simdist bench --json`` run (the command of this Python's environment) with the settings
below, in order:

1. ``go2-eager``: the Go2 paper-size MPPI tick (planner preset ``paper``: 450 + 22 samples x 8 iterations x
   horizon 25), eager;
2. ``go2-compile-default``: the same with ``torch.compile`` (mode ``default``);
3. ``go2-reduce-overhead``: the same with ``torch.compile(mode="reduce-overhead")`` (CUDA graphs; skipped on
   CPU with the reason recorded, CUDA graphs need CUDA);
4. ``ur5e-peg-eager``: the manipulation tick (preset ``manipulation``: 256 + 12 x 3 x 5), eager;
5. ``pretrain-b512``: pretraining throughput of the Go2 preset at batch 512 (the bench's ``train`` section,
   which also times finetuning at batch 32).

Each tick row is the bench's row (median and p99 wall time in ms, compile time separately, from the first tick)
with the tick rates, the task's control period and, for the paper tick, the 5 ms target (met when the p99 is at
most 5 ms); the training row samples/s. The JSON (``results/bench/device-check-<date>.json``; ``-cpu`` before
``.json`` on CPU) holds the ISO date, the device name, the torch version and the machine (as the first bench run
saw it); it is rewritten atomically after every measurement, so a run cut off by a timeout keeps what it measured
(``"complete": false``). A measurement that fails is recorded with its error and the run goes on; the exit status
is 1 if any failed.

On a lent GPU, in one call (expected to take a few minutes on an H200, most of it the two compiles, which
the bench times apart from the ticks; not yet measured, so the timeout leaves room under an 8-minute slot)::

    OMP_NUM_THREADS=8 timeout 480 python benchmarks/device_check.py --device cuda

Without a GPU the same script runs on CPU (``tests/test_device_check.py``)::

    OMP_NUM_THREADS=1 python benchmarks/device_check.py --device cpu --quick --out /tmp/check.json

``--quick`` takes tiny repeats, and on CPU skips the compiled variants (compiling the paper-size planner
takes minutes there) unless ``--with-compile``; ``--only`` runs a comma list of the names above.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from simdist import WorldModel, build_planner, get
from simdist.planning import planner_preset

TARGET_MS = 5.0
NAMES = ("go2-eager", "go2-compile-default", "go2-reduce-overhead", "ur5e-peg-eager", "pretrain-b512")
RESULTS = Path(__file__).resolve().parents[1] / "results" / "bench"


@dataclass(frozen=True)
class Sizes:
    """Timed repeats: paper ticks, warm-up ticks, manipulation ticks, pretraining steps."""

    go2_repeats: int
    warmup: int
    manip_repeats: int
    train_steps: int


#: sized for an H200 in well under 8 minutes: the ticks take seconds, compiling the rest
FULL = Sizes(go2_repeats=200, warmup=10, manip_repeats=300, train_steps=20)
QUICK = Sizes(go2_repeats=2, warmup=0, manip_repeats=3, train_steps=1)


def log(message: str) -> None:
    print(f"[device-check] {message}", file=sys.stderr, flush=True)


def write_report(path: Path, report: dict[str, Any]) -> None:
    """The report as JSON, written to a temporary file beside ``path`` and renamed over it."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class Check:
    """The ``simdist bench`` runs behind the measurements, on one device, and the machine they saw."""

    def __init__(self, device: torch.device, sizes: Sizes) -> None:
        self.device, self.sizes = device, sizes
        self.threads: int | None = torch.get_num_threads() if device.type == "cpu" else None
        self.machine: dict[str, Any] | None = None

    def bench(self, *args: str) -> dict[str, Any]:
        """The report of ``simdist bench ARGS --json`` on this device (on CPU, on this process's thread count)."""
        threads = [] if self.threads is None else ["--threads", str(self.threads)]
        cmd = [sys.executable, "-m", "simdist.cli", "bench", *args, "--device", str(self.device), *threads, "--json"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"simdist bench exited with {done.returncode}: {done.stderr.strip()[-2000:]}")
        report = json.loads(done.stdout)
        self.machine = self.machine or report["machine"]
        return report

    def tick(self, task: str, mode: str | None, repeats: int) -> dict[str, Any]:
        """One planner tick of ``task``'s paper setting, eager (``mode`` None) or compiled."""
        cls = get("task", task)
        compile_args = [] if mode is None else ["--compile", mode]
        report = self.bench("--task", task, "--sections", "mppi", "--repeats", str(repeats), "--warmup",
                            str(self.sizes.warmup), *compile_args)
        rows = [r for r in report["results"] if r["section"] == "mppi"]
        row = rows[0] if mode is None else next(r for r in rows if r["setting"].startswith("compile="))
        wm = WorldModel.from_preset(cls.preset)
        planner = build_planner(wm, planner_preset(cls.planner_preset))
        sequences = (planner.num_samples + planner.num_policy_samples) * planner.iterations
        period_ms = 1e3 * cls.dt
        median_s = row["median_ms"] / 1e3
        row.update(setting=f"{planner.num_samples}+{planner.num_policy_samples}x{planner.iterations} "
                           f"h{wm.config.horizon} " + (f"compile={mode}" if mode else "eager"),
                   task=task, ticks_per_s=1.0 / median_s, sequences_per_s=sequences / median_s,
                   control_period_ms=period_ms, meets_control_period_p99=row["p99_ms"] <= period_ms)
        if task == "go2":
            row.update(target_ms=TARGET_MS, meets_target_p99=row["p99_ms"] <= TARGET_MS,
                       meets_target_median=row["median_ms"] <= TARGET_MS)
        return row

    def pretrain(self) -> dict[str, Any]:
        """The bench's ``train`` section for the Go2 preset: pretraining at batch 512 (and finetuning at 32)."""
        rows = self.bench("--task", "go2", "--sections", "train", "--train-presets", "go2:512", "--train-variants",
                          "windows", "--train-steps", str(self.sizes.train_steps), "--finetune-batch", "32")["results"]
        row = next(r for r in rows if r["setting"].startswith("pretrain"))
        return {**row, "finetune": next(r for r in rows if r["setting"].startswith("finetune"))}


def plan(check: Check, compile_ok: str | None) -> list[tuple[str, str, Callable[[], dict[str, Any]] | str]]:
    """(name, what, measurement or skip reason) in the order they run."""
    cuda = check.device.type == "cuda"
    s = check.sizes

    def compiled(mode: str) -> Callable[[], dict[str, Any]] | str:
        if mode == "reduce-overhead" and not cuda:
            return "CUDA graphs (torch.compile mode reduce-overhead) need a CUDA device"
        return compile_ok or (lambda: check.tick("go2", mode, s.go2_repeats))

    return [
        ("go2-eager", f"Go2 paper MPPI tick, eager, {s.go2_repeats} ticks",
         lambda: check.tick("go2", None, s.go2_repeats)),
        ("go2-compile-default", f"Go2 paper MPPI tick, torch.compile default, {s.go2_repeats} ticks",
         compiled("default")),
        ("go2-reduce-overhead", f"Go2 paper MPPI tick, torch.compile reduce-overhead, {s.go2_repeats} ticks",
         compiled("reduce-overhead")),
        ("ur5e-peg-eager", f"UR5e peg manipulation MPPI tick, eager, {s.manip_repeats} ticks",
         lambda: check.tick("ur5e-peg", None, s.manip_repeats)),
        ("pretrain-b512", f"Go2 pretraining, batch 512, {s.train_steps} steps (+ finetuning at 32)",
         check.pretrain),
    ]


def format_table(report: dict[str, Any]) -> str:
    """The measurements as a short plain-text table."""
    lines = [f"device check {report['date']} on {report['device']} ({report['device_name'] or 'not measured'}, torch "
             f"{report['torch']}); target: Go2 paper tick <= {TARGET_MS:g} ms",
             f"{'measurement':<21} {'median ms':>10} {'p99 ms':>9} {'rate':>18}  notes"]
    for name, m in report["measurements"].items():
        if m["status"] != "measured":
            lines.append(f"{name:<21} {'-':>10} {'-':>9} {'-':>18}  {m['status']}: {m['reason']}")
            continue
        rate = (f"{m['samples_per_s']:.0f} samples/s" if "samples_per_s" in m else f"{m['ticks_per_s']:.1f} ticks/s")
        notes = []
        if "meets_target_p99" in m:
            notes.append(f"5 ms target {'met' if m['meets_target_p99'] else 'missed'} (p99)")
        if m.get("compile_s") is not None:
            notes.append(f"compile {m['compile_s']:.1f} s")
        lines.append(f"{name:<21} {m['median_ms']:>10.2f} {m['p99_ms']:>9.2f} {rate:>18}  {', '.join(notes)}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda[:i] (the GPU check) or cpu")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON file (default: results/bench/device-check-<date>.json, -cpu on CPU)")
    parser.add_argument("--quick", action="store_true", help="tiny repeats (tests); on CPU no compiled variants")
    parser.add_argument("--with-compile", action="store_true", help="run the compiled variants even --quick on CPU")
    parser.add_argument("--only", default=None, help=f"comma list of {', '.join(NAMES)}")
    args = parser.parse_args(argv)
    try:
        device = torch.device(args.device)
    except RuntimeError as err:
        parser.error(f"--device {args.device!r}: {err}")
    if device.type not in ("cpu", "cuda"):
        parser.error(f"--device {args.device!r}: choose cpu or cuda[:i]")
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error(f"--device {args.device}: CUDA is not available on this machine "
                     f"(torch {torch.__version__}, torch.cuda.is_available() is False); use --device cpu")
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        parser.error(f"--device {args.device}: only {torch.cuda.device_count()} CUDA device(s)")
    only = set(NAMES) if args.only is None else {n.strip() for n in args.only.split(",") if n.strip()}
    if only - set(NAMES):
        parser.error(f"--only: unknown {sorted(only - set(NAMES))}; choose from {', '.join(NAMES)}")

    now = datetime.datetime.now(datetime.timezone.utc)
    out = args.out or RESULTS / f"device-check-{now.date().isoformat()}{'-cpu' if device.type == 'cpu' else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    check = Check(device, QUICK if args.quick else FULL)
    compile_ok = None
    if args.quick and device.type == "cpu" and not args.with_compile:
        compile_ok = ("--quick on CPU: compiling the paper-size planner takes minutes on CPU (run it with "
                      "--with-compile; tests/test_device_check.py has a slow test that does)")
    report: dict[str, Any] = {
        "date": now.date().isoformat(), "timestamp": now.isoformat(timespec="seconds"), "device": str(device),
        "device_name": None, "torch": torch.__version__,
        "cuda": torch.version.cuda, "target_ms": TARGET_MS, "quick": args.quick, "sizes": vars(check.sizes),
        "threads": check.threads, "machine": None, "complete": False, "measurements": {},
    }
    failed = False
    steps = [step for step in plan(check, compile_ok) if step[0] in only]
    for i, (name, what, measure) in enumerate(steps, 1):
        if isinstance(measure, str):
            log(f"{i}/{len(steps)} {name}: skipped ({measure})")
            report["measurements"][name] = {"status": "skipped", "reason": measure}
            continue
        log(f"{i}/{len(steps)} {name}: {what} ...")
        t0 = time.perf_counter()
        try:
            row = measure()
        except Exception as err:  # record it and go on: one broken variant must not lose the others
            failed = True
            log(f"{i}/{len(steps)} {name}: FAILED after {time.perf_counter() - t0:.1f} s: {err!r}")
            report["measurements"][name] = {"status": "failed", "reason": repr(err)}
        else:
            row = {"status": "measured", "what": what, "seconds": time.perf_counter() - t0, **row}
            report["measurements"][name] = row
            log(f"{i}/{len(steps)} {name}: median {row['median_ms']:.2f} ms, p99 {row['p99_ms']:.2f} ms "
                f"({row['seconds']:.1f} s)")
        if check.machine is not None and report["machine"] is None:
            report["machine"] = check.machine
            report["device_name"] = check.machine.get("gpu", check.machine["cpu"])
        write_report(out, report)
    report["complete"] = True
    write_report(out, report)
    print(format_table(report))
    log(f"wrote {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
