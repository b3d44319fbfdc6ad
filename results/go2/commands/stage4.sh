#!/bin/bash
# Stage 4 on the walk-start data alone (recipes/go2-slope/pretrain-stage4.yaml): 27,000 -> 32,000 steps, the
# control for the student-takeover run (student_takeover.sh, the same schedule and steps), measured
# (measure_model.sh; results/go2/stage4-32k/), then on to 37,000 steps, measured again
# (results/go2/stage4-37k/). Logs in runs/. Resumes.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
RECIPE=recipes/go2-slope/pretrain-stage4.yaml
CK=outputs/go2/pretrain-s4/checkpoints/last.ckpt
CK32=outputs/go2/pretrain-s4/step32000.ckpt
if [ ! -f $CK32 ]; then
  if [ -f $CK ]; then RESUME=$CK; else RESUME=outputs/go2/pretrain-ws/checkpoints/last.ckpt; fi
  simdist fit --config $RECIPE --ckpt_path $RESUME --trainer.max_steps 32000 >> runs/stage4.log 2>&1
  cp $CK $CK32
fi
bash results/go2/commands/measure_model.sh $RECIPE $CK32 outputs/go2/pretrain-s4/model-32k results/go2/stage4-32k
simdist fit --config $RECIPE --ckpt_path $CK >> runs/stage4.log 2>&1
bash results/go2/commands/measure_model.sh $RECIPE $CK outputs/go2/pretrain-s4/model results/go2/stage4-37k
