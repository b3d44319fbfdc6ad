#!/usr/bin/env bash
# The toy proving ground (docs/plan-ranking.md): the lag profile's calibration, its solvability, and the loop on it.
# Usage, from the repository root:  bash results/toy/lag/run.sh calibrate MODEL | sweep MODEL | spread MODEL... |
#   loop NAME SEED [options] | levers SEED ROW... | ranking-spread SEED
# Runs write under outputs/toy-lag/ (git ignores it); the committed results.json files are copied from there.
set -euo pipefail
simdist=${SIMDIST:-.venv/bin/simdist}
python=${PYTHON:-.venv/bin/python}
export OMP_WAIT_POLICY=PASSIVE
case "${1:-}" in
  calibrate)  # zero-shot planner (the demo's MPPI: 128 samples x 4 iterations) in sim and on lag; experts
    model=${2:?calibrate needs a pretrained toy world-model folder, e.g. outputs/toy-lag/ctx4-s0/toy-sim}
    for profile in sim lag; do
      $simdist evaluate --task toy-reach --agent "$model" --profile $profile --samples 128 --iterations 4 \
        --trials 32 --envs 16 --seed 2
    done
    $simdist evaluate --task toy-reach --agent expert --profile sim --trials 32 --envs 16 --seed 2
    $simdist evaluate --task toy-reach --agent expert --profile lag --trials 32 --envs 16 --seed 2
    $simdist evaluate --task toy-reach --agent retuned --profile lag --trials 32 --envs 16 --seed 2 ;;
  sweep)  # the zero-shot planner on profiles of latency L and gain G (how lag was chosen)
    model=${2:?sweep needs a pretrained toy world-model folder}
    dir=$(mktemp -d)
    for lg in 3:2 3:3 2:3 4:3 5:3 4:4 0:5 1:4 1:5 2:5; do
      printf 'latency: %s\ngain: %s\n' "${lg%%:*}" "${lg##*:}" > "$dir/L${lg%%:*}-G${lg##*:}.yaml"
      $simdist evaluate --task toy-reach --agent "$model" --profile "$dir/L${lg%%:*}-G${lg##*:}.yaml" \
        --samples 128 --iterations 4 --trials 32 --envs 16 --seed 2
    done ;;
  spread)  # the closed loop on lag at other MPPI initial stds, for a pretrained and an adapted model
    for model in "${@:2}"; do
      for std in 0.5 1.0; do
        $simdist evaluate --task toy-reach --agent "$model" --profile lag --samples 128 --iterations 4 \
          --init-std $std --trials 32 --envs 16 --seed 2 --json
      done
    done ;;
  loop)  # the whole loop on lag with both diagnostics into outputs/toy-lag/NAME; extra options (the lever flags of
    # results/toy/levers.py and the options of simdist demo) go to python -m results.toy.levers
    name=${2:?loop needs a run name}; seed=${3:?loop needs a seed}; shift 3
    $python -m results.toy.levers --real lag --dynamics-context 4 --ranking --seed "$seed" \
      --out "outputs/toy-lag/$name" --no-progress "$@" ;;
  levers)  # the lever sweep of docs/plan-ranking.md: each ROW of one pretraining SEED into outputs/toy-lag/ROW-sSEED,
    # one torch thread per run (two runs at a time on two cores). The reference's pretrained model comes from the
    # loop ref-sSEED (run first when missing); rows marked "pretrained" finetune that model.
    seed=${2:?levers needs a seed}; shift 2
    export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
    ref=outputs/toy-lag/ref-s$seed/toy-sim
    budget="--real-episodes 96 --finetune-epochs 12"
    for row in "$@"; do
      case $row in
        base) opts="--pretrained $ref $budget" ;;                          # the reference row
        ens4) opts="$budget --ensemble 4 --disagreement 1.0" ;;             # c: dynamics ensemble + penalty
        pert) opts="$budget --perturb-steps 10 --perturb-sigma 2.0" ;;      # a: more and larger perturbations
        over3) opts="$budget --perturbed-repeat 3" ;;                       # b: oversample perturbed windows
        decay) opts="$budget --consistency-decay 0.7" ;;                    # b: horizon-weighted consistency
        wide) opts="$budget --dynamics-hidden 256,256" ;;                   # b: a larger dynamics
        hdrop) opts="$budget --history-dropout 0.3" ;;                      # b: drop the past actions
        hist4) opts="$budget --history 4" ;;                                # b: a shorter history
        ep24) opts="--pretrained $ref --real-episodes 96 --finetune-epochs 24" ;;   # f: finetuning budget
        mix25) opts="--pretrained $ref $budget --sim-mix 0.25" ;;           # d: simulation windows in finetuning
        *) echo "levers: unknown row $row" >&2; exit 2 ;;
      esac
      if [[ $opts == *"--pretrained"* && ! -f $ref/config.json ]]; then
        bash "$0" loop "ref-s$seed" "$seed" $budget
      fi
      bash "$0" loop "$row-s$seed" "$seed" $opts
    done ;;
  ranking-spread)  # e: plan ranking on lag at three MPPI initial stds, for the reference's pretrained and adapted model
    seed=${2:?ranking-spread needs a seed}
    for std in 0.5 1.0 2.0; do
      $simdist mechanism --task toy-reach --real lag --model "zero_shot=outputs/toy-lag/ref-s$seed/toy-sim" \
        --model "adapted=outputs/toy-lag/base-s$seed/toy-real" --samples 128 --iterations 4 --init-std $std \
        --states 40 --candidates 32 --envs 16 --seed $((seed + 5)) --out "outputs/toy-lag/spread-s$seed/std$std.json"
    done ;;
  *) echo "usage: $0 calibrate MODEL | sweep MODEL | spread MODEL... | loop NAME SEED [demo options] | levers SEED ROW... | ranking-spread SEED" >&2; exit 2 ;;
esac
