"""The toy proving ground's experiments (docs/plan-ranking.md, docs/speed.md): the ``lag`` profile's shell stages
(``results/toy/lag/run.sh``), the map (``python -m results.toy.map``) and their tables."""

from __future__ import annotations

from results.lab.spec import Experiment, step

DOC = "docs/plan-ranking.md"
LAG = "bash results/toy/lag/run.sh"
MAP = "python -m results.toy.map"
REF = "outputs/toy-lag/ctx4-s0/toy-sim"
#: the map's pretrained model of seed 0, which its levers finetune
MAP_MODEL = ("outputs/toy-map/pretrain-s0/toy-sim/config.json",)
#: the lever rows of docs/plan-ranking.md section 4, in order
LEVER_ROWS = "base ens4 pert over3 decay wide hdrop hist4 ep24 mix25"

EXPERIMENTS = (
    Experiment("toy-lag-calibrate", "Is the lag profile a gap the planner cannot close zero-shot but the experts show "
               "is solvable?", DOC, "2. The proving ground: `toy-reach` on the `lag` profile", (
                   step("calibrate", f"{LAG} calibrate {REF}", "printed",
                        what="the zero-shot planner in sim and on lag, the experts"),
                   step("sweep", f"{LAG} sweep {REF}", "printed", what="profiles of other latencies and gains"))),
    Experiment("toy-lag-loop", "Does the loop close the lag gap, and what do the two diagnostics say?", DOC,
               "3. The loop on `lag`, and the levers", (
                   step("loop", f"{LAG} loop ctx4-s0 0", "outputs/toy-lag/ctx4-s0/",
                        minutes=9, what="~9 min idle; then copy results.{json,md} to results/toy/lag/ctx4-s0/; "
                        "options after the seed: lever flags of results.toy.levers"),
                   step("spread", f"{LAG} spread {REF} outputs/toy-lag/ctx4-s0/toy-real", "printed"),
                   step("table", "python -m results.toy.lag.table", "printed"))),
    Experiment("toy-lag-levers", "Which lever makes the adapted model rank and control on lag?", DOC,
               "4. The lever sweep", (
                   step("levers", f"{LAG} levers 0 {LEVER_ROWS}", "outputs/toy-lag/*-s0/",
                        what="copy each run's results.{json,md} to results/toy/lag/ROW-sSEED/"),
                   step("ranking-spread", f"{LAG} ranking-spread 0", "outputs/toy-lag/spread-s0/"),
                   step("table", "python -m results.toy.lag.table", "printed"))),
    Experiment("toy-map", "Beyond one profile: where does adaptation close the gap, over 27 profiles and 2 seeds?",
               DOC, "6. The map: beyond one profile (54 cells: 27 profiles × 2 pretraining seeds)", (
                   step("run", f"{MAP} run --seeds 0 1 --jobs 2 --out outputs/toy-map", "outputs/toy-map/",
                        dry="--dry", what="resumes cell by cell"),
                   step("table", f"{MAP} table --runs outputs/toy-map", "results/toy/map/", "results/toy/map/table.md"),
                   step("redraw", f"{MAP} table", "results/toy/map/table.md", "results/toy/map/heatmap.png",
                        minutes=0.1, what="the table and heatmap from the committed cells alone"),
                   step("mechanism", f"{MAP} mechanism --runs outputs/toy-map --cells G0.5-s0,T-0.05-s0",
                        "results/toy/map/", what="options: --cells CELL-sSEED,..."),
                   step("recount", "python -m results.toy.map.recount --runs outputs/toy-map",
                        "results/toy/map/recount/table.md", dry="--dry-run"))),
    Experiment("toy-map-levers", "Do the levers move the map's mechanism on failing cells?", DOC,
               "6.3 Levers against the mechanism", (
                   step("levers", f"{MAP} levers --out outputs/toy-map", "outputs/toy-map/levers/", dry="--dry",
                        needs=MAP_MODEL),
                   step("ensemble", f"{MAP} levers --levers ensemble --out outputs/toy-map", "outputs/toy-map/levers/",
                        dry="--dry", needs=MAP_MODEL),
                   step("table", f"{MAP} levers-table --runs outputs/toy-map", "results/toy/map/levers/table.md"),
                   step("redraw", f"{MAP} levers-table", "results/toy/map/levers/table.md", minutes=0.1,
                        what="the table from the committed lever runs alone"))),
    Experiment("toy-response", "Level or response: what does dynamics-only adaptation teach, on every task?",
               DOC, "7. Level or response: what dynamics-only adaptation teaches, on every task", (
                   step("cells", f"{MAP} run --seeds 0 --cells lag,G0.5,T-0.05,L4", "outputs/toy-map/", dry="--dry"),
                   step("toy", f"{MAP} response --cells lag-s0,G0.5-s0,T-0.05-s0,L4-s0", "results/toy/map/response/",
                        needs=("outputs/toy-map/",)),
                   step("zoo", "python -m results.response", "results/go2/mechanism/*-response.json",
                        "results/ur5e/mechanism/*/*-response.json", "results/response.md", dry="--dry-run",
                        needs=("outputs/ur5e-peg/adapt-zoo-peg-real/stages/stage-1/",)))),
    Experiment("toy-chunks", "How many sequences should one `imagine` call score in the toy demo's MPPI?",
               "docs/speed.md", "The toy demo's MPPI: sequences per `imagine` call", (
                   step("chunks", "python -m results.toy.lag.chunks outputs/toy-lag/ref-s0/toy-sim --chunks 128,1024",
                        "printed"),)),
)
