#!/bin/bash
# Stage 3 (walk starts): data with standing starts from expert 2549, 7,000 more steps from the stage-2 model,
# then the same measurements as before on the result: the policy head's error after the walk starts, and
# MPPI / the policy head in nominal simulation (10 m at 0.5 m/s, 10 randomised trials; flat and slope).
# Results in results/go2/walk-start/; logs in runs/. Steps already done (data, checkpoint) are resumed.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
R=results/go2/walk-start
M=outputs/go2/pretrain-ws/model
CK=outputs/go2/pretrain-ws/checkpoints/last.ckpt
PLAN="--samples 16 --iterations 1 --init-std 0.1 --warm-start policy"
mkdir -p $R runs
simdist generate --task go2 --experts hub/experts/go2 --out data/go2/sim-cpu-ws --preset cpu > runs/gen_ws.log 2>&1
if [ -f $CK ]; then RESUME=$CK; else RESUME=outputs/go2/pretrain-cont/checkpoints/last.ckpt; fi
simdist fit --config recipes/go2-slope/pretrain-walk-starts.yaml --ckpt_path $RESUME > runs/pretrain_ws.log 2>&1
simdist validate --config recipes/go2-slope/pretrain-walk-starts.yaml --ckpt_path $CK --trainer.limit_val_batches 40 > runs/validate_ws.log 2>&1
simdist export --ckpt $CK --out $M > /dev/null
for T in flat slope; do
  python results/go2/commands/walk_start_error.py $M $T --randomize --out $R/go2-ws-27k_$T.json
  E="simdist evaluate --controller model:$M --terrain $T --course-length 10 --speeds 0.5 --trials 10 --randomize --json"
  $E $PLAN > $R/mppi_$T.json 2> runs/eval_ws_mppi_$T.err
  $E --planner policy > $R/policy_$T.json 2> runs/eval_ws_policy_$T.err
done
