#!/bin/bash
# How the protocol's reset phase (25 steps of zero action before walking) affects the world model's
# controllers: the official phase, one step, and the official phase with the history re-padded at the walk
# start. 10 randomised trials, 10 m, 0.5 m/s; results in results/go2/reset-phase/.
set -euo pipefail
export OMP_WAIT_POLICY=PASSIVE
R=results/go2/reset-phase
PLAN="--samples 16 --iterations 1 --init-std 0.1 --warm-start policy"
for T in flat slope; do
  for P in mppi policy; do
    E="simdist evaluate --controller model:hub/models/go2-slope --planner $P --terrain $T --course-length 10 --speeds 0.5 --trials 10 --randomize --json"
    [ $P = mppi ] && E="$E $PLAN"
    $E --reset-steps 1 > $R/${P}_${T}_reset1.json
    $E --walk-start-history pad > $R/${P}_${T}_pad.json
  done
done
