"""The prepared GPU check: paper-size planner ticks and pretraining throughput, into one dated JSON file.

Measures, in order, through the timing functions of ``simdist bench`` (:mod:`simdist.tools.bench`):

1. ``go2-eager``: the Go2 paper-size MPPI tick (planner preset ``paper``: 450 + 22 samples x 8 iterations x
   horizon 25), eager;
2. ``go2-compile-default``: the same with ``torch.compile`` (mode ``default``);
3. ``go2-reduce-overhead``: the same with ``torch.compile(mode="reduce-overhead")`` (CUDA graphs; skipped on
   CPU with the reason recorded, CUDA graphs need CUDA);
4. ``ur5e-peg-eager``: the manipulation tick (preset ``manipulation``: 256 + 12 x 3 x 5), eager;
5. ``pretrain-b512``: pretraining throughput of the Go2 preset at batch 512 (the bench's ``train`` section,
   which also times finetuning at batch 32).

Each tick row has the median and p99 wall time in ms (compile time separately, from the first tick), the
paper tick the 5 ms target (met when the p99 is at most 5 ms); the training row samples/s. The JSON
(``results/bench/device-check-<date>.json``; ``-cpu`` before ``.json`` on CPU) holds the ISO date, the
device name, the torch version and the machine; it is rewritten atomically after every measurement, so a
run cut off by a timeout keeps what it measured (``"complete": false``). A measurement that raises is
recorded with its error and the run goes on; the exit status is 1 if any failed.

On a lent GPU, in one call (expected to take a few minutes on an H200, most of it the two compiles, which
the bench times apart from the ticks; not yet measured, so the timeout leaves room under an 8-minute slot)::

    OMP_NUM_THREADS=8 PYTHONPATH=. timeout 480 python benchmarks/device_check.py --device cuda

Without a GPU the same script runs on CPU (``tests/test_device_check.py``)::

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/device_check.py --device cpu --quick --out /tmp/check.json

``--quick`` takes tiny repeats, and on CPU skips the compiled variants (compiling the paper-size planner
takes minutes there) unless ``--with-compile``; ``--only`` runs a comma list of the names above.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch

from simdist.benchmarking import machine_info, random_history, time_calls
from simdist.fsutil import atomic_write_json
from simdist.tools import bench, bench_train

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


class Check:
    """The planner fixtures shared by the measurements (built on first use) and the report."""

    def __init__(self, device: torch.device, sizes: Sizes) -> None:
        self.device, self.sizes = device, sizes
        self.threads: int | None = torch.get_num_threads() if device.type == "cpu" else None
        self._fixtures: dict[str, tuple[Any, dict[str, Any], dict[str, Any], float]] = {}

    def fixture(self, task: str) -> tuple[Any, dict[str, Any], dict[str, Any], float]:
        """(world model, planner settings, planner input, control period) of ``task``'s paper setting."""
        if task not in self._fixtures:
            from simdist import WorldModel
            from simdist.planning.presets import planner_preset
            from simdist.tasks import task_class

            cls = task_class(task)
            torch.manual_seed(0)
            wm = WorldModel.from_preset(cls.preset).to(self.device).eval()
            self._fixtures[task] = (wm, planner_preset(cls.planner_preset), random_history(wm, 1), cls.dt)
        return self._fixtures[task]

    def tick(self, task: str, mode: str | None, repeats: int) -> dict[str, Any]:
        """One planner tick of ``task``'s paper setting, eager (``mode`` None) or compiled."""
        from simdist import build_planner

        wm, settings, history, period = self.fixture(task)
        planner = build_planner(wm, settings)
        sequences = (planner.num_samples + planner.num_policy_samples) * planner.iterations
        extra: dict[str, Any] = {}
        if mode is None:
            timing = time_calls(lambda: planner.plan(history), repeats, self.sizes.warmup, self.device)
        else:
            timing, extra["compile_s"] = bench.time_compiled(
                wm, settings, True if mode == "default" else mode, history, repeats, self.sizes.warmup,
                self.device)
        flop = bench.imagine_flops(wm) * sequences
        row = bench.planner_row("mppi", f"{planner.num_samples}+{planner.num_policy_samples}x{planner.iterations}"
                                f" h{wm.config.horizon} " + (f"compile={mode}" if mode else "eager"),
                                self.threads, timing, **extra,
                                **bench.flop_rates(flop, bench.executed_flops(wm, planner), timing))
        median_s = timing["wall"]["median"]
        row.update(task=task, ticks_per_s=1.0 / median_s, sequences_per_s=sequences / median_s,
                   control_period_ms=1e3 * period, meets_control_period_p99=row["p99_ms"] <= 1e3 * period)
        if task == "go2":
            row.update(target_ms=TARGET_MS, meets_target_p99=row["p99_ms"] <= TARGET_MS,
                       meets_target_median=row["median_ms"] <= TARGET_MS)
        return row

    def pretrain(self) -> dict[str, Any]:
        """The bench's ``train`` section for the Go2 preset: pretraining at batch 512 (and finetuning at 32)."""
        args = SimpleNamespace(pretrain_batch=512, finetune_batch=32, compile_modes=[], train_variants=["windows"],
                               train_steps=self.sizes.train_steps)
        rows = bench_train.bench_training("go2", args, self.threads, self.device)
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
    lines = [f"device check {report['date']} on {report['device']} ({report['device_name']}, torch "
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
    machine = machine_info(device)
    compile_ok = None
    if args.quick and device.type == "cpu" and not args.with_compile:
        compile_ok = ("--quick on CPU: compiling the paper-size planner takes minutes on CPU (run it with "
                      "--with-compile; tests/test_device_check.py has a slow test that does)")
    report: dict[str, Any] = {
        "date": now.date().isoformat(), "timestamp": now.isoformat(timespec="seconds"), "device": str(device),
        "device_name": machine.get("gpu", machine["cpu"]), "torch": torch.__version__,
        "cuda": torch.version.cuda, "target_ms": TARGET_MS, "quick": args.quick, "sizes": vars(check.sizes),
        "threads": check.threads, "machine": machine, "complete": False, "measurements": {},
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
        atomic_write_json(out, report, default=str)
    report["complete"] = True
    atomic_write_json(out, report, default=str)
    print(format_table(report))
    log(f"wrote {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
