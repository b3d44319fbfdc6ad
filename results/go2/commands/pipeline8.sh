#!/bin/bash
# The adaptation schedules 0, 8, 16 minutes with the zoo's weight-averaged model and the demo's planner (real-time
# MPPI, temporal ensembling 0.8), logging proxy-real episodes at speeds drawn from the protocol's whole range (the
# loop's default since pipeline7.sh, which logged at the middle speed only); both profiles in parallel; then the
# value AUC scores of the logged foam episodes and the adapted zoo models. Logs in runs/, results in results/go2/.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
R=results/go2
ADAPT="--envs 16 --samples 16 --iterations 1 --init-std 0.1 --warm-start policy --temporal-ensemble 0.8 --episodes-per-eval 5 --heldout-episodes 4 --epochs 3 --windows-per-epoch 12000"
simdist adapt --model hub/models/go2-slope --real ptfe-slope-5.7deg --schedule 0,8,16 --out outputs/adapt/ptfe57-ema-speeds $ADAPT > runs/adapt_ptfe57_ema_speeds.log 2>&1 &
SLOPE=$!
simdist adapt --model hub/models/go2-foam --real foam --schedule 0,8,16 --out outputs/adapt/foam-ema-speeds $ADAPT > runs/adapt_foam_ema_speeds.log 2>&1 &
FOAM=$!
wait $SLOPE $FOAM
for N in ptfe57-ema-speeds foam-ema-speeds; do mkdir -p $R/adapt-$N && cp outputs/adapt/$N/curve.{json,png} $R/adapt-$N/; done
python $R/commands/value_auc_scores.py outputs/adapt/foam-ema-speeds hub/models/go2-foam --out $R/adapt-foam-ema-speeds/value_auc_scores.json
python $R/commands/value_auc_scores.py outputs/adapt/foam-ema-speeds outputs/adapt/foam-ema-speeds/stages/stage-2 --out $R/adapt-foam-ema-speeds/value_auc_scores_16min.json
python hub/build_go2_models.py adapted
echo "$(date +%T) PIPELINE8 DONE"
