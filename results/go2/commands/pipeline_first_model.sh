#!/bin/bash
# Post-pretraining pipeline for issue 4 (run from the repo root). Logs under runs/, results under results/go2.
set -uo pipefail
source /work/venv/bin/activate
export OMP_WAIT_POLICY=PASSIVE
while pgrep -f "simdist fit" > /dev/null; do sleep 15; done
R=results/go2
CK=outputs/go2/pretrain/checkpoints/last.ckpt
PLAN="--samples 16 --iterations 1 --init-std 0.1 --warm-start policy"
echo "$(date) validate"; simdist validate --config recipes/go2-slope/pretrain.yaml --ckpt_path $CK --trainer.limit_val_batches 40 > runs/validate_go2.log 2>&1
echo "$(date) export"; python hub/build_go2_models.py base
for T in flat slope; do
  echo "$(date) eval $T"
  simdist evaluate --controller model:hub/models/go2-slope --terrain $T --course-length 10 --speeds 0.5 --trials 10 --randomize $PLAN --json > $R/mppi_$T.json 2> runs/eval_mppi_$T.err
  simdist evaluate --controller model:hub/models/go2-slope --planner policy --terrain $T --course-length 10 --speeds 0.5 --trials 10 --randomize --json > $R/policy_$T.json 2> runs/eval_policy_$T.err
  simdist evaluate --controller expert:hub/experts/go2 --terrain $T --course-length 10 --speeds 0.5 --trials 10 --randomize --json > $R/expert_$T.json 2> runs/eval_expert_$T.err
done
python hub/build_go2_models.py base
ADAPT="--envs 16 $PLAN --episodes-per-eval 5 --heldout-episodes 4 --epochs 3 --windows-per-epoch 12000"
echo "$(date) adapt ptfe57"; simdist adapt --model hub/models/go2-slope --real ptfe-slope-5.7deg --schedule 0,8,16 --out outputs/adapt/ptfe57 $ADAPT > runs/adapt_ptfe57.log 2>&1
echo "$(date) adapt foam"; simdist adapt --model hub/models/go2-foam --real foam --schedule 0,8,16 --out outputs/adapt/foam $ADAPT > runs/adapt_foam.log 2>&1
echo "$(date) demo"; simdist demo --out outputs/go2-demo > runs/demo_go2.log 2>&1
for F in dynamics,encoder dynamics,value all; do
  echo "$(date) ablation $F"
  simdist adapt --model hub/models/go2-slope --real ptfe-slope-5.7deg --schedule 0,16 --freeze $F --data-from outputs/adapt/ptfe57 --out outputs/adapt/ptfe57-$F $ADAPT > runs/adapt_ptfe57_$F.log 2>&1
done
for S in "450 8" "16 1"; do set -- $S
  echo "$(date) short $1x$2"
  simdist evaluate --controller model:hub/models/go2-slope --terrain flat --course-length 2 --speeds 0.5 --trials 2 --samples $1 --iterations $2 --json > $R/mppi_flat_short_$1x$2.json 2> runs/eval_short_$1.err
done
echo "$(date) PIPELINE DONE"
