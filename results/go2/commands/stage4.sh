#!/bin/bash
# Stage 4 on the walk-start data alone (recipes/go2-slope/pretrain-stage4.yaml): 27,000 -> 32,000 steps, the
# control for the student-takeover run (student_takeover.sh, the same schedule and steps), then the stage-3
# measurements (measure_model.sh). Results in results/go2/stage4-32k/; logs in runs/. Resumes.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
CK=outputs/go2/pretrain-s4/checkpoints/last.ckpt
if [ -f $CK ]; then RESUME=$CK; else RESUME=outputs/go2/pretrain-ws/checkpoints/last.ckpt; fi
simdist fit --config recipes/go2-slope/pretrain-stage4.yaml --ckpt_path $RESUME --trainer.max_steps 32000 >> runs/stage4.log 2>&1
bash results/go2/commands/measure_model.sh recipes/go2-slope/pretrain-stage4.yaml $CK outputs/go2/pretrain-s4/model-32k results/go2/stage4-32k
