#!/bin/bash
# More trials for a stage-4 EMA checkpoint measured by ema_stage4.sh (default: 37,000 steps): MPPI (real-time
# preset) with temporal ensembling 0.8 on seeds 2 and 3 (trials the choice was not made on), without it on
# seeds 0-3, and the policy head alone with and without it on seeds 0-1; 10 m at 0.5 m/s, 10 randomised trials
# per seed, flat and 5.7 deg slope. Two evaluations at a time, one thread each. Resumes (skips finished files).
# Usage: bash results/go2/commands/ema_confirm.sh [NAME (37000)]
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1
N=${1:-37000}
M=outputs/go2/pretrain-s4-ema/model-$N R=results/go2/stage4-ema/$N
PLAN="--samples 16 --iterations 1 --init-std 0.1 --warm-start policy"
source results/go2/commands/walk_eval.sh
ev() {  # FILE_STEM ARGS...
  local F=$R/$1.json; shift
  walk_eval $F $M "$@"
}
jobs=()
for T in slope flat; do
  for S in 2 3; do jobs+=("mppi_te0.8_${T}_seed$S --terrain $T $PLAN --temporal-ensemble 0.8 --seed $S"); done
  for S in 0 1 2 3; do jobs+=("mppi_${T}_seed$S --terrain $T $PLAN --seed $S"); done
  for S in 0 1; do
    jobs+=("policy_${T}_seed$S --terrain $T --planner policy --seed $S")
    jobs+=("policy_te0.8_${T}_seed$S --terrain $T --planner policy --temporal-ensemble 0.8 --seed $S")
  done
done
for ((i = 0; i < ${#jobs[@]}; i += 2)); do
  ev ${jobs[i]} &
  [ $((i + 1)) -lt ${#jobs[@]} ] && ev ${jobs[i + 1]} &
  wait
  echo "$(date +%T) ${jobs[i]%% *} ${jobs[i + 1]%% *}"
done
python results/go2/commands/summarize_walks.py $R --out $R/table.md
