"""The map's table and heatmap from the committed cells: ``python -m results.toy.map table [--runs outputs/toy-map]``.

``--runs``: first copy the summaries (``results.json``) of the cells finished there into
``results/toy/map/cells/CELL-sSEED.json``. Then, from every committed cell: ``results/toy/map/table.md`` (one row
per cell and seed, and the issue's three targets counted) and ``results/toy/map/heatmap.png`` (adapted minus
zero-shot per cell and seed; ▲/▼ where the 95 % intervals are apart).
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path
from typing import Any

from results.runner import atomic_path, write_text
from results.toy.map.grid import CELLS

HERE = Path(__file__).resolve().parent
CELLS_DIR = HERE / "cells"
ORDER = {c.name: i for i, c in enumerate(CELLS)}


def collect(runs: Path) -> int:
    """Copy the finished cells' summaries from ``runs`` (an earlier copy is replaced); returns how many."""
    CELLS_DIR.mkdir(exist_ok=True)
    n = 0
    for done in sorted(runs.glob("*-s*/results.json")):
        shutil.copyfile(done, CELLS_DIR / f"{done.parent.name}.json")
        n += 1
    return n


def load() -> list[dict[str, Any]]:
    """The committed cells in the grid's order, seed 0 before seed 1."""
    rows = [json.loads(p.read_text()) for p in CELLS_DIR.glob("*.json")]
    return sorted(rows, key=lambda r: (ORDER.get(r["cell"], len(ORDER)), r["seed"]))


def ci(e: dict[str, float]) -> str:
    return f"{e['mean']:.2f} [{e['low']:.2f}, {e['high']:.2f}]"


def factors(r: dict[str, Any]) -> str:
    names = {"latency": "latency", "gain": "gain", "mass_scale": "mass ×", "friction": "friction", "tilt": "tilt"}
    return ", ".join(f"{names[k]} {v:g}" for k, v in r["factors"].items()) or "none (the simulator)"


def row(r: dict[str, Any]) -> str:
    ret, cons, rank = r["returns"], r["heldout_consistency"], r["ranking"]
    mark = {"higher": "**higher**", "lower": "lower", "no difference": "no difference"}[r["adapted_vs_zero_shot"]]
    best = ret[r["best_expert"]]
    gap = f"{r['gap_closed']:.0%}" if r["gap_closed"] is not None else "—"
    return (f"| `{r['cell']}` | {factors(r)} | {r['seed']} | {ci(ret['sim'])} | {ci(ret['zero_shot'])} | "
            f"{ci(ret['adapted'])} | {mark} | {ci(best)} ({r['best_expert']}) | "
            f"{'yes' if r['expert_beats_zero_shot'] else 'no'} | {gap} | "
            f"{cons['pretrained']:.3f} → {cons['adapted']:.3f} | {ci(rank['zero_shot']['spearman'])} | "
            f"{ci(rank['adapted']['spearman'])} |")


def targets(rows: list[dict[str, Any]]) -> list[str]:
    """The issue's targets, counted on the committed cells."""
    gap_rows = [r for r in rows if r["expert_beats_zero_shot"]]
    wins = [r for r in gap_rows if r["adapted_vs_zero_shot"] == "higher"]
    closed = [r["gap_closed"] for r in gap_rows]
    seeds = sorted({r["seed"] for r in rows})
    cells = {r["cell"] for r in rows}
    both = sum(all(any(r["cell"] == c and r["seed"] == s for r in rows) for s in (0, 1)) for c in cells)
    return [
        f"- cells finished: {len(rows)} (cell × seed) over {len(cells)} profiles, seeds {seeds}; {both} profiles "
        f"on both seeds 0 and 1 (target: at least 24 on 2 seeds);",
        f"- cells where the best expert beats zero-shot with the intervals apart: {len(gap_rows)}; adapted beats "
        f"zero-shot with the intervals apart on {len(wins)} of them"
        + (f" ({len(wins) / len(gap_rows):.0%}; target ≥ 70 %);" if gap_rows else ";"),
        "- median gap closed on those cells: "
        + (f"{statistics.median(closed):.0%} (target ≥ 50 %)." if closed else "— (none)."),
        f"- adapted lower than zero-shot (intervals apart) on {sum(r['adapted_vs_zero_shot'] == 'lower' for r in rows)}"
        f" cells; no difference on {sum(r['adapted_vs_zero_shot'] == 'no difference' for r in rows)}.",
        *where_the_gap_costs(rows),
        *control(rows),
    ]


def control(rows: list[dict[str, Any]]) -> list[str]:
    """The ``nominal`` cell, the loop with the simulator as its real env (no gap to identify): what finetuning the
    dynamics on the planner's own data gives without any gap."""
    nominal = [r for r in rows if r["cell"] == "nominal"]
    if not nominal:
        return []
    parts = [f"seed {r['seed']}: {r['returns']['zero_shot']['mean']:.2f} → {r['returns']['adapted']['mean']:.2f}, "
             f"{r['adapted_vs_zero_shot']}" + (f", gap closed {r['gap_closed']:.0%}" if r["gap_closed"] is not None
                                                else "") for r in nominal]
    return ["- the control, `nominal` (the simulator as the real env: no gap to identify): " + "; ".join(parts) + "."]


def below_sim(r: dict[str, Any]) -> bool:
    """Whether the profile costs the zero-shot planner return: its interval lies below the simulator's."""
    return r["returns"]["zero_shot"]["high"] < r["returns"]["sim"]["low"]


def where_the_gap_costs(rows: list[dict[str, Any]]) -> list[str]:
    """The targets split by whether the gap costs the zero-shot planner anything against its own simulator return
    (elsewhere the expert's edge is the one it has over the planner in the simulator)."""
    costs = [r for r in rows if below_sim(r)]
    gap_costs = [r for r in costs if r["expert_beats_zero_shot"]]
    gap_free = [r for r in rows if r["expert_beats_zero_shot"] and not below_sim(r)]
    above = [r for r in rows if r["returns"]["adapted"]["low"] > r["returns"]["sim"]["high"]]

    def wins(cells: list[dict[str, Any]]) -> int:
        return sum(r["adapted_vs_zero_shot"] == "higher" for r in cells)

    return [
        f"- zero-shot below the simulator's own interval (the gap costs the planner return) on {len(costs)} cells; "
        f"where the expert beats zero-shot there ({len(gap_costs)}), adapted beats zero-shot on {wins(gap_costs)};",
        f"- zero-shot inside the simulator's interval while the expert beats it on {len(gap_free)} cells (the "
        f"expert's edge over the planner in the simulator): adapted beats zero-shot on {wins(gap_free)} of them;",
        f"- adapted above the simulator's own interval on {len(above)} cells.",
    ]


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| cell | differs from the simulator in | seed | sim | zero-shot | adapted | adapted vs zero-shot | "
            "best expert | expert beats zero-shot | gap closed | held-out real consistency | ρ zero-shot | "
            "ρ adapted |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    return "\n".join(["Targets, counted on these cells:", "", *targets(rows), "", head, *map(row, rows)]) + "\n"


def heatmap(rows: list[dict[str, Any]], path: Path) -> None:
    """Adapted minus zero-shot per cell (rows) and seed (columns); ▲/▼ where the intervals are apart, the gap
    closed beside it where the expert beats zero-shot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = sorted({r["cell"] for r in rows}, key=lambda n: ORDER.get(n, len(ORDER)))
    seeds = sorted({r["seed"] for r in rows})
    grid = np.full((len(names), len(seeds)), np.nan)
    fig, ax = plt.subplots(figsize=(3.6 + 1.6 * len(seeds), 1.2 + 0.32 * len(names)))
    by = {(r["cell"], r["seed"]): r for r in rows}
    for (i, n), (j, s) in ((a, b) for a in enumerate(names) for b in enumerate(seeds)):
        if (n, s) in by:
            grid[i, j] = by[n, s]["returns"]["adapted"]["mean"] - by[n, s]["returns"]["zero_shot"]["mean"]
    lim = max(1.0, float(np.nanmax(np.abs(grid))))
    im = ax.imshow(grid, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    for (n, s), r in by.items():
        i, j = names.index(n), seeds.index(s)
        mark = {"higher": "▲", "lower": "▼", "no difference": ""}[r["adapted_vs_zero_shot"]]
        gap = f" {r['gap_closed']:.0%}" if r["gap_closed"] is not None else ""
        ax.text(j, i, f"{grid[i, j]:+.1f}{mark}{gap}", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(seeds)), [f"seed {s}" for s in seeds])
    ax.set_yticks(range(len(names)), names, fontsize=7)
    fig.colorbar(im, ax=ax, label="adapted − zero-shot return")
    ax.set_title("toy map: ▲/▼ 95 % intervals apart; % gap closed", fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)


def main(runs: str | None) -> int:
    if runs is not None:
        print(f"copied {collect(Path(runs))} finished cells from {runs}")
    rows = load()
    if not rows:
        print(f"no finished cells in {CELLS_DIR}")
        return 0
    text = table(rows)
    write_text(HERE / "table.md", text)
    heatmap(rows, HERE / "heatmap.png")
    print(text)
    return 0
