#!/usr/bin/env bash
# The toy proving ground (docs/plan-ranking.md): the lag profile's calibration, its solvability, and the loop on it.
# Usage, from the repository root:  bash results/toy/lag/run.sh calibrate MODEL | sweep MODEL | spread MODEL... | loop NAME SEED [options]
# Runs write under outputs/toy-lag/ (git ignores it); the committed results.json files are copied from there.
set -euo pipefail
simdist=${SIMDIST:-.venv/bin/simdist}
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
  loop)  # the whole loop on lag with both diagnostics into outputs/toy-lag/NAME; extra options go to simdist demo
    name=${2:?loop needs a run name}; seed=${3:?loop needs a seed}; shift 3
    $simdist demo --task toy-reach --real lag --dynamics-context 4 --ranking --seed "$seed" \
      --out "outputs/toy-lag/$name" --no-progress "$@" ;;
  *) echo "usage: $0 calibrate MODEL | sweep MODEL | loop NAME SEED [demo options]" >&2; exit 2 ;;
esac
