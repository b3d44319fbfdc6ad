"""What adaptation teaches the dynamics on a map cell: the level or the response? ``python -m results.toy.map
response --cells CELL-sSEED,...`` (the cells' models from ``--runs``, once a cell's loop has finished).

Per cell, the cell's own ranking measurement (``simdist mechanism``: the zero-shot planner visits 40 states, 32 of
its candidates each) with ``--response``: each candidate runs open loop on the cell's profile and both models'
latent predictions are compared with the encoded observations it reached, split into the level every candidate
shares and the response that tells them apart (:mod:`simdist.diagnostics.response`). Writes
``results/toy/map/response/CELL-sSEED.json`` (with the cell's closed-loop returns and held-out consistency from the
same run's ``results.json``, which the models come from) and ``table.md``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from results.runner import ROOT, estimate_cell, run_command, write_json, write_text
from results.toy.map.run import pretrained_model, ranking_command

HERE = Path(__file__).resolve().parent
OUT = HERE / "response"
KEYS = ("latent_error", "offset_error", "response_unexplained", "response_gain", "response_cosine")


def _row(name: str, report: dict[str, Any]) -> str:
    run = report["cell"]
    ret, cons = run["returns"], run["heldout_consistency"]
    z, a = report["models"]["zero_shot"]["response"], report["models"]["adapted"]["response"]
    pairs = " | ".join(f"{estimate_cell(z[k])} → {estimate_cell(a[k])}" for k in KEYS)
    return (f"| `{name}` | {ret['zero_shot']['mean']:.2f} → {ret['adapted']['mean']:.2f} "
            f"({run['adapted_vs_zero_shot']}) | {cons['pretrained']:.3f} → {cons['adapted']:.3f} | {pairs} |")


def table(names: list[str]) -> str:
    """The table of every measured cell (``names``, in order)."""
    head = ("| cell | return zero-shot → adapted (32 trials each) | held-out consistency | latent error | its level "
            "part | response unexplained | response gain | response cosine |\n|---|---|---|---|---|---|---|---|")
    rows = [_row(n, json.loads((OUT / f"{n}.json").read_text())) for n in names]
    return "\n".join([head, *rows]) + "\n"


def main(args: argparse.Namespace) -> int:
    runs = Path(args.runs)
    names = [c.strip() for c in args.cells.split(",") if c.strip()]
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names:
        folder, seed = runs / name, int(name.rsplit("-s", 1)[1])
        if not (folder / "run" / "results.json").is_file():
            raise SystemExit(f"response: {folder} has no finished loop; run `python -m results.toy.map run` first")
        out = OUT / f"{name}.json"
        if not out.is_file():
            measured = folder / "response.json"
            if not measured.is_file():
                run_command(ranking_command(folder, pretrained_model(runs, seed), seed, measured, "--response"),
                            folder / "response-log.txt", False)
            report = json.loads(measured.read_text())
            report["cell"] = {k: v for k, v in json.loads((folder / "results.json").read_text()).items()
                              if k in ("cell", "seed", "returns", "adapted_vs_zero_shot", "heldout_consistency")}
            write_json(out, report)
    done = sorted(p.stem for p in OUT.glob("*.json"))
    write_text(OUT / "table.md", table(done))
    print(f"{len(done)} cells in {(OUT / 'table.md').relative_to(ROOT)}")
    return 0
