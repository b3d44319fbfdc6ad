#!/bin/bash
# Student takeovers (a project extension): 1.5 M transitions in which the stage-3 model's policy head takes
# over expert-driven envs for 25-99 steps at a time and the expert then recovers (labelled), then 27,000 ->
# 32,000 steps on the walk-start data plus these (recipes/go2-slope/pretrain-student.yaml; the control is
# stage4.sh), then the stage-3 measurements (held-out losses on the walk-start data alone, as for the
# control). Results in results/go2/student-32k/; logs in runs/. Resumes.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
simdist generate --task go2 --experts hub/experts/go2 --out data/go2/sim-cpu-student --envs 256 \
  --transitions 1500000 --seed 7 --student outputs/go2/pretrain-ws/model >> runs/gen_student.log 2>&1
CK=outputs/go2/pretrain-student/checkpoints/last.ckpt
if [ -f $CK ]; then RESUME=$CK; else RESUME=outputs/go2/pretrain-ws/checkpoints/last.ckpt; fi
simdist fit --config recipes/go2-slope/pretrain-student.yaml --ckpt_path $RESUME >> runs/student_fit.log 2>&1
bash results/go2/commands/measure_model.sh recipes/go2-slope/pretrain-stage4.yaml $CK outputs/go2/pretrain-student/model results/go2/student-32k
