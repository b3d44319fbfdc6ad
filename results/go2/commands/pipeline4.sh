#!/bin/bash
# After stage-2 pretraining (recipes/go2-slope/pretrain-continue.yaml, 20,000 steps): held-out losses, zoo
# export, planning in nominal simulation, the demo, the full adaptation schedules on both proxy-real
# profiles and the ablations. Logs in runs/, results in results/go2/.
# Historical: it made the 20,000-step results (commit 68ca7a1); hub/build_go2_models.py now builds the zoo from stage 3
# (results/go2/commands/walk_starts.sh, then pipeline5.sh).
set -uo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
while pgrep -f "simdist fit" > /dev/null; do sleep 10; done
R=results/go2
CK=outputs/go2/pretrain-cont/checkpoints/last.ckpt
PLAN="--samples 16 --iterations 1 --init-std 0.1 --warm-start policy"
echo "$(date +%T) validate"
simdist validate --config recipes/go2-slope/pretrain-continue.yaml --ckpt_path $CK --trainer.limit_val_batches 40 > runs/validate_go2.log 2>&1
python hub/build_go2_models.py base
for T in flat slope; do
  echo "$(date +%T) evaluate $T"
  simdist evaluate --controller model:hub/models/go2-slope --terrain $T --course-length 10 --speeds 0.5 --trials 10 --randomize $PLAN --json > $R/mppi_$T.json 2> runs/eval_mppi_$T.err
  simdist evaluate --controller model:hub/models/go2-slope --planner policy --terrain $T --course-length 10 --speeds 0.5 --trials 10 --randomize --json > $R/policy_$T.json 2> runs/eval_policy_$T.err
  simdist evaluate --controller model:hub/models/go2-slope --terrain $T --course-length 10 --speeds 0.5 --trials 5 $PLAN --json > $R/mppi_${T}_nominal.json 2> runs/eval_mppi_n$T.err
done
python hub/build_go2_models.py base  # again, with the evaluation numbers in the cards
bash results/go2/commands/demo_and_adapt.sh
echo "$(date +%T) PIPELINE4 DONE"
