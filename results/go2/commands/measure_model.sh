#!/bin/bash
# The measurements of a pretrained Go2 checkpoint: held-out losses, export, MPPI (real-time preset) and the
# policy head in nominal simulation (10 m at 0.5 m/s, 10 randomised trials, flat and 5.7 deg slope), and the
# policy head's error along the expert's walks (walk_start_error.py) and along its own (on_policy_error.py).
# Usage: bash results/go2/commands/measure_model.sh RECIPE CKPT MODEL_OUT RESULTS_DIR
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
RECIPE=$1 CK=$2 M=$3 R=$4
TAG=$(basename "$R")
PLAN="--samples 16 --iterations 1 --init-std 0.1 --warm-start policy"
mkdir -p "$R" runs
simdist validate --config "$RECIPE" --ckpt_path "$CK" --trainer.limit_val_batches 40 > "$R/validate.log" 2>&1
simdist export --ckpt "$CK" --out "$M" > /dev/null
for T in flat slope; do
  E="simdist evaluate --controller model:$M --terrain $T --course-length 10 --speeds 0.5 --trials 10 --randomize --json"
  $E $PLAN > "$R/mppi_$T.json" 2> "runs/eval_${TAG}_mppi_$T.err"
  $E $PLAN --seed 1 > "$R/mppi_${T}_seed1.json" 2> "runs/eval_${TAG}_mppi_${T}_seed1.err"  # 10 more trials
  $E --planner policy > "$R/policy_$T.json" 2> "runs/eval_${TAG}_policy_$T.err"
  python results/go2/commands/walk_start_error.py "$M" $T --randomize --out "$R/walk_start_error_$T.json"
  python results/go2/commands/on_policy_error.py "$M" $T --out "$R/on_policy_error_$T.json"
done
echo "$(date +%T) measured $CK -> $R"
