#!/bin/bash
# After stage 3 (results/go2/commands/walk_starts.sh: the walk-start data and 27,000 steps): the zoo's base
# models, the demo, the full adaptation schedules on both proxy-real profiles, the ablations and the adapted
# zoo models. Logs in runs/, results in results/go2/. Earlier runs' outputs must be moved aside first (an
# adaptation run refuses to resume on other base weights).
set -uo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
python hub/build_go2_models.py base
bash results/go2/commands/demo_and_adapt.sh
echo "$(date +%T) PIPELINE5 DONE"
