#!/bin/bash
# Does a wider MPPI search use the adapted dynamics better than the real-time preset? Zero-shot base model and
# the 36-minute adapted model of each schedule, 3 trials per protocol speed, 64 + 2 samples x 2 iterations,
# initial std 0.3 around the policy's chunk. Run after pipeline5.sh; results in results/go2/wider-planner/.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
R=results/go2/wider-planner
mkdir -p $R
PLAN="--samples 64 --iterations 2 --init-std 0.3 --warm-start policy --trials 3 --json"
for P in ptfe57:ptfe-slope-5.7deg:go2-slope foam:foam:go2-foam; do
  IFS=: read -r RUN PROFILE BASE <<< "$P"
  simdist evaluate --controller model:hub/models/$BASE --profile $PROFILE $PLAN > $R/${RUN}_zero_shot.json
  simdist evaluate --controller model:outputs/adapt/$RUN/stages/stage-4 --profile $PROFILE $PLAN > $R/${RUN}_adapted36.json
done
