#!/bin/bash
# After the continued pretraining: zoo export, simulation evaluation, the demo, foam adaptation.
set -uo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
while pgrep -f "simdist fit" > /dev/null; do sleep 10; done
R=results/go2
CK=outputs/go2/pretrain/checkpoints/last.ckpt
PLAN="--samples 16 --iterations 1 --init-std 0.1 --warm-start policy"
echo "$(date) validate"; simdist validate --config recipes/go2-slope/pretrain.yaml --ckpt_path $CK --trainer.limit_val_batches 40 > runs/validate_go2.log 2>&1
echo "$(date) export"; python hub/build_go2_models.py base
for T in flat slope; do
  echo "$(date) eval $T"
  simdist evaluate --controller model:hub/models/go2-slope --terrain $T --course-length 10 --speeds 0.5 --trials 10 --randomize $PLAN --json > $R/mppi_$T.json 2> runs/eval_mppi_$T.err
  simdist evaluate --controller model:hub/models/go2-slope --planner policy --terrain $T --course-length 10 --speeds 0.5 --trials 10 --randomize --json > $R/policy_$T.json 2> runs/eval_policy_$T.err
  simdist evaluate --controller model:hub/models/go2-slope --terrain $T --course-length 10 --speeds 0.5 --trials 5 $PLAN --json > $R/mppi_${T}_nominal.json 2> runs/eval_mppi_n$T.err
  simdist evaluate --controller expert:hub/experts/go2 --terrain $T --course-length 10 --speeds 0.5 --trials 5 --json > $R/expert_${T}_nominal.json 2> runs/eval_expert_n$T.err
done
python hub/build_go2_models.py base
echo "$(date) demo"; /usr/bin/time -v simdist demo --out outputs/go2-demo > runs/demo_go2.log 2> runs/demo_go2.err
echo "$(date) adapt foam"; simdist adapt --model hub/models/go2-foam --real foam --schedule 0,8 --out outputs/adapt/foam --envs 16 $PLAN --episodes-per-eval 5 --heldout-episodes 4 --epochs 3 --windows-per-epoch 12000 > runs/adapt_foam.log 2>&1
echo "$(date) PIPELINE3 DONE"
