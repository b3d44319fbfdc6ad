#!/bin/bash
# Stage 4 with weight averaging (recipes/go2-slope/pretrain-stage4-ema.yaml: resumed from the 32,000-step
# checkpoint of pretrain-stage4.yaml, EMA decay 0.999, to 37,000 steps), then each kept checkpoint measured in
# nominal simulation: held-out losses, and MPPI (real-time preset, temporal ensembling 0.8) on 10 m at 0.5 m/s,
# 10 randomised trials per seed, flat and 5.7 deg slope, seeds 0 and 1; the raw (non-averaged) weights of the
# last checkpoint the same way (no held-out losses for them: validation reads the averaged weights). Results in results/go2/stage4-ema/<checkpoint>/; resumes.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
RECIPE=recipes/go2-slope/pretrain-stage4-ema.yaml
RUN=outputs/go2/pretrain-s4-ema
R=results/go2/stage4-ema
PLAN="--samples 16 --iterations 1 --init-std 0.1 --warm-start policy --temporal-ensemble 0.8"
source results/go2/commands/walk_eval.sh
if [ ! -f $RUN/checkpoints/step37000.ckpt ]; then
  if [ -f $RUN/checkpoints/last.ckpt ]; then RESUME=$RUN/checkpoints/last.ckpt; else RESUME=outputs/go2/pretrain-s4/step32000.ckpt; fi
  simdist fit --config $RECIPE --ckpt_path $RESUME >> runs/stage4-ema.log 2>&1
fi
measure() {  # NAME CKPT [EXPORT_FLAGS]
  local N=$1 CK=$2; shift 2
  local M=$RUN/model-$N
  mkdir -p $R/$N
  # validation reads the checkpoint's state_dict, the averaged weights: not for the raw ones
  [ $# -gt 0 ] || [ -s $R/$N/validate.log ] || simdist validate --config $RECIPE --ckpt_path $CK --trainer.limit_val_batches 40 > $R/$N/validate.log 2>&1
  [ -f $M/config.json ] || simdist export --ckpt $CK --out $M "$@" > /dev/null
  for T in flat slope; do for S in 0 1; do
    walk_eval $R/$N/mppi_te0.8_${T}_seed$S.json $M --terrain $T $PLAN --seed $S
  done; done
  echo "$(date +%T) measured $N"
}
measure 37000 $RUN/checkpoints/step37000.ckpt
measure 35000 $RUN/checkpoints/step35000.ckpt
measure 37000-raw $RUN/checkpoints/step37000.ckpt --current-weights
for N in 35000 37000 37000-raw; do echo "== $N"; python results/go2/commands/summarize_walks.py $R/$N; done
