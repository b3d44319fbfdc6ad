"""Plan ranking as a training signal (docs/ranking.md): ranking data and ranking distillation on the toy, the
stages of ``python -m results.ranking.toy``."""

from __future__ import annotations

from results.lab.spec import Experiment, step

DOC = "docs/ranking.md"
TOY = "python -m results.ranking.toy"
MODEL = ("outputs/ranking/toy/pre/toy-sim/config.json",)

EXPERIMENTS = (
    Experiment("ranking-toy", "Do candidate ranking data and ranking distillation make the toy's score rank its "
               "planner's candidates (gate a), and does planning then beat the policy head (gate b)?", DOC,
               "2. The toy: gates (a) and (b)", (
                   step("pretrain", f"{TOY} pretrain", "outputs/ranking/toy/pre/", dry="--dry-run",
                        what="the toy demo's data and pretraining, seed 0 (~4 min)", minutes=4),
                   step("collect", f"{TOY} collect", "data/ranking/toy/train-{critic,expert}/", dry="--dry-run",
                        needs=MODEL, what="4 shards of 400 states (critic truth), 20 of 200 (expert truth, "
                        "0.5 CPU s a state); `-- --rank R --world W` spreads them"),
                   step("heldout", f"{TOY} heldout", "data/ranking/toy/heldout-*.safetensors", dry="--dry-run",
                        needs=MODEL, what="200 states a pool, the expert's continuation as truth, and the critic's "
                        "on the same states"),
                   step("fit", f"{TOY} fit", "outputs/ranking/toy/*-{400,1200,1600,4000}/", dry="--dry-run",
                        needs=MODEL),
                   step("score", f"{TOY} score", "outputs/ranking/toy/score{,-expert}-{all,last}.json",
                        dry="--dry-run"),
                   step("expansion", f"{TOY} expansion", "outputs/ranking/toy/expansion/", dry="--dry-run",
                        what="the value expansion K = 0, 1, 2, 4, 8 on the held-out sets"),
                   step("imagined", f"{TOY} imagined", "outputs/ranking/toy/imagined-value*/",
                        "outputs/ranking/toy/score-imagined-{all,last}.json", dry="--dry-run", needs=MODEL,
                        what="the value head on the model's imagined λ-returns (400 expert-truth states), ranked"),
                   step("split", f"{TOY} split", "outputs/ranking/toy/split-{all,last}.json", dry="--dry-run",
                        what="the heads on the candidates' true end states beside the imagined ones"),
                   step("why", f"{TOY} why", "results/ranking/toy/imagined-why.json", dry="--dry-run",
                        what="the imagined targets ranked against the truth"),
                   step("evaluate", f"{TOY} evaluate", "outputs/ranking/toy/eval/", dry="--dry-run",
                        what="16 trials a row in the training simulator"),
                   step("gates", f"{TOY} gates", "results/ranking/toy/*.json", dry="--dry-run",
                        needs=("outputs/ranking/toy/",)),
                   step("table", f"{TOY} table", "results/ranking/toy/tables.md", dry="--dry-run", minutes=0.1))),
)
