"""One cell's summary (``results.json``) from the files its steps wrote (:mod:`.run`), and the comparisons the
map's table draws from it: every return is a mean with its 95 % bootstrap interval and trial count, and two
returns differ only when their intervals are apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from results.toy.map.grid import Cell
from simdist import bootstrap_ci


def estimate(values: list[float]) -> dict[str, float]:
    """Mean, 95 % bootstrap interval and trial count of ``values`` (the demo's estimator)."""
    e = bootstrap_ci(values)
    return {"mean": e.mean, "low": e.low, "high": e.high, "n": e.n}


def from_demo(r: dict[str, Any], key: str) -> dict[str, float]:
    """A return of the demo's ``results.json`` in the same form."""
    low, high = r["return_ci95"][key]
    return {"mean": r["return"][key], "low": low, "high": high, "n": r["trials"][key]}


def versus(before: dict[str, float], after: dict[str, float]) -> str:
    """``higher``, ``lower`` or ``no difference`` (intervals overlapping) of ``after`` against ``before``."""
    if after["low"] > before["high"]:
        return "higher"
    if after["high"] < before["low"]:
        return "lower"
    return "no difference"


def summarise(cell: Cell, seed: int, folder: Path, timing: dict[str, float]) -> dict[str, Any]:
    """The cell's numbers: nominal, zero-shot, adapted and the experts' returns; which expert is best; whether it
    beats zero-shot beyond the intervals and, where it does, the fraction of that gap adaptation closes; the
    held-out real consistency and the plan ranking before and after."""
    demo = json.loads((folder / "run" / "results.json").read_text())
    returns = {"sim": from_demo(demo, "sim"), "zero_shot": from_demo(demo, "real_zero_shot"),
               "adapted": from_demo(demo, "real_adapted")}
    for agent in ("expert", "retuned"):
        path = folder / f"{agent}.json"
        if path.is_file():
            returns[agent] = estimate(json.loads(path.read_text())["values"])
    best = max((a for a in ("expert", "retuned") if a in returns), key=lambda a: returns[a]["mean"])
    zs, ad, ex = returns["zero_shot"], returns["adapted"], returns[best]
    expert_gap = versus(zs, ex) == "higher"
    ranking = json.loads((folder / "ranking.json").read_text())["models"]
    return {
        "cell": cell.name, "kind": cell.kind, "factors": cell.factors(), "profile": cell.profile(), "seed": seed,
        "returns": returns,
        "best_expert": best,
        "expert_beats_zero_shot": expert_gap,
        "adapted_vs_zero_shot": versus(zs, ad),
        "gap_closed": (ad["mean"] - zs["mean"]) / (ex["mean"] - zs["mean"]) if expert_gap else None,
        "heldout_consistency": demo["heldout_consistency"],
        "ranking": {name: {k: ranking[name][k] for k in ("spearman", "regret")} for name in ("zero_shot", "adapted")},
        "real_minutes": demo["real_minutes"],
        "seconds": timing,
    }
