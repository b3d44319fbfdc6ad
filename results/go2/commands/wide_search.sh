#!/bin/bash
# Wider MPPI searches than the real-time preset on the shipped PTFE slope, zero-shot (the zoo model) and with
# the 16-minute dynamics of pipeline8.sh (its data came from the real-time planner); temporal ensembling 0.8,
# the policy head's chunk as the initial mean. First probes at 0.3 m/s (3 trials; 128 x 3 at std 0.5, 256 x 4
# at std 1.0), then 256 x 4 at std 1.0 at every protocol speed (3 trials each). No real-time limit in
# simulation. Last, the real-time budget (16 x 1) with the shift warm start (the previous plan carried over
# ticks, so the search can drift from the policy head without more compute per tick) at std 0.1 and 0.3.
# Resumable. Results in results/go2/wide-search/.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
R=results/go2/wide-search
mkdir -p $R
source results/go2/commands/walk_eval.sh  # eval_once
evaluate() {  # evaluate FILE MODEL SAMPLES ITERATIONS STD ARGS...: eval_once on the PTFE slope, 3 trials a speed
  local F=$1 M=$2 N=$3 I=$4 S=$5; shift 5
  eval_once "$F" --controller model:$M --profile ptfe-slope-5.7deg --trials 3 --samples $N --iterations $I \
    --init-std $S --warm-start policy --temporal-ensemble 0.8 "$@"
}
for M in hub/models/go2-slope outputs/adapt/ptfe57-ema-speeds/stages/stage-2; do
  for CFG in "128 3 0.5" "256 4 1.0"; do
    set -- $CFG
    evaluate $R/probe_0.3ms_$(basename $M)_$1_$2_$3.json $M $1 $2 $3 --speeds 0.3
  done
done
for M in hub/models/go2-slope outputs/adapt/ptfe57-ema-speeds/stages/stage-2; do
  evaluate $R/ptfe57_256x4_std1_$(basename $M).json $M 256 4 1.0
done
for S in 0.1 0.3; do
  for M in hub/models/go2-slope outputs/adapt/ptfe57-ema-speeds/stages/stage-2; do
    evaluate $R/shift16x1_std${S}_$(basename $M).json $M 16 1 $S --warm-start shift
  done
done
