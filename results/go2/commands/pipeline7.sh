#!/bin/bash
# After ema_stage4.sh: the zoo's base models from the weight-averaged 37,000-step checkpoint, the demo (real-time
# MPPI with temporal ensembling 0.8, its default), the adaptation schedules 0, 8, 16 minutes on both proxy-real
# profiles (in parallel, the same planner), the value AUC scores of the logged foam episodes, the adapted zoo
# models and the ablations on the demo's data. Episodes are logged at the middle protocol speed (--collect-speed
# 0.3 on the slope, 0.7 on foam: the loop's default when this ran; pipeline8.sh logs over the whole range, the
# default now). Logs in runs/, results in results/go2/. Resumes.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
R=results/go2
ADAPT="--envs 16 --samples 16 --iterations 1 --init-std 0.1 --warm-start policy --temporal-ensemble 0.8 --episodes-per-eval 5 --heldout-episodes 4 --epochs 3 --windows-per-epoch 12000"
python hub/build_go2_models.py base --candidate s4-ema-37k
echo "$(date +%T) demo"
/usr/bin/time -v simdist demo --out outputs/go2-demo-ema --collect-speed 0.3 > runs/demo_go2_ema.log 2> runs/demo_go2_ema.err
mkdir -p $R/demo && cp outputs/go2-demo-ema/{results.json,results.md,curve.json,curve.png,rollout_zero_shot.gif,rollout_adapted.gif} $R/demo/
echo "$(date +%T) adaptation schedules (slope and foam in parallel)"
simdist adapt --model hub/models/go2-slope --real ptfe-slope-5.7deg --schedule 0,8,16 --out outputs/adapt/ptfe57-ema --collect-speed 0.3 $ADAPT > runs/adapt_ptfe57_ema.log 2>&1 &
SLOPE=$!
simdist adapt --model hub/models/go2-foam --real foam --schedule 0,8,16 --out outputs/adapt/foam-ema --collect-speed 0.7 $ADAPT > runs/adapt_foam_ema.log 2>&1 &
FOAM=$!
wait $SLOPE $FOAM
for N in ptfe57-ema foam-ema; do mkdir -p $R/adapt-$N && cp outputs/adapt/$N/curve.{json,png} $R/adapt-$N/; done
python $R/commands/value_auc_scores.py outputs/adapt/foam-ema hub/models/go2-foam --out $R/adapt-foam-ema/value_auc_scores.json
python $R/commands/value_auc_scores.py outputs/adapt/foam-ema outputs/adapt/foam-ema/stages/stage-2 --out $R/adapt-foam-ema/value_auc_scores_16min.json
python hub/build_go2_models.py adapted
echo "$(date +%T) ablations"
bash $R/commands/ablations.sh outputs/go2-demo-ema -ema "--temporal-ensemble 0.8"
echo "$(date +%T) PIPELINE7 DONE"
