"""The planners side by side (docs/planners.md): CEM beside MPPI at equal compute
(``python -m results.planners.cem``)."""

from __future__ import annotations

from results.lab.spec import Experiment, step

CEM = "python -m results.planners.cem"
R = "results/planners"

EXPERIMENTS = (
    Experiment("planners-cem", "Does the cross-entropy method plan as well as MPPI at equal compute?",
               "docs/planners.md", "CEM beside MPPI at equal compute", (
                   step("toy-model", "simdist demo --task toy-reach --pretrain-only --out outputs/planners/toy",
                        "outputs/planners/toy/toy-sim/", what="the toy's base model: the demo's data and pretraining"),
                   step("agents", f"{CEM} agents", "outputs/planners/agents/", dry="--dry-run",
                        needs=("outputs/planners/toy/toy-sim/config.json",)),
                   step("evaluate", f"{CEM} evaluate", f"{R}/{{toy,toy-lag,go2,go2-slope}}_{{mppi,cem}}.json",
                        f"{R}/go2-slope_{{mppi,cem}}_seed1.json", dry="--dry-run"),
                   step("ticks", f"{CEM} ticks", f"{R}/ticks_{{toy,go2}}.json", dry="--dry-run"),
                   step("table", f"{CEM} table", "printed"))),
)
