"""The tables of docs/official.md from the committed results: ``python -m results.official.summarize`` writes
``results/official/tables.md`` (mean [95 % bootstrap CI], trials, falls; rows pool every seed file present)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from results.runner import ROOT, write_text
from simdist import bootstrap_ci

OUT = ROOT / "results" / "official"


def trials(path: Path) -> tuple[list[float], int]:
    """(progress per trial, falls) of one ``simdist evaluate --json`` result."""
    d = json.loads(path.read_text())
    speeds = d["details"]["protocol"]["speeds"]
    return [float(v) for v in d["values"]], sum(int(t) for s in speeds for t in s["terminated"])


def cell(values: list[float], falls: int) -> str:
    e = bootstrap_ci(values)
    return f"{e.mean:.2f} [{e.low:.2f}, {e.high:.2f}] | {len(values)} | {falls}"


def table(folder: str, title: str, label: str) -> str:
    rows: dict[str, tuple[list[float], int]] = defaultdict(lambda: ([], 0))
    for path in sorted((OUT / folder).glob("*.json")):
        if "values" not in json.loads(path.read_text()):
            continue  # not an evaluation (e.g. the actuator's binding statistics)
        name = re.sub(r"_seed\d+$", "", path.stem)
        values, falls = trials(path)
        old_values, old_falls = rows[name]
        rows[name] = (old_values + values, old_falls + falls)
    lines = [f"### {title}", "", f"| {label} | progress, m: mean [95 % CI] | trials | falls |", "|---|---|---|---|"]
    lines += [f"| `{name}` | {cell(*rows[name])} |" for name in sorted(rows)]
    return "\n".join(lines)


def ranking_table() -> str:
    """Spearman ρ of both models on the same candidates, per profile and spread (``run.py ranking``)."""
    lines = ["### Plan ranking, Spearman ρ [95 % CI] (run.py ranking)", "",
             "| profile | candidates' std | official | go2-slope | states |", "|---|---|---|---|---|"]
    for path in sorted((OUT / "ranking").glob("*.json")):
        models = json.loads(path.read_text())["models"]
        profile, std = path.stem.rsplit("_std", 1)
        rho = {k: models[k]["spearman"] for k in ("official", "zoo")}
        cells = " | ".join(f"{r['mean']:.2f} [{r['low']:.2f}, {r['high']:.2f}]" for r in rho.values())
        lines.append(f"| `{profile}` | {std} | {cells} | {rho['official']['n']} |")
    return "\n".join(lines)


def _rho(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ of two vectors (0 when either is constant; average ranks are not needed: no exact ties)."""
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    return float(np.corrcoef(ra, rb)[0, 1])


def _ci(values: list[float] | np.ndarray) -> str:
    e = bootstrap_ci([float(v) for v in values])
    return f"{e.mean:.2f} [{e.low:.2f}, {e.high:.2f}]"


def _rhos(pred: np.ndarray, true: np.ndarray) -> str:
    """Per-state (row) ρ of two (S, K) arrays, as mean [95 % CI] over states."""
    return _ci([_rho(a, b) for a, b in zip(pred, true)])


def split_rows(path: Path) -> dict[str, dict[str, str]]:
    """One ranking-split file (``run.py split``) as table cells: where the true spread lies (after the horizon,
    falls, reward terms), what each model's score ranks, and the ρ a score would reach with one part replaced by
    the truth (the ceiling each part sets)."""
    d = json.loads(path.read_text())
    parts = {k: np.array(v) for k, v in d["true_parts"].items()}
    total, horizon, tail, fell = np.array(d["true_returns"]), parts["horizon"], parts["tail"], parts["fell"]
    t = d["true_split"]
    # the tail's within-state variance explained by falling or not (between the fallen and the standing groups)
    fall_share = []
    for tl, f in zip(tail, fell):
        v = tl.var()
        groups = [tl[f == g] for g in (0.0, 1.0) if (f == g).any()]
        between = sum(len(g) * (g.mean() - tl.mean()) ** 2 for g in groups) / len(tl)
        fall_share.append(between / v if v > 0 else 0.0)
    terms = sorted(t["term_shares"].items(), key=lambda kv: -kv[1]["mean"])[:3]
    truth = {
        "true spread per state (max − min)": _ci(np.ptp(total, axis=1)),
        "share of the true within-state variance after the horizon (tail / (horizon + tail))":
            _ci([float(x) for x in (tail - tail.mean(1, keepdims=True)).var(1)
                 / np.maximum((horizon - horizon.mean(1, keepdims=True)).var(1)
                              + (tail - tail.mean(1, keepdims=True)).var(1), 1e-12)]),
        "candidates falling within the 25 steps": _ci(fell.mean(1)),
        "share of the tail's variance that is falling or not": _ci(fall_share),
        "largest reward terms' share of the variance (terms + tail)":
            ", ".join(f"{k} {v['mean']:.2f}" for k, v in terms),
        "ρ, true horizon part vs true return (a perfect reward part, no value)":
            _rhos(horizon, total),
    }
    models = {}
    for name, r in d["models"].items():
        pr, pv = np.array(r["split"]["predicted_rewards"]), np.array(r["split"]["predicted_values"])
        sp = r["split"]
        models[name] = {
            "ρ, whole score vs true return": _rhos(pr + pv, total),
            "ρ, predicted horizon rewards vs true horizon part": _rhos(pr, horizon),
            "ρ, value term vs true tail": _rhos(pv, tail),
            "ρ, value term vs true tail, standing candidates only": _ci([
                _rho(a[f == 0], b[f == 0]) for a, b, f in zip(pv, tail, fell) if (f == 0).sum() >= 4]),
            "ρ, whole score vs true horizon part / vs true tail":
                f"{_rhos(pr + pv, horizon)} / {_rhos(pr + pv, tail)}",
            "spread (max − min) of predicted rewards / value term / true tail":
                f"{_ci(np.ptp(pr, axis=1))} / {_ci(np.ptp(pv, axis=1))} / {_ci(np.ptp(tail, axis=1))}",
            "ρ with the true tail in place of the value term": _rhos(pr + tail, total),
            "ρ with the true horizon part in place of the predicted rewards": _rhos(horizon + pv, total),
            "value error, state mean removed (RMS)": f"{sp['value_error']['mean']:.2f}",
            "reward error, state mean removed (RMS)": f"{sp['reward_error']['mean']:.2f}",
        }
    return {"truth": truth, **models}


def split_table(files: list[Path], title: str) -> str:
    """Ranking splits (``run.py split``, ``run.py adapt``): one column per file, rows for the truth and per model
    (every model of any file; "—" where a file lacks it)."""
    cols = {p.stem: split_rows(p) for p in files}
    names = list(cols)
    lines = [f"### {title}", "",
             "| | " + " | ".join(f"`{n}`" for n in names) + " |", "|---" * (len(names) + 1) + "|"]
    groups = list(dict.fromkeys(g for c in cols.values() for g in c))  # every model of any file, in order
    rows = next(iter(cols.values()))
    for group in groups:
        for row in rows["truth" if group == "truth" else next(g for g in rows if g != "truth")]:
            label = row if group == "truth" else f"{group}: {row}"
            lines.append(f"| {label} | " + " | ".join(cols[n].get(group, {}).get(row, "—") for n in names) + " |")
    n = json.loads(files[0].read_text())["true_split"]["tail_share"]["n"]
    lines.append(f"\n{n} states × 16 candidates per column; mean [95 % bootstrap CI over states].")
    return "\n".join(lines)


def calibration_table() -> str:
    """Calibration of the adaptation profiles (``run.py calibrate``): progress per agent and profile."""
    rows = []
    for path in sorted((OUT / "calibration").glob("*.json")):
        agent, profile = path.stem.split("_", 1)
        values, falls = trials(path)
        rows.append(f"| `{profile}` | {agent} | {cell(values, falls)} |")
    return "\n".join(["### Calibration of the adaptation profiles (run.py calibrate)", "",
                      "| profile | agent | progress, m: mean [95 % CI] | trials | falls |", "|---|---|---|---|---|",
                      *rows])


def main() -> None:
    parts = ["# Official model and experts: measured rows (generated by `python -m results.official.summarize`)", ""]
    for folder, title, label in (("conventions", "Foot-wrench convention and actuator (conventions.py)", "row"),
                                 ("experts", "Experts on the protocol (run.py experts)", "expert_setting"),
                                 ("walks", "World models, nominal 10 m walks (run.py walks)", "model_budget_terrain")):
        if (OUT / folder).is_dir() and any((OUT / folder).glob("*.json")):
            parts += [table(folder, title, label), ""]
    if (OUT / "ranking").is_dir() and any((OUT / "ranking").glob("*.json")):
        parts += [ranking_table(), ""]
    if (OUT / "split").is_dir() and any((OUT / "split").glob("*.json")):
        parts += [split_table(sorted((OUT / "split").glob("*.json")),
                              "The ranking ceiling: true return and score split into parts (run.py split)"), ""]
    for run in sorted((OUT / "adapt").glob("*")) if (OUT / "adapt").is_dir() else []:
        files = sorted(run.glob("ranking*.json"))
        if files:
            parts += [split_table(files, f"Ranking on the adaptation profile, {run.name} (run.py adapt)"), ""]
    if (OUT / "calibration").is_dir() and any((OUT / "calibration").glob("*.json")):
        parts += [calibration_table(), ""]
    write_text(OUT / "tables.md", "\n".join(parts))
    print((OUT / "tables.md").read_text())


if __name__ == "__main__":
    main()
