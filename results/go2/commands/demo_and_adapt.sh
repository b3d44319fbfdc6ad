#!/bin/bash
# The demo, the full adaptation schedules on both proxy-real profiles (in parallel), the ablations and the
# adapted zoo models, for the zoo's current base models. Called by pipeline4.sh and pipeline5.sh.
set -uo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
R=results/go2
ADAPT="--envs 16 --samples 16 --iterations 1 --init-std 0.1 --warm-start policy --episodes-per-eval 5 --heldout-episodes 4 --epochs 3 --windows-per-epoch 12000"
echo "$(date +%T) demo"
/usr/bin/time -v simdist demo --out outputs/go2-demo > runs/demo_go2.log 2> runs/demo_go2.err
mkdir -p $R/demo && cp outputs/go2-demo/{results.json,results.md,curve.json,curve.png,rollout_zero_shot.gif,rollout_adapted.gif} $R/demo/
echo "$(date +%T) adaptation schedules (slope and foam in parallel)"
simdist adapt --model hub/models/go2-slope --real ptfe-slope-5.7deg --schedule 0,8,16,27,36 --out outputs/adapt/ptfe57 $ADAPT > runs/adapt_ptfe57.log 2>&1 &
SLOPE=$!
simdist adapt --model hub/models/go2-foam --real foam --schedule 0,8,16,27,36 --out outputs/adapt/foam $ADAPT > runs/adapt_foam.log 2>&1 &
FOAM=$!
wait $SLOPE
echo "$(date +%T) slope schedule done; ablations"
bash $R/commands/ablations.sh
wait $FOAM
for N in ptfe57 foam; do mkdir -p $R/adapt-$N && cp outputs/adapt/$N/curve.{json,png} $R/adapt-$N/; done
python hub/build_go2_models.py adapted
