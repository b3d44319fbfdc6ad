"""The paper's baseline comparison (docs/baselines.md): ``results.baselines.compare`` per task (its plan printed
with ``--dry-run``) and the collapse diagnostics of the model-free baselines."""

from __future__ import annotations

from results.lab.spec import Experiment, step

DOC = "docs/baselines.md"
R = "results/baselines"

EXPERIMENTS = (
    Experiment("baselines-toy", "Does SimDist beat the paper's baselines on the toy task's real profile, and why do "
               "the model-free ones move as they do?", DOC, "The toy task (`toy-reach` on its `real` profile), "
               "2026-12-02", (
                   step("compare", "python -m results.baselines.compare --task toy-reach",
                        "outputs/baselines/toy-reach/", f"{R}/toy-reach/", dry="--dry-run",
                        what="3 seeds, resumable; --report-only redraws"),
                   step("mechanism", "python -m results.baselines.mechanism --task toy-reach",
                        f"{R}/toy-reach/mechanism.json", f"{R}/toy-reach/mechanism.md",
                        needs=("outputs/baselines/toy-reach/",)))),
    Experiment("baselines-go2", "Table IX's rows on the quadruped at a reduced budget: does SimDist adapt faster?",
               DOC, "The quadruped (Table IX's rows), at a reduced budget", (
                   step("slope", "python -m results.baselines.compare --task go2-slope --seeds 0",
                        "outputs/baselines/go2-slope/", f"{R}/go2-slope/", dry="--dry-run", what="~50 min",
                        minutes=50),
                   step("foam", "python -m results.baselines.compare --task go2-foam --seeds 0",
                        "outputs/baselines/go2-foam/", f"{R}/go2-foam/", dry="--dry-run"),
                   step("mechanism-slope", "python -m results.baselines.mechanism --task go2-slope --seeds 0",
                        f"{R}/go2-slope/mechanism.md", needs=("outputs/baselines/go2-slope/",)),
                   step("mechanism-foam", "python -m results.baselines.mechanism --task go2-foam --seeds 0",
                        f"{R}/go2-foam/mechanism.md", needs=("outputs/baselines/go2-foam/",)))),
    Experiment("baselines-gym", "The baselines on HalfCheetah-v5 with latency, from the gym model", "docs/gym.md",
               "The recipe", (
                   step("compare", "python -m results.baselines.compare --task gym-halfcheetah-lag --model "
                        "outputs/gym/HalfCheetah-v5/model-s0 --seeds 0", "outputs/baselines/gym-halfcheetah-lag/",
                        f"{R}/gym-halfcheetah-lag/", dry="--dry-run",
                        needs=("outputs/gym/HalfCheetah-v5/model-s0/config.json",)),)),
)
