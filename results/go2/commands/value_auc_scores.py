"""Value AUC of logged proxy-real episodes under two episode scores, for one adaptation run.

The loop's score (``episode_value_score``) is the mean predicted value over the last quarter of an episode;
the whole-episode mean is the other score. (Logs made before episodes ended at the course end walk on past
it, so there the last quarter scores what happened after the success.)
Usage: python results/go2/commands/value_auc_scores.py RUN_DIR MODEL [--out JSON]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from simdist.adaptation import last_quarter_mean, roc_auc, value_trace
from simdist.data import iter_episodes
from simdist.world_model import WorldModel


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
    last_quarter, whole, labels = [], [], []
    for split, folder in (("heldout", run / "heldout-data"), ("real", run / "real-data")):
        split_labels = state["labels"].get(split, {})
        for ep in iter_episodes(str(folder), shuffle_shards=False, split_by_node=False, split_by_worker=False):
            if str(ep.episode_id) not in split_labels:
                continue
            trace = value_trace(model, ep, pad)
            if not len(trace):
                continue
            last_quarter.append(last_quarter_mean(trace))
            whole.append(float(trace.mean()))
            labels.append(bool(split_labels[str(ep.episode_id)]))
    out = {"run": str(run), "model": args.model, "episodes": len(labels), "successes": int(sum(labels)),
           "auc_last_quarter": roc_auc(np.array(last_quarter), np.array(labels)),
           "auc_whole_episode": roc_auc(np.array(whole), np.array(labels))}
    print(json.dumps(out, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
