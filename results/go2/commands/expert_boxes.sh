#!/bin/bash
# The expert's 20 s bars on boxes and rough terrain at the data engine's difficulties (uniform in [0, 1]:
# the midpoints 0.1 ... 0.9 of five equal bins estimate the average), plus flat, slope and the hardest tile.
# Usage: results/go2/commands/expert_boxes.sh EXPERT_DIR OUT_DIR
set -euo pipefail
EXPERT=${1:-hub/experts/go2}
OUT=${2:-results/go2/expert20s}
mkdir -p "$OUT"
export OMP_WAIT_POLICY=PASSIVE
EVAL="simdist evaluate --task go2 --controller expert:$EXPERT --course-length 10 --time-factor 1 --speeds 0.5 --trials 20 --randomize --json"
for T in flat slope; do $EVAL --terrain $T > "$OUT/$T.json"; done
for T in boxes rough; do
  for D in 0.1 0.3 0.5 0.7 0.9 1.0; do $EVAL --terrain $T --difficulty $D > "$OUT/${T}_d$D.json"; done
done
python - "$OUT" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
rows = []
for f in sorted(out.glob("*.json")):
    if f.name == "summary.json":
        continue
    s = json.loads(f.read_text())["speeds"][0]
    ok = sum(not t for t in s["terminated"])
    rows.append({"run": f.stem, "no_termination": ok, "trials": len(s["terminated"]),
                 "speed": sum(s["forward_speed"]) / len(s["forward_speed"])})
for kind in ("boxes", "rough"):
    mid = [r for r in rows if r["run"].startswith(kind) and not r["run"].endswith("d1.0")]
    avg = sum(r["no_termination"] / r["trials"] for r in mid) / len(mid)
    rows.append({"run": f"{kind}_uniform_difficulty", "no_termination_rate": avg})
(out / "summary.json").write_text(json.dumps(rows, indent=1))
for r in rows:
    print(r)
PY
