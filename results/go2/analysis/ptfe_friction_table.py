"""Tables of the PTFE friction sweep: expert and zoo-model progress per friction, then the adaptation curves.

Made by `python -m results.go2.run friction-sweep`, which runs this script last.

Usage: python -m results.go2.analysis.ptfe_friction_table RESULTS_DIR   (writes RESULTS_DIR/table.md too)
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from results.go2.analysis.protocol_files import every_trial, protocol_record


def walk(path: Path) -> str:
    """Mean progress, its share of the course and the share of trials that fell, of one saved evaluation."""
    if not path.exists():
        return "not run"
    record = protocol_record(path)
    progress = float(np.mean(every_trial(record, "progress")))
    fell = float(np.mean(every_trial(record, "terminated")))
    return f"{progress:.2f} ({progress / record['course_length']:.0%}), fell {fell:.0%}"


def friction_table(folder: Path) -> list[str]:
    lines = ["| friction | expert (m of 1.82) | zoo model, MPPI + ensembling, zero-shot |", "|---|---|---|"]
    frictions = sorted(float(m.group(1)) for p in folder.glob("expert_mu*.json")
                       if (m := re.fullmatch(r"expert_mu([\d.]+)", p.stem)))
    for mu in frictions:
        expert, model = (walk(folder / f"{who}_mu{mu:g}.json") for who in ("expert", "simdist"))
        lines.append(f"| {mu:g} | {expert} | {model} |")
    return lines


def curve_table(folder: Path) -> list[str]:
    lines = ["| friction | real data (min) | forward progress (m of 1.82) | held-out consistency | value AUC |",
             "|---|---|---|---|---|"]
    for curve_file in sorted(folder.glob("adapt-mu*/curve.json")):
        mu = curve_file.parent.name.removeprefix("adapt-mu")
        curve = json.loads(curve_file.read_text())
        for minutes, value, cons, auc in zip(curve["minutes"], curve["value"], curve["consistency_after"],
                                             curve["value_auc"], strict=True):
            auc_text = "n/a" if auc is None else f"{auc:.2f}"
            lines.append(f"| {mu} | {minutes:.1f} | {value:.2f} | {cons:.4f} | {auc_text} |")
    return lines


def paper_planner_table(folder: Path) -> list[str]:
    lines = ["| model | paper's planner (450 + 22 x 8, std 2.0), friction 0.18, 0.3 m/s |", "|---|---|"]
    for path in sorted(folder.glob("paper_planner_*.json")):
        lines.append(f"| {path.stem.split('_')[-1]} | {walk(path)} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    folder = Path(parser.parse_args().folder)
    text = "\n".join([*friction_table(folder), "", *curve_table(folder), "", *paper_planner_table(folder)])
    print(text)
    (folder / "table.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
