"""The official SimDist Go2 model and PPO experts on simdist's protocol (docs/official.md): each step is a part of
``results.official.run`` (which prints what remains with ``--dry-run``) or a table drawn from its results."""

from __future__ import annotations

from results.lab.spec import Experiment, Step, step

DOC = "docs/official.md"
R = "results/official"


def official(name: str, command: str, *outputs: str, what: str = "") -> Step:
    """A step running ``results.official.run COMMAND``."""
    return step(name, f"python -m results.official.run {command}", *outputs, what=what, dry="--dry-run")


def protocol(command: str, what: str) -> Step:
    """A step running ``results.official.protocol COMMAND``."""
    return step(command, f"python -m results.official.protocol {command}", f"{R}/protocol/foam-hard/", what=what,
                dry="--dry-run")


TABLES = step("tables", "python -m results.official.summarize", f"{R}/tables.md", minutes=0.1)

EXPERIMENTS = (
    Experiment("official-conventions", "Which foot-wrench convention do the official experts expect?", DOC,
               "2. The official experts and the foot-wrench convention", (
                   step("conventions", "python -m results.official.conventions --trials 20", "printed"),)),
    Experiment("official-experts", "Does the official expert walk simdist's protocol as ours does?", DOC,
               "4. The official expert on simdist's protocol", (
                   official("experts", "experts --trials 20", f"{R}/experts/"), TABLES)),
    Experiment("official-model", "Does the paper's own model walk and rank its candidates better than "
               "`simdist/go2-slope`?", DOC, "5. Side by side: the official model and `simdist/go2-slope`", (
                   official("walks", "walks", f"{R}/walks/"), official("ranking", "ranking", f"{R}/ranking/"),
                   TABLES, step("card", "python -m results.official.card_metrics", f"{R}/card_metrics.json",
                                what="the go2-official model card's measured rows", minutes=0.1))),
    Experiment("official-split", "Which part of the return carries the ranking error?", DOC,
               "5.1 The ranking ceiling: which part of the return carries the error", (
                   official("split", "split", f"{R}/split/"), TABLES)),
    Experiment("official-calibrate", "Which proxy-real profile has a real and closable gap for the paper's model?",
               DOC, "6.1 Calibration: a profile where the gap is real and closable", (
                   official("calibrate", "calibrate", f"{R}/calibration/"), TABLES)),
    Experiment("official-adapt", "Does adaptation help the paper's model on `foam-hard`, up to the paper's amount of "
               "data?", DOC, "6.2 The loop on `foam-hard`", (
                   official("adapt", "adapt", f"{R}/adapt/", what="hours; resumes; --only BUDGET runs one budget"),
                   TABLES)),
    Experiment("official-protocol", "Does the paper's own protocol (its planner acts, logs the real data and judges) "
               "adapt the paper's model on `foam-hard`?", DOC,
               "7. SimDist's own protocol: the paper's planner acts, logs and judges", (
                   protocol("control", "the frozen heads on the candidates' true futures, by states and episodes"),
                   protocol("zero-shot", "30 trials at 0.7 m/s with the paper's planner (hours on 2 cores)"),
                   protocol("adapt", "8 minutes logged by the paper's planner, then 100 and 10 finetuning passes "
                            "(a day of 2 cores; resumes at the last chunk or checkpoint)"),
                   protocol("adapted", "the adapted models, 30 trials each as zero-shot"),
                   step("table", "python -m results.official.protocol table", "printed"))),
)
