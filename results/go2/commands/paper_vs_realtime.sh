#!/bin/bash
# Control quality of the paper-size MPPI (450 + 22 samples x 8 iterations, the official settings) next to
# the real-time preset, on a short nominal flat course (2 trials: a paper-size tick takes ~1.3 s for 2 envs).
# The README quotes its runs on the 10,500-step model (results/go2/step10500/) and on the 20,000-step model
# (results/go2/mppi_flat_3m_*.json); rerun it after rebuilding the zoo to measure the current model.
set -uo pipefail
[ -n "${VIRTUAL_ENV:-}" ] || source .venv/bin/activate  # the README's install, unless a venv is active
export OMP_WAIT_POLICY=PASSIVE
simdist evaluate --controller model:hub/models/go2-slope --terrain flat --course-length 3 --speeds 0.5 --trials 2 --samples 450 --iterations 8 --json > results/go2/mppi_flat_3m_paper.json
simdist evaluate --controller model:hub/models/go2-slope --terrain flat --course-length 3 --speeds 0.5 --trials 2 --samples 16 --iterations 1 --init-std 0.1 --warm-start policy --json > results/go2/mppi_flat_3m_realtime.json
