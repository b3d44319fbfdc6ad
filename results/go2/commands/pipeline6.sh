#!/bin/bash
# After stage 4 (results/go2/commands/stage4.sh): the zoo's base models from its 32,000-step checkpoint (better in
# nominal simulation than the 37,000-step one), the demo, the
# adaptation schedules 0, 8, 16 minutes on both proxy-real profiles (in parallel), the value AUC scores of the
# logged foam episodes and the adapted zoo models. Logs in runs/, results in results/go2/.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
R=results/go2
ADAPT="--envs 16 --samples 16 --iterations 1 --init-std 0.1 --warm-start policy --episodes-per-eval 5 --heldout-episodes 4 --epochs 3 --windows-per-epoch 12000"
python hub/build_go2_models.py base --candidate s4-32k
echo "$(date +%T) demo"
/usr/bin/time -v simdist demo --out outputs/go2-demo-32k > runs/demo_go2_32k.log 2> runs/demo_go2_32k.err
mkdir -p $R/demo && cp outputs/go2-demo-32k/{results.json,results.md,curve.json,curve.png,rollout_zero_shot.gif,rollout_adapted.gif} $R/demo/
echo "$(date +%T) adaptation schedules (slope and foam in parallel)"
simdist adapt --model hub/models/go2-slope --real ptfe-slope-5.7deg --schedule 0,8,16 --out outputs/adapt/ptfe57-32k $ADAPT > runs/adapt_ptfe57_32k.log 2>&1 &
SLOPE=$!
simdist adapt --model hub/models/go2-foam --real foam --schedule 0,8,16 --out outputs/adapt/foam-32k $ADAPT > runs/adapt_foam_32k.log 2>&1 &
FOAM=$!
wait $SLOPE $FOAM
for N in ptfe57-32k foam-32k; do mkdir -p $R/adapt-$N && cp outputs/adapt/$N/curve.{json,png} $R/adapt-$N/; done
python $R/commands/value_auc_scores.py outputs/adapt/foam-32k hub/models/go2-foam --out $R/adapt-foam-32k/value_auc_scores.json
python $R/commands/value_auc_scores.py outputs/adapt/foam-32k outputs/adapt/foam-32k/stages/stage-2 --out $R/adapt-foam-32k/value_auc_scores_16min.json
python hub/build_go2_models.py adapted
echo "$(date +%T) PIPELINE6 DONE"
