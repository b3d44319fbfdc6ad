#!/bin/bash
# Ablations on the demo's proxy-real data (ptfe-slope-5.7deg, 4 minutes): the same finetuning with other
# trainable parts. Run after `simdist demo --out DEMO_DIR`.
# Usage: bash results/go2/commands/ablations.sh [DEMO_DIR (outputs/go2-demo)] [TAG (none; e.g. -32k)] [PLAN_FLAGS]
# (PLAN_FLAGS: more planner options, e.g. "--temporal-ensemble 0.8" as the demo now uses)
# Runs go to outputs/adapt/ptfe57-PARTS$TAG, curves to results/go2/ablations$TAG/PARTS/.
set -uo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
DEMO=${1:-outputs/go2-demo}
TAG=${2:-}
EXTRA=${3:-}
for F in dynamics,encoder dynamics,value all; do
  simdist adapt --model hub/models/go2-slope --real ptfe-slope-5.7deg --schedule 0,4 --freeze $F --data-from $DEMO \
    --out outputs/adapt/ptfe57-$F$TAG --envs 16 --samples 16 --iterations 1 --init-std 0.1 --warm-start policy $EXTRA \
    --episodes-per-eval 3 --heldout-episodes 4 --epochs 3 --windows-per-epoch 6000 > runs/ablation_$F$TAG.log 2>&1
  mkdir -p results/go2/ablations$TAG/$F && cp outputs/adapt/ptfe57-$F$TAG/curve.json results/go2/ablations$TAG/$F/
done
