"""Scaling on this machine (docs/distributed.md): data generation and pretraining with 1 and 2 processes, and the
paper's scale projected onto N machines (``results.scaling.measure``)."""

from __future__ import annotations

from results.lab.spec import Experiment, step

R = "results/scaling"

EXPERIMENTS = (
    Experiment("scaling", "How do data generation and pretraining scale with processes, and what would the paper's "
               "scale take on N machines?", "docs/distributed.md",
               "4. Scaling, measured, and the paper's scale projected", (
                   step("generate", "python -m results.scaling.measure generate", f"{R}/generate.json",
                        what="on an otherwise idle machine"),
                   step("train", "python -m results.scaling.measure train", f"{R}/train.json"),
                   step("project", "python -m results.scaling.measure project", f"{R}/projection.json",
                        minutes=0.1))),
)
