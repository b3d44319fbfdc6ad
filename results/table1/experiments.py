"""Table I (docs/table1.md): every ablation variant pretrained and evaluated alike, per task
(``results.table1.sweep``, which prints its plan with ``--dry-run``), and what each predicts on held-out data."""

from __future__ import annotations

from results.lab.spec import Experiment, Step, step

DOC = "docs/table1.md"


def sweep(task: str) -> Step:
    """The whole sweep of one task."""
    return step("sweep", f"python -m results.table1.sweep --task {task}", f"outputs/table1/{task}/",
                f"results/table1/{task}/", f"results/table1/{task}/table.md", dry="--dry-run",
                what="options: --variants a,b")


EXPERIMENTS = (
    Experiment("table1-toy", "What does pretraining depend on, on the toy task?", DOC, "The toy task, 2026-12-01",
               (sweep("toy-reach"),)),
    Experiment("table1-go2", "What does pretraining depend on, on the Go2 at a reduced budget, and why?", DOC,
               "The Go2 at a reduced budget, 2026-12-02", (
                   sweep("go2"),
                   step("heldout", "python -m results.table1.heldout --task go2",
                        "results/table1/go2/heldout.json", "results/table1/go2/heldout.md",
                        what="each variant's predictions on the same held-out data",
                        needs=("outputs/table1/go2/",)))),
    Experiment("table1-ur5e", "What does pretraining depend on, on the UR5e tasks (blocked at this scale)?", DOC,
               "The UR5e tasks: blocked at this scale", (
                   step("peg", "python -m results.table1.sweep --task ur5e-peg", "results/table1/ur5e-peg/",
                        dry="--dry-run"),
                   step("leg", "python -m results.table1.sweep --task ur5e-table-leg",
                        "results/table1/ur5e-table-leg/", dry="--dry-run"))),
)
