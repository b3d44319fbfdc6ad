#!/bin/bash
# Ablations on the demo's proxy-real data (ptfe-slope-5.7deg, 4 minutes): the same finetuning with other
# trainable parts. Run after `simdist demo --out outputs/go2-demo`.
set -uo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
for F in dynamics,encoder dynamics,value all; do
  simdist adapt --model hub/models/go2-slope --real ptfe-slope-5.7deg --schedule 0,4 --freeze $F --data-from outputs/go2-demo \
    --out outputs/adapt/ptfe57-$F --envs 16 --samples 16 --iterations 1 --init-std 0.1 --warm-start policy \
    --episodes-per-eval 3 --heldout-episodes 4 --epochs 3 --windows-per-epoch 6000 > runs/ablation_$F.log 2>&1
  mkdir -p results/go2/ablations/$F && cp outputs/adapt/ptfe57-$F/curve.json results/go2/ablations/$F/
done
