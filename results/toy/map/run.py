"""Run the toy map: ``python -m results.toy.map run [--seeds 0 1] [--out outputs/toy-map] [--jobs 2]``.

Per seed, one pretraining (``simdist demo --task toy-reach --pretrain-only --seed S``: the demo's data and
schedule, ``action_context`` 4), then per grid cell (:mod:`.grid`), reusing that model, into ``OUT/CELL-sS/``:

1. ``run/``: ``simdist demo --pretrained ... --real profile.yaml``: the nominal closed loop, zero-shot on the
   profile, 96 logged episodes, 12 epochs of dynamics-only finetuning, adapted (32 trials a side), the held-out
   real consistency before and after;
2. ``expert.json`` and, where the profile has a latency or a gain, ``retuned.json``: ``simdist evaluate`` of the
   data's PD expert and of the one retuned for the profile (a Smith predictor for the delay, divided by the gain)
   on the same 32 episodes' seed;
3. ``ranking.json``: ``simdist mechanism``: the plan ranking ρ of both models on 40 states the zero-shot planner
   visits on the profile;
4. ``results.json``: the cell's summary (:func:`summarise`), written last and atomically: a cell with it is done
   and a rerun skips it; a step whose file exists is skipped too, so a killed run resumes where it stopped.

Cells run in the order of the grid, seed 0 before seed 1, ``--jobs`` at a time (each a one-thread process).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from results.runner import ROOT, run_command, simdist_command, write_json, write_text
from results.toy.map.grid import CELLS, Cell, cell_named
from results.toy.map.summary import summarise

#: the demo's evaluation settings that the experts and the ranking repeat (ToyScale's defaults)
TRIALS, ENVS, SAMPLES, ITERATIONS = 32, 16, 128, 4


def pretrained_model(out: Path, seed: int) -> Path:
    """The seed's pretrained world-model folder."""
    return out / f"pretrain-s{seed}" / "toy-sim"


def pretrain(out: Path, seed: int, dry: bool) -> Path:
    """Pretrain once for ``seed`` (skipped when its model exists; a half-written folder is started afresh)."""
    model = pretrained_model(out, seed)
    if not (model / "config.json").is_file():
        if not dry:
            shutil.rmtree(model.parent, ignore_errors=True)
        run_command(simdist_command("demo", "--task", "toy-reach", "--pretrain-only", "--seed", str(seed),
                                    "--out", str(model.parent), "--no-progress"), out / f"pretrain-s{seed}.log", dry)
    return model


def profile_yaml(cell: Cell) -> str:
    """The cell's profile as YAML (null keeps the simulator's randomisation)."""
    def value(v: Any) -> str:
        return "null" if v is None else json.dumps(v)

    return "".join(f"{k}: {value(v)}\n" for k, v in cell.profile().items())


def ranking_command(folder: Path, model: Path, seed: int, out: Path, *extra: str) -> list[str]:
    """``simdist mechanism`` of a cell's zero-shot and adapted models on 40 states its zero-shot planner visits."""
    return simdist_command("mechanism", "--task", "toy-reach", "--real", str(folder / "profile.yaml"),
                           "--model", f"zero_shot={model}", "--model", f"adapted={folder / 'run' / 'toy-real'}",
                           "--reference", "zero_shot", "--planner-preset", "paper", "--num-samples", str(SAMPLES),
                           "--iterations", str(ITERATIONS), "--states", "40", "--candidates", "32", "--envs", str(ENVS),
                           "--seed", str(seed + 5), "--out", str(out), *extra)


def run_cell(cell: Cell, seed: int, out: Path, dry: bool) -> Path:
    """Every step of one cell into ``out/CELL-sSEED`` (each skipped when its file exists); returns the folder."""
    folder = out / f"{cell.name}-s{seed}"
    done = folder / "results.json"
    if done.is_file():
        return folder
    log = folder / "log.txt"
    profile = folder / "profile.yaml"
    if not dry:  # a dry run writes nothing
        folder.mkdir(parents=True, exist_ok=True)
        write_text(profile, profile_yaml(cell))
    model = pretrained_model(out, seed)
    timing: dict[str, float] = json.loads((folder / "timing.json").read_text()) if (folder / "timing.json").is_file() \
        else {}

    def step(name: str, result: Path, cmd: list[str], stdout: bool = False) -> None:
        if result.is_file():
            return
        started = time.perf_counter()
        run_command(cmd, log, dry, stdout=result if stdout else None)
        timing[name] = time.perf_counter() - started
        if not dry:
            write_json(folder / "timing.json", timing)

    run = folder / "run"
    if not (run / "results.json").is_file():
        shutil.rmtree(run, ignore_errors=True)  # a killed demo leaves half-written datasets: start it afresh
    step("loop", run / "results.json",
         simdist_command("demo", "--task", "toy-reach", "--pretrained", str(model), "--real", str(profile),
                         "--seed", str(seed), "--out", str(run), "--no-progress"))
    evaluate = ("evaluate", "--task", "toy-reach", "--profile", str(profile), "--trials", str(TRIALS),
                "--envs", str(ENVS), "--seed", str(seed + 2), "--json")
    step("expert", folder / "expert.json", simdist_command(*evaluate, "--agent", "expert"), stdout=True)
    if cell.latency or cell.gain != 1.0:
        step("retuned", folder / "retuned.json", simdist_command(*evaluate, "--agent", "retuned"), stdout=True)
    step("ranking", folder / "ranking.json", ranking_command(folder, model, seed, folder / "ranking.json"))
    if not dry:
        write_json(done, summarise(cell, seed, folder, timing))
    return folder


class Progress:
    """Cells done out of the total, with an ETA from the mean time of the cells run so far."""

    def __init__(self, total: int, jobs: int) -> None:
        self.total, self.jobs, self.done, self.ran, self.seconds = total, jobs, 0, 0, 0.0
        self.lock = threading.Lock()

    def finished(self, name: str, seconds: float, ran: bool) -> None:
        with self.lock:
            self.done += 1
            if ran:
                self.ran, self.seconds = self.ran + 1, self.seconds + seconds
            left = self.total - self.done
            eta = left * self.seconds / max(self.ran, 1) / self.jobs / 60 if self.ran else float("nan")
            print(f"[{time.strftime('%H:%M:%S')}] {self.done}/{self.total} cells done ({name}: {seconds:.0f} s); "
                  f"ETA {eta:.0f} min for {left} more", flush=True)


def run(args: argparse.Namespace) -> int:
    out = Path(args.out) if Path(args.out).is_absolute() else ROOT / args.out
    try:
        cells = [cell_named(n) for n in args.cells.split(",")] if args.cells else list(CELLS)
    except KeyError as err:
        print(f"--cells: {err.args[0]}", file=sys.stderr)
        return 2
    if not args.dry:
        out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # the work is in the simdist processes
        list(pool.map(lambda s: pretrain(out, s, args.dry), args.seeds))
        queue = [(cell, seed) for cell in cells for seed in args.seeds]
        progress = Progress(len(queue), args.jobs)

        def one(item: tuple[Cell, int]) -> None:
            cell, seed = item
            ran = not (out / f"{cell.name}-s{seed}" / "results.json").is_file()
            started = time.perf_counter()
            try:
                run_cell(cell, seed, out, args.dry)
            except SystemExit as err:  # one failed cell (its log named) does not stop the others
                print(f"{cell.name}-s{seed}: {err}", file=sys.stderr, flush=True)
                return
            progress.finished(f"{cell.name}-s{seed}", time.perf_counter() - started, ran)

        list(pool.map(one, queue))
    return 0
