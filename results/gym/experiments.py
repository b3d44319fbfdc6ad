"""The Gymnasium experiment (docs/gym.md): the stages of ``results/gym/run.sh`` on HalfCheetah-v5 with actuation
latency, and the tables drawn from their result files."""

from __future__ import annotations

from results.lab.spec import Experiment, step

DOC = "docs/gym.md"
RUN = "env PROFILE=lag1 bash results/gym/run.sh"
#: the loop of docs/gym.md: MPPI around the policy prior (std 0.3), seed 0's experts, stages at 0 and 5 real minutes
LOOP = "env PRIOR_STD=0.3 EXPERT_SEED=0 SCHEDULE=0,5 PROFILE=lag1 bash results/gym/run.sh"
S0 = "results/gym/s0/"

EXPERIMENTS = (
    Experiment("gym-calibrate", "Is `lag1` a shift the simulator's expert fails and a retrained expert solves?", DOC,
               "Measured", (
                   step("expert-sim", f"{RUN} expert-sim 0", "outputs/gym/HalfCheetah-v5/", S0,
                        what="PPO on the simulator, its checkpoint ladder and exported set"),
                   step("expert-shift", f"{RUN} expert-shift 0", "outputs/gym/HalfCheetah-v5/",
                        what="PPO on the profile: the calibration's upper reference"),
                   step("calibrate", f"{RUN} calibrate 0", S0, what="the three calibration rows, 30 trials each"),
                   step("probe", f"{RUN} probe 0", "results/gym/s0/probe-it*/",
                        what="optional: the rows on the newest checkpoints of running PPO"),
                   step("sweep", f"{RUN} sweep 0", "results/gym/s0/sweep-it*/",
                        what="optional: the newest probe's expert on latencies 1 and 2"),
                   step("keep", f"{RUN} keep 0", "results/gym/s0/ppo/",
                        what="optional: the PPO checkpoints kept to resume on a fresh machine"))),
    Experiment("gym-loop", "Does SimDist's loop adapt to `lag1` on a benchmark we did not write?", DOC,
               "The loop on `lag1`", (
                   step("data", f"{RUN} data 0", "outputs/gym/HalfCheetah-v5/", what="1M transitions"),
                   step("pretrain", f"{RUN} pretrain 0", "outputs/gym/HalfCheetah-v5/model-s0/"),
                   step("planner", f"{RUN} planner 0", "results/gym/s0/planner-on-*.json"),
                   step("baseline", f"{RUN} baseline 0", "results/gym/s0/bc-policy-on-*.json"),
                   step("loop", f"{LOOP} loop 0", "results/gym/s0/adapt-curve-lag1-prior0.3.json",
                        "results/gym/s0/ranking-lag1-prior0.3.json", what="seeds 1 and 2 the same"),
                   step("ranking", f"{LOOP} ranking 0", "results/gym/s0/ranking-lag1-prior0.3.json",
                        what="optional: the plan ranking alone (loop ends with it)"),
                   step("table", "python -m results.gym.table --prior-std 0.3", "printed",
                        "results/gym/adapt-prior0.3.png", minutes=0.1))),
)
