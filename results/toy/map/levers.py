"""The levers against the map's mechanism (docs/plan-ranking.md section 6.3): ``python -m results.toy.map levers``.

Each lever reruns the map cell's loop (``simdist demo --pretrained ... --real CELL.yaml``, the same seed, 96 logged
episodes, 32 trials a side) with one change, into ``OUT/levers/LEVER/CELL-sS/``; its ``results.json`` (written last,
atomically: a rerun skips finished runs) holds zero-shot and adapted with their 95 % intervals, the held-out real
consistency, the wall-clock seconds and, from the committed map cell, the best expert, so the gap closed is counted
as in the map. The levers, at the map's planning budget (128 samples × 4 iterations = 512 imagined sequences a
tick) unless the lever is the budget's shape:

- ``value``: the value head finetuned too (``--freeze dynamics,value``, on the real episodes' TD returns): an
  ablation beyond the paper's dynamics-only recipe;
- ``horizon16``: a model pretrained to predict 16 steps (``--option horizon=16``), so the planner scores 16 steps
  by predicted rewards before the value head, at 64 samples (the same imagined steps a tick);
- ``epochs24``: twice the finetuning (24 epochs);
- ``wide``: 256 samples × 2 iterations (a wider search, same budget);
- ``narrow``: the initial sampling std 0.5 instead of MPPI's 2.0 (a narrower search);
- ``ensemble``: four dynamics members with the disagreement penalty 1.0 (``--option ensemble=4``,
  ``--option disagreement=1.0``; pretrained for it);
- ``decision``: decision-aware finetuning (``--option decision=1.0``): besides latent consistency, the frozen
  reward and value heads on the predicted latents against the same heads on the true ones, so the dynamics are
  fitted where the planner's score reads them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from results.runner import ROOT, run_command, simdist_command, write_json, write_text
from results.toy.map.grid import cell_named
from results.toy.map.run import Progress, pretrained_model, profile_yaml
from results.toy.map.summary import from_demo, versus
from results.toy.map.table import ci

#: lever → (its demo options, the options its own pretraining takes; None: the map's pretrained model)
LEVERS: dict[str, tuple[tuple[str, ...], tuple[str, ...] | None]] = {
    "value": (("--freeze", "dynamics,value"), None),
    "horizon16": (("--option", "horizon=16", "--num-samples", "64"), ("--option", "horizon=16")),
    "epochs24": (("--epochs", "24"), None),
    "wide": (("--num-samples", "256", "--iterations", "2"), None),
    "narrow": (("--init-std", "0.5"), None),
    "ensemble": (("--option", "ensemble=4", "--option", "disagreement=1.0"), ("--option", "ensemble=4")),
    "decision": (("--option", "decision=1.0"), None),
}
#: the failing cells the levers run on first (the expert beats zero-shot, adapted does not), and ``lag`` to keep
DEFAULT_CELLS = ("lag", "L2-G0.7-M2-F0.01-T-0.05", "G0.5", "L4", "G4")
COMMITTED = ROOT / "results" / "toy" / "map" / "cells"


def lever_model(out: Path, lever: str, seed: int, dry: bool) -> Path:
    """The pretrained model the lever's runs start from: the map's, or its own (pretrained once per seed)."""
    pretrain = LEVERS[lever][1]
    if pretrain is None:
        return pretrained_model(out, seed)
    folder = out / "levers" / lever / f"pretrain-s{seed}"
    if not (folder / "toy-sim" / "config.json").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        run_command(simdist_command("demo", "--task", "toy-reach", "--pretrain-only", "--seed", str(seed), *pretrain,
                                    "--out", str(folder), "--no-progress"), out / "levers" / f"{lever}-s{seed}.log",
                    dry)
    return folder / "toy-sim"


def summary(cell: str, seed: int, lever: str, run: Path, seconds: float) -> dict[str, Any]:
    """The lever run's numbers beside the committed map cell's (its best expert, zero-shot and adapted)."""
    demo = json.loads((run / "results.json").read_text())
    zs, ad = from_demo(demo, "real_zero_shot"), from_demo(demo, "real_adapted")
    base = json.loads((COMMITTED / f"{cell}-s{seed}.json").read_text())
    best = base["returns"][base["best_expert"]]
    gap = versus(zs, best) == "higher"
    return {
        "cell": cell, "seed": seed, "lever": lever, "options": list(LEVERS[lever][0]),
        "returns": {"zero_shot": zs, "adapted": ad, "best_expert": best,
                    "map_adapted": base["returns"]["adapted"]},
        "best_expert": base["best_expert"],
        "expert_beats_zero_shot": gap,
        "adapted_vs_zero_shot": versus(zs, ad),
        "adapted_vs_map_adapted": versus(base["returns"]["adapted"], ad),
        "gap_closed": (ad["mean"] - zs["mean"]) / (best["mean"] - zs["mean"]) if gap else None,
        "heldout_consistency": demo["heldout_consistency"],
        "seconds": seconds,
    }


def run_lever(lever: str, cell_name: str, seed: int, out: Path, dry: bool) -> None:
    """One lever on one cell (skipped when its ``results.json`` exists)."""
    folder = out / "levers" / lever / f"{cell_name}-s{seed}"
    if (folder / "results.json").is_file():
        return
    folder.mkdir(parents=True, exist_ok=True)
    profile = folder / "profile.yaml"
    write_text(profile, profile_yaml(cell_named(cell_name)))
    model = lever_model(out, lever, seed, dry)
    run = folder / "run"
    started = time.perf_counter()
    run_command(simdist_command("demo", "--task", "toy-reach", "--pretrained", str(model), "--real", str(profile),
                                "--seed", str(seed), "--out", str(run), "--no-progress", "--overwrite",
                                *LEVERS[lever][0]), folder / "log.txt", dry)
    if not dry:
        write_json(folder / "results.json", summary(cell_name, seed, lever, run, time.perf_counter() - started))


def main(args: argparse.Namespace) -> int:
    out = Path(args.out) if Path(args.out).is_absolute() else ROOT / args.out
    levers = args.levers.split(",")
    cells = args.cells.split(",") if args.cells else list(DEFAULT_CELLS)
    for name in levers:
        if name not in LEVERS:
            print(f"--levers: {name!r} is not a lever ({', '.join(LEVERS)})", file=sys.stderr)
            return 2
    for name in cells:
        try:
            cell_named(name)
        except KeyError as err:
            print(f"--cells: {err.args[0]}", file=sys.stderr)
            return 2
    queue = [(lever, cell, seed) for lever in levers for cell in cells for seed in args.seeds]
    missing = [f"{c}-s{s}" for _, c, s in queue if not (COMMITTED / f"{c}-s{s}.json").is_file()]
    if missing:
        print(f"--cells: no committed map cell for {', '.join(sorted(set(missing)))} (run the map first)",
              file=sys.stderr)
        return 2
    for seed in args.seeds:
        if not (pretrained_model(out, seed) / "config.json").is_file():
            print(f"--out {out}: no pretrained map model for seed {seed} (python -m results.toy.map run --seeds {seed} "
                  f"--out {args.out} makes it)", file=sys.stderr)
            return 2
    progress = Progress(len(queue), 1)
    for lever, cell, seed in queue:
        name = f"{lever}/{cell}-s{seed}"
        ran = not (out / "levers" / lever / f"{cell}-s{seed}" / "results.json").is_file()
        started = time.perf_counter()
        try:
            run_lever(lever, cell, seed, out, args.dry)
        except SystemExit as err:  # one failed run (its log named) does not stop the others
            print(f"{name}: {err}", file=sys.stderr, flush=True)
            continue
        progress.finished(name, time.perf_counter() - started, ran)
    return 0


LEVERS_DIR = ROOT / "results" / "toy" / "map" / "levers"


def table(runs: str | None) -> int:
    """Copy the finished lever runs from ``runs`` (``OUT``) into ``results/toy/map/levers/LEVER-CELL-sS.json``,
    then write ``results/toy/map/levers/table.md`` from every committed one."""
    LEVERS_DIR.mkdir(parents=True, exist_ok=True)
    if runs is not None:
        base = Path(runs) if Path(runs).is_absolute() else ROOT / runs
        for done in sorted((base / "levers").glob("*/*-s*/results.json")):
            shutil.copyfile(done, LEVERS_DIR / f"{done.parent.parent.name}-{done.parent.name}.json")
    rows = sorted((json.loads(p.read_text()) for p in LEVERS_DIR.glob("*.json")),
                  key=lambda r: (list(LEVERS).index(r["lever"]), r["cell"], r["seed"]))

    mark = {"higher": "**higher**", "lower": "*lower*", "no difference": "no difference"}
    lines = ["| lever | cell | seed | zero-shot | adapted | vs zero-shot | map's adapted (dynamics only) | vs map's "
             "adapted | best expert | gap closed | held-out real consistency | minutes |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ret, cons = r["returns"], r["heldout_consistency"]
        gap = f"{r['gap_closed']:.0%}" if r["gap_closed"] is not None else "— (no gap)"
        lines.append(f"| `{r['lever']}` | `{r['cell']}` | {r['seed']} | {ci(ret['zero_shot'])} | {ci(ret['adapted'])} "
                     f"| {mark[r['adapted_vs_zero_shot']]} | {ci(ret['map_adapted'])} | "
                     f"{mark[r['adapted_vs_map_adapted']]} | {ci(ret['best_expert'])} ({r['best_expert']}) | {gap} | "
                     f"{cons['pretrained']:.3f} → {cons['adapted']:.3f} | {r['seconds'] / 60:.1f} |")
    text = ("# The levers on the map's cells\n\n`python -m results.toy.map levers-table --runs outputs/toy-map` "
            "(the runs: `python -m results.toy.map levers`; docs/plan-ranking.md section 6). Every return is a "
            "mean [95 % bootstrap interval] over 32 trials; two differ only when their intervals are apart.\n\n"
            + "\n".join(lines) + "\n")
    write_text(LEVERS_DIR / "table.md", text)
    print(text)
    return 0
