"""Value AUC of logged proxy-real episodes under several episode scores, for one adaptation run and model.

``final`` is the loop's score (``episode_value_score``): the bootstrap value (horizon end) of the episode's
last window, i.e. the value the model predicts for the state the episode ends in. The others read the
value at the first horizon step of every window (the loop's score before 2026-11-30) or the horizon end,
averaged over the episode's last quarter or the whole episode; first-step values never see an episode's
last ``horizon`` steps.
Usage: python -m results.go2.analysis.value_auc_scores RUN_DIR MODEL [--out JSON]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from simdist import WorldModel, roc_auc, value_trace
from simdist.data import iter_episodes


def last_quarter_mean(trace: np.ndarray) -> float:
    """Mean of the last quarter of a value trace (at least one entry; NaN for an empty trace)."""
    if not len(trace):
        return float("nan")
    return float(trace[-max(1, len(trace) // 4):].mean())


SCORES = {
    "final": lambda first, end: float(end[-1]),
    "end_last_quarter": lambda first, end: last_quarter_mean(end),
    "first_last_quarter": lambda first, end: last_quarter_mean(first),
    "first_whole_episode": lambda first, end: float(first.mean()),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("model")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    run = Path(args.run)
    state = json.loads((run / "state.json").read_text())
    model = WorldModel.from_pretrained(args.model)
    pad = model.config.history
    scores: dict[str, list[float]] = {name: [] for name in SCORES}
    labels, splits = [], []
    for split, folder in (("heldout", run / "heldout-data"), ("real", run / "real-data")):
        split_labels = state["labels"].get(split, {})
        for ep in iter_episodes(str(folder), shuffle_shards=False, split_by_node=False, split_by_worker=False):
            if str(ep.episode_id) not in split_labels:
                continue
            first = value_trace(model, ep, pad, horizon_step=0)
            if not len(first):
                continue
            end = value_trace(model, ep, pad, horizon_step=-1)
            for name, score in SCORES.items():
                scores[name].append(score(first, end))
            labels.append(bool(split_labels[str(ep.episode_id)]))
            splits.append(split)
    y = np.array(labels)
    out = {"run": str(run), "model": args.model, "episodes": len(labels), "successes": int(y.sum()),
           "auc": {name: roc_auc(np.array(s), y) for name, s in scores.items()},
           "mean_final_value": {"success": float(np.mean(np.array(scores["final"])[y])) if y.any() else None,
                                "failure": float(np.mean(np.array(scores["final"])[~y])) if (~y).any() else None}}
    held = np.array(splits) == "heldout"
    out["heldout_episodes"] = int(held.sum())
    out["auc_final_heldout_only"] = roc_auc(np.array(scores["final"])[held], y[held]) if held.any() else None
    print(json.dumps(out, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
