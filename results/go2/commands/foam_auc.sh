#!/bin/bash
# The frozen value head's AUC on logged foam episodes, labelled as the protocol labels trials (success =
# reached the 3 m course end): a 0 + 8 minute schedule with the adaptation settings of pipeline5.sh.
# Results in results/go2/foam-auc/.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
simdist adapt --model hub/models/go2-foam --real foam --schedule 0,8 --out outputs/adapt/foam-auc --envs 16 \
  --samples 16 --iterations 1 --init-std 0.1 --warm-start policy --episodes-per-eval 5 --heldout-episodes 4 \
  --epochs 3 --windows-per-epoch 12000
mkdir -p results/go2/foam-auc && cp outputs/adapt/foam-auc/curve.{json,png} results/go2/foam-auc/
python - <<'PY'
import json
state = json.load(open("outputs/adapt/foam-auc/state.json"))
labels = [v for split in state["labels"].values() for v in split.values()]
print(f"logged episodes: {len(labels)}, reached the course end: {sum(labels)}")
json.dump({"episodes": len(labels), "successes": sum(labels)}, open("results/go2/foam-auc/labels.json", "w"))
PY
