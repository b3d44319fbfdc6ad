#!/bin/bash
# PPO finetuned from the expert on each proxy-real profile: shows each course is possible.
set -uo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
for PS in "ptfe-slope-5.7deg 0.1,0.5" "foam 0.2,1.2" "ptfe-slope-3deg 0.1,0.5"; do
  set -- $PS; P=$1; SPEEDS=$2
  D=runs/ppo_on_$P
  rm -rf $D; mkdir -p $D && cp hub/experts/go2/train_state/model_1950.pt $D/
  echo "$(date) ppo on $P"
  simdist train-expert --log-dir $D --iterations 2100 --envs 256 --profile $P --command-mode straight --straight-speed $SPEEDS --save-interval 25 --export $D/export --suboptimal 1950 > $D.log 2>&1
  simdist evaluate --controller expert:$D/export --profile $P --trials 5 --json > results/go2/ppo_on_$P.json 2> $D.eval.err
  simdist evaluate --controller expert:$D/export --profile $P --trials 5 | tail -6
done
echo "$(date) PPO PROFILES DONE"
