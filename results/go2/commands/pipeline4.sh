#!/bin/bash
# After stage-2 pretraining (recipes/go2-slope/pretrain-continue.yaml, 20,000 steps): held-out losses, zoo
# export, planning in nominal simulation, the demo, the full adaptation schedules on both proxy-real
# profiles and the ablations. Logs in runs/, results in results/go2/.
set -uo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
while pgrep -f "simdist fit" > /dev/null; do sleep 10; done
R=results/go2
CK=outputs/go2/pretrain-cont/checkpoints/last.ckpt
PLAN="--samples 16 --iterations 1 --init-std 0.1 --warm-start policy"
ADAPT="--envs 16 $PLAN --episodes-per-eval 5 --heldout-episodes 4 --epochs 3 --windows-per-epoch 12000"
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
echo "$(date +%T) demo"
/usr/bin/time -v simdist demo --out outputs/go2-demo > runs/demo_go2.log 2> runs/demo_go2.err
mkdir -p $R/demo && cp outputs/go2-demo/{results.json,results.md,curve.json,curve.png,rollout_zero_shot.gif,rollout_adapted.gif} $R/demo/ 2>/dev/null
echo "$(date +%T) adaptation schedules (slope and foam in parallel)"
simdist adapt --model hub/models/go2-slope --real ptfe-slope-5.7deg --schedule 0,8,16,27,36 --out outputs/adapt/ptfe57 $ADAPT > runs/adapt_ptfe57.log 2>&1 &
SLOPE=$!
simdist adapt --model hub/models/go2-foam --real foam --schedule 0,8,16,27,36 --out outputs/adapt/foam $ADAPT > runs/adapt_foam.log 2>&1 &
FOAM=$!
wait $SLOPE
echo "$(date +%T) slope schedule done; ablations"
bash results/go2/commands/ablations.sh
wait $FOAM
for N in ptfe57 foam; do mkdir -p $R/adapt-$N && cp outputs/adapt/$N/curve.{json,png} $R/adapt-$N/; done
python hub/build_go2_models.py adapted
echo "$(date +%T) PIPELINE4 DONE"
