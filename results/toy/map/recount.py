"""The map's evaluations recounted at HEAD: ``python -m results.toy.map.recount [--cells lag,L4] [--seeds 0 1]
[--runs outputs/toy-map] [--dry-run]``.

Every committed cell (``cells/CELL-sSEED.json``) was measured before the rollout counted the first episodes to
*start* (commit 1f9907a): an evaluation with fewer envs than trials kept the first ones to *finish*, favouring short
episodes. This reruns, with the arguments :func:`results.toy.map.run.run_cell` used (32 trials, 16 envs, seed
cell seed + 2, the cell's profile from :func:`results.toy.map.run.profile_yaml`):

* ``expert`` and, for a cell with a latency or a gain, ``retuned``: ``simdist evaluate --agent expert|retuned``;
* ``zero_shot``: the demo loop's zero-shot stage (``ToyEvaluator``, stage 0), as ``simdist evaluate
  --agent RUNS/pretrain-sS/toy-sim --planner-preset paper --num-samples 128 --iterations 4`` (MPPI with 16 elites,
  the demo's ToyScale budget; the rollout reseeds the planner with the evaluation seed, as the demo's does). It
  reproduces the demo's per-episode returns exactly (lag-s0 at HEAD: 8.670 [7.585, 9.799]); cells whose seed has no
  pretrained model under ``--runs`` are left out.

Each evaluation's ``--json`` output goes to ``recount/CELL-sSEED.AGENT.json`` and is skipped when present (a killed
run resumes); a cell rerun whole at HEAD since keeps its earlier summary in ``recount/before-fix/``; the profiles
and the log go to ``--work`` (git ignores ``outputs/``). Last, ``recount/table.md``: per cell the committed and the
recounted estimates (mean [95 % bootstrap CI]), and the verdict ``adapted vs zero-shot``
(:func:`results.toy.map.summary.versus`) committed and with the recounted zero-shot against the committed adapted
interval (the adapted models are not re-evaluated).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from results.runner import ROOT, estimate_cell, run_command, simdist_command, write_text
from results.toy.map.grid import CELLS, Cell, cell_named
from results.toy.map.run import ENVS, ITERATIONS, SAMPLES, TRIALS, pretrained_model, profile_yaml
from results.toy.map.summary import estimate, versus

HERE = Path(__file__).resolve().parent
CELLS_DIR = HERE / "cells"
OUT = HERE / "recount"
#: the cells as committed before the fix, kept for those that a whole rerun at HEAD replaced in ``cells/``
BEFORE_FIX = OUT / "before-fix"
AGENTS = ("expert", "retuned", "zero_shot")
Estimate = dict[str, float]


def committed(cell: Cell, seed: int) -> dict[str, Any] | None:
    """The summary of ``cell`` on ``seed`` as measured before the fix (None when there is none): the committed cell,
    or its copy in :data:`BEFORE_FIX` where a whole rerun at HEAD has since replaced it."""
    name = f"{cell.name}-s{seed}.json"
    path = BEFORE_FIX / name if (BEFORE_FIX / name).is_file() else CELLS_DIR / name
    return json.loads(path.read_text()) if path.is_file() else None


def evaluate_command(cell: Cell, seed: int, agent: str, profile: Path, runs: Path) -> list[str] | None:
    """``simdist evaluate`` of ``agent`` on the cell's profile as :func:`~results.toy.map.run.run_cell` ran it
    (``zero_shot``: the demo's zero-shot stage); None where the cell has no such evaluation."""
    args = ["evaluate", "--task", "toy-reach", "--profile", str(profile), "--trials", str(TRIALS), "--envs",
            str(ENVS), "--seed", str(seed + 2), "--json"]
    if agent == "expert":
        return simdist_command(*args, "--agent", "expert")
    if agent == "retuned":
        return simdist_command(*args, "--agent", "retuned") if cell.latency or cell.gain != 1.0 else None
    model = pretrained_model(runs, seed)
    if not (model / "config.json").is_file():
        return None
    return simdist_command(*args, "--agent", str(model), "--planner-preset", "paper", "--num-samples", str(SAMPLES),
                           "--iterations", str(ITERATIONS))


def result_path(cell: Cell, seed: int, agent: str) -> Path:
    return OUT / f"{cell.name}-s{seed}.{agent}.json"


def recounted(cell: Cell, seed: int, agent: str) -> Estimate | None:
    """The recounted estimate (the committed estimator on the evaluation's returns), None when not measured."""
    path = result_path(cell, seed, agent)
    return estimate(json.loads(path.read_text())["values"]) if path.is_file() else None


def measure(items: list[tuple[Cell, int]], runs: Path, work: Path, dry: bool) -> None:
    """Every evaluation of ``items`` not yet in :data:`OUT`, the cheap experts first, then the zero-shot stages."""
    OUT.mkdir(parents=True, exist_ok=True)
    for agent in AGENTS:
        for cell, seed in items:
            out = result_path(cell, seed, agent)
            profile = work / "profiles" / f"{cell.name}.yaml"
            cmd = evaluate_command(cell, seed, agent, profile, runs)
            if cmd is None or out.is_file():
                continue
            if not dry:
                profile.parent.mkdir(parents=True, exist_ok=True)
                write_text(profile, profile_yaml(cell))
            run_command(cmd, work / "log.txt", dry, stdout=out)


#: a mean that moves by less is unchanged at the table's three decimals
MATERIAL = 1e-3


def _shift(shift: float) -> str:
    return "=" if shift == 0 else f"{shift:+.3f}" if abs(shift) >= MATERIAL / 2 else f"{shift:+.0e}"


def _outside(old: Estimate | None, new: Estimate | None) -> bool:
    """Whether ``new``'s mean lies outside ``old``'s interval (False where either is missing)."""
    return old is not None and new is not None and not old["low"] <= new["mean"] <= old["high"]


def _change(old: Estimate | None, new: Estimate | None) -> str:
    """``new`` with its shift from ``old``; ``†`` where its mean leaves ``old``'s interval."""
    if new is None:
        return "—"
    if old is None:
        return estimate_cell(new)
    return f"{estimate_cell(new)} ({_shift(new['mean'] - old['mean'])}){' †' if _outside(old, new) else ''}"


def row(r: dict[str, Any], cell: Cell) -> tuple[str, dict[str, Any]]:
    """One cell's table row and what changed in it."""
    seed, ret = r["seed"], r["returns"]
    new = {agent: recounted(cell, seed, agent) for agent in AGENTS}
    got = {agent: e for agent, e in new.items() if e is not None}  # the measured ones
    verdict = versus(got["zero_shot"], ret["adapted"]) if "zero_shot" in got else None
    changed = {agent: agent in got and abs(got[agent]["mean"] - ret[agent]["mean"]) >= MATERIAL for agent in AGENTS}
    outside = {agent: _outside(ret.get(agent), new[agent]) for agent in AGENTS}
    flip = verdict is not None and verdict != r["adapted_vs_zero_shot"]
    experts = [got[a] for a in ("expert", "retuned") if a in got]
    best = max(experts, key=lambda e: e["mean"]) if experts else None
    beats = versus(got.get("zero_shot", ret["zero_shot"]), best) == "higher" if best else None

    def old(agent: str) -> str:
        return estimate_cell(ret[agent]) if agent in ret else "—"

    line = (f"| `{cell.name}` | {seed} | {old('expert')} | {_change(ret.get('expert'), new['expert'])} | "
            f"{old('retuned')} | {_change(ret.get('retuned'), new['retuned'])} | {old('zero_shot')} | "
            f"{_change(ret['zero_shot'], new['zero_shot'])} | {old('adapted')} | {r['adapted_vs_zero_shot']} | "
            f"{'—' if verdict is None else f'**{verdict}**' if flip else verdict} |")
    return line, {"changed": changed, "outside": outside, "flip": flip,
                  "beats_flip": beats is not None and beats != r["expert_beats_zero_shot"]}


def table(items: list[tuple[Cell, int]]) -> str:
    """The recount's table of ``items`` (committed cells only) and what changed, counted."""
    head = ("| cell | seed | expert committed | expert at HEAD (shift) | retuned committed | retuned at HEAD (shift) | "
            "zero-shot committed | zero-shot at HEAD (shift) | adapted committed | verdict committed | verdict with "
            "the zero-shot at HEAD |\n|---|---|---|---|---|---|---|---|---|---|---|")
    rows, notes = [], []
    for cell, seed in items:
        r = committed(cell, seed)
        if r is not None:
            line, note = row(r, cell)
            rows.append(line)
            notes.append((f"{cell.name}-s{seed}", note))

    def count(agent: str, key: str) -> str:
        names = [n for n, note in notes if note[key][agent]]
        measured = sum(1 for cell, seed in items if result_path(cell, seed, agent).is_file())
        return f"{len(names)} of {measured}" + (f" ({', '.join(names)})" if names else "")

    lines = [f"- {agent}: the mean moves by {MATERIAL:g} or more on {count(agent, 'changed')}; it leaves the "
             f"committed interval on {count(agent, 'outside')}" for agent in AGENTS]
    flips = [n for n, note in notes if note["flip"]]
    beats = [n for n, note in notes if note["beats_flip"]]
    lines.append(f"- verdict adapted vs zero-shot changes on {len(flips)} cells" +
                 (f": {', '.join(flips)}" if flips else ""))
    lines.append(f"- 'best expert beats zero-shot' (the recounted experts against the recounted zero-shot, else the "
                 f"committed one) changes on {len(beats)} cells" + (f": {', '.join(beats)}" if beats else ""))
    legend = ("Estimates: mean [95 % bootstrap CI], 32 trials; (shift) the HEAD mean minus the committed one, "
              "`=` identical (the interval can still move a little: the same returns in start order resample "
              "differently); † the HEAD mean lies outside the committed interval; `—` not measured (zero-shot: no "
              "pretrained model of that seed under --runs). The last column compares the committed adapted interval "
              "(not re-evaluated) with the zero-shot one at HEAD; bold: the verdict changes.")
    return "\n".join(["# The toy map's evaluations recounted at HEAD (python -m results.toy.map.recount)", "", legend,
                      "", *lines, "", head, *rows]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m results.toy.map.recount", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", default=None, help="comma-separated cell names (default: the whole grid)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--runs", default="outputs/toy-map", help="the map's run folder (its pretrain-sS/toy-sim)")
    parser.add_argument("--work", default="outputs/toy-map-recount", help="profiles and log (default %(default)s)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands only")
    args = parser.parse_args(argv)
    try:
        cells = [cell_named(n.strip()) for n in args.cells.split(",")] if args.cells else list(CELLS)
    except KeyError as err:
        print(f"--cells: {err.args[0]}", file=sys.stderr)
        return 2
    runs, work = (Path(p) if Path(p).is_absolute() else ROOT / p for p in (args.runs, args.work))
    items = [(cell, seed) for seed in args.seeds for cell in cells if committed(cell, seed) is not None]
    measure(items, runs, work, args.dry_run)
    if args.dry_run:
        return 0
    text = table([(cell, seed) for seed in (0, 1) for cell in CELLS])  # every committed cell, measured or not
    write_text(OUT / "table.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
