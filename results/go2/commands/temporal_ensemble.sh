#!/bin/bash
# Temporal ensembling (simdist.planning.ensemble, `--temporal-ensemble DECAY`) on a Go2 world model in nominal
# simulation: the real-time MPPI preset and the policy head, 10 m at 0.5 m/s, 10 randomised trials per seed,
# flat and 5.7 deg slope. Decays 0.5-0.95 were compared on seeds 0 and 1; seeds 2 and 3 (not used for the
# choice) check the chosen 0.8 against no ensembling. Usage: bash results/go2/commands/temporal_ensemble.sh
# [MODEL] [RESULTS_DIR]; one JSON per run in RESULTS_DIR, a table from results/go2/commands/summarize_walks.py.
set -euo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
M=${1:-outputs/go2/pretrain-s4/model-32k} R=${2:-results/go2/temporal-ensemble}
PLAN="--samples 16 --iterations 1 --init-std 0.1 --warm-start policy"
mkdir -p "$R"
source results/go2/commands/walk_eval.sh
ev() {  # NAME ARGS...: one evaluation into $R/NAME.json (skipped when done)
  local N=$1; shift
  walk_eval "$R/$N.json" "$M" "$@"
  echo "$(date +%T) $N"
}
for T in slope flat; do
  for S in 0 1; do
    for D in 0.5 0.8 0.9 0.95; do ev policy_${T}_te${D}_seed$S --terrain $T --planner policy --temporal-ensemble $D --seed $S; done
    ev policy_${T}_seed$S --terrain $T --planner policy --seed $S
    for D in 0.7 0.8 0.9; do ev mppi_${T}_te${D}_seed$S --terrain $T $PLAN --temporal-ensemble $D --seed $S; done
  done
  for S in 0 1 2 3; do
    ev mppi_${T}_seed$S --terrain $T $PLAN --seed $S
    ev mppi_${T}_te0.8_seed$S --terrain $T $PLAN --temporal-ensemble 0.8 --seed $S
  done
done
python results/go2/commands/summarize_walks.py "$R"
