"""Build the zoo's UR5e model folders from the committed models (the command that made them).

    python hub/build_ur5e_models.py               # every entry of ENTRIES
    python hub/build_ur5e_models.py ur5e-peg      # hub/models/ur5e-peg alone

The cards' metrics come from the committed results (docs/ur5e-simdist.md 7.2-7.9): the policy head alone and
MPPI on the Narrow and Wide lattices of nominal simulation (`simdist evaluate --json`), and how the model's
planning score ranks the planner's own candidates (`simdist mechanism`, results/ur5e/analysis/rank_probe.py).
Each folder carries its chosen planner (:attr:`Entry.planner`), written atomically by `save_pretrained`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "ur5e"
PLANNER_DIR = RESULTS / "planner" / "ur5e-peg"
#: the model: the head-gate world model (7.2) with its value head trained on its MPPI's candidates' ranking (7.8)
PEG_SOURCE = PLANNER_DIR / "value-rank-model"
#: the policy prior's weight the shipped planner.json carries (7.9: results.ur5e.run's PRIOR_CHOSEN)
PRIOR_WEIGHT = 10.0
#: the shipped planner: the manipulation preset sampled around the policy, candidates ranked with its prior
PEG_PLANNER = {"warm_start": "policy", "init_std": 0.1, "value_weight": 1.0, "prior_weight": PRIOR_WEIGHT}
#: card metric label -> committed `simdist evaluate --json` result (40 trials each, nominal simulation)
PEG_SUCCESS = {
    "policy head alone, Narrow": RESULTS / "gate" / "ur5e-peg" / "ur5e-peg-small-matched-policy-narrow.json",
    "policy head alone, Wide": RESULTS / "gate" / "ur5e-peg" / "ur5e-peg-small-matched-policy-wide.json",
    "MPPI, the paper's score and sampling, Narrow": PLANNER_DIR / "value-rank-mppi-narrow.json",
    "MPPI sampled around the policy (init std 0.1), Narrow": PLANNER_DIR / "value-rank-narrow-mppi-narrow.json",
    **{f"MPPI with the policy prior (prior_weight {PRIOR_WEIGHT:g}, the shipped planner.json), {grid.title()}":
       PLANNER_DIR / f"value-rank-prior{PRIOR_WEIGHT:g}-mppi-{grid}.json" for grid in ("narrow", "wide")},
}
PEG_DESCRIPTION = (
    "UR5e peg insertion world model (16 mm square peg, 0.5 mm clearance; 5 Hz, H = T = 5), trained on two CPU "
    "cores at about 1/11 of the data engine's `cpu` preset. **Status: experimental.** Its policy head imitates "
    "the scripted expert (past actions dropped from its input, the paper's option); MPPI with the paper's score "
    "does not pick the peg, because the score ranks one state's 1 s candidates only weakly (Spearman ρ about "
    "0.18 on held-out states) and a weak ranking adds a lean that persists from tick to tick "
    "(docs/ur5e-simdist.md 7.7). The shipped `planner.json` therefore ranks candidates with the policy as a "
    "Gaussian prior (`prior_weight` 10, beyond the paper): a candidate leaves the policy only as far as its "
    "predicted return pays for it, and MPPI then picks the peg on 0.88 of the Narrow lattice and 0.65 of the Wide "
    "one (the head alone: 0.72 and 0.40; the intervals overlap, below). `--planner-preset manipulation` gives the "
    "paper's MPPI. Adapting only the dynamics on the proxy-real `peg-real` (the paper's protocol, 80 episodes) "
    "does not change its success there yet (0.12 zero-shot, 0.17 adapted, 40 Wide trials each, no difference; "
    "`simdist/ur5e-peg-adapted`): the adapted dynamics predicts the profile better, but its score ranks the "
    "planner's candidates there at chance before and after, and under the prior the score barely decides "
    "(docs/ur5e-simdist.md 5, 7.14).\n\n"
    "**Training**: `simdist fit --config recipes/ur5e-peg/base.yaml --config recipes/ur5e-peg/small-no-actions.yaml "
    "--config recipes/ur5e-peg/small-matched.yaml` (986 trajectories, 16,000 steps of 256); the value head alone "
    "then on 1,296 states of its MPPI's candidates with their true returns: `python -m results.ur5e.run rankplan` "
    "(`simdist value-rank collect|fit`).\n\n"
    "**Use it**: `simdist evaluate --task ur5e-peg --agent simdist/ur5e-peg --profile sim --grid narrow`; "
    "`--planner policy` runs the head alone."
)


LEG_DIR = RESULTS / "gate" / "ur5e-table-leg"
#: the table leg's gate model (7.9): the peg's gate recipe on 10 parts of the table leg's small data
LEG_SOURCE = LEG_DIR / "ur5e-table-leg-small-matched-model"
#: its planner: sampled around the policy, the horizon's rewards alone (its value head is untrained), the prior
LEG_PLANNER = {"warm_start": "policy", "init_std": 0.1, "value_weight": 0.0, "prior_weight": PRIOR_WEIGHT}
LEG_SUCCESS = {
    "policy head alone, Narrow": LEG_DIR / "ur5e-table-leg-small-matched-policy-narrow.json",
    f"MPPI with the policy prior (prior_weight {PRIOR_WEIGHT:g}, rewards only, the shipped planner.json), Narrow":
        LEG_DIR / f"ur5e-table-leg-small-matched-mppi-prior{PRIOR_WEIGHT:g}-narrow.json",
}
LEG_DESCRIPTION = (
    "UR5e table-leg world model (pick the leg, align it over the hole, thread it two turns; 5 Hz, H = T = 5), "
    "trained on two CPU cores at about 1/10 of the data engine's `cpu` preset. **Status: experimental.** Its "
    "policy head imitates the scripted expert (past actions dropped from its input, the paper's option). The "
    "shipped `planner.json` samples around the policy (init std 0.1) and ranks candidates by the horizon's "
    "predicted rewards (`value_weight` 0: the value head is not trained at this data size) with the policy as a "
    "Gaussian prior (`prior_weight` 10, beyond the paper; docs/ur5e-simdist.md 7.9). In nominal simulation both "
    "pick the leg on nearly every Narrow start (below); without the prior (`prior_weight` 0) MPPI picks it on 1 of "
    "40 (docs/ur5e-simdist.md 7.10), and `--planner-preset manipulation` gives the paper's MPPI.\n\n"
    "**Training**: `simdist fit --config recipes/ur5e-table-leg/base.yaml --config "
    "recipes/ur5e-table-leg/small-matched.yaml` (1,061 trajectories, 16,000 steps of 256): "
    "`python -m results.ur5e.run leggate`.\n\n"
    "**Use it**: `simdist evaluate --task ur5e-table-leg --agent simdist/ur5e-table-leg --profile sim --grid "
    "narrow`; `--planner policy` runs the head alone."
)


@dataclass(frozen=True)
class Entry:
    """One zoo folder: its task, the committed model it is built from, the planner settings its planner.json
    carries over the task's manipulation preset, and its card."""

    task: str
    source: Path
    planner: dict
    success_files: dict[str, Path]
    description: str
    tags: list[str]
    rows: Callable[[], dict[str, str]] = field(default=dict)


def _ci(value: float, ci: list[float], n: int) -> str:
    """``k/n = mean [low, high]`` of a success rate ``value`` over ``n`` trials with its 95 % interval ``ci``."""
    return f"{round(value * n)}/{n} = {value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def success(path: Path) -> str:
    """``k/n = mean [low, high]`` of a committed `simdist evaluate --json` result."""
    summary = json.loads(path.read_text(encoding="utf-8"))["summary"]
    return _ci(summary["success_rate"], summary["success_ci95"], summary["trials"])


def ranking() -> dict[str, str]:
    """The card rows of the planning score's ranking of the planner's own candidates (Spearman ρ [95 % CI])."""
    rows = json.loads((RESULTS / "analysis" / "rank-probe-9-seeds.json").read_text(encoding="utf-8"))["rows"]
    held = next(r["rho"] for r in rows if r["split"] == "heldout" and r["score"].startswith("value-rank"))
    early = json.loads((PLANNER_DIR / "value-rank-mechanism-narrow.json").read_text(encoding="utf-8"))
    rho = early["models"]["value-rank"]["spearman"]
    return {
        f"plan ranking, Spearman ρ on {held['n']} held-out states of its MPPI's episodes (16 candidates each)":
            f"{held['mean']:.3f} [{held['low']:.3f}, {held['high']:.3f}]",
        f"plan ranking, Spearman ρ on {rho['n']} early-episode Narrow states (`simdist mechanism`)":
            f"{rho['mean']:.3f} [{rho['low']:.3f}, {rho['high']:.3f}]",
    }


#: zoo folder name (hub/models/<name>, Hub id simdist/<name>) -> its entry
ENTRIES = {
    "ur5e-peg": Entry("ur5e-peg", PEG_SOURCE, PEG_PLANNER, PEG_SUCCESS, PEG_DESCRIPTION,
                      ["ur5e", "manipulation", "peg-insertion", "sim-pretrained", "experimental"], ranking),
    "ur5e-table-leg": Entry("ur5e-table-leg", LEG_SOURCE, LEG_PLANNER, LEG_SUCCESS, LEG_DESCRIPTION,
                            ["ur5e", "manipulation", "table-leg-insertion", "sim-pretrained", "experimental"]),
}


#: adapted zoo folder name -> (its base entry, the proxy-real profile, the adaptation run kept under results/:
#: ``python -m results.ur5e.run adaptplan --task <task>``, whose last stage's model it carries)
ADAPTED = {"ur5e-peg-adapted": ("ur5e-peg", "peg-real", RESULTS / "adapt" / "ur5e-peg" / "zoo-peg-real"),
           "ur5e-table-leg-adapted": ("ur5e-table-leg", "table-leg-real",
                                      RESULTS / "adapt" / "ur5e-table-leg" / "zoo-table-leg-real")}


def adapted_rows(base: str, real: str, curve: dict) -> dict[str, str]:
    """The card rows of an adapted model from its run's ``curve.json``: success zero-shot and adapted, held-out
    consistency, and how both models' scores rank the planner's candidates on the proxy-real states
    (``simdist mechanism``)."""
    grid = curve["task"]["grid"].title()
    rows = {"proxy-real profile": real, "real episodes (minutes)": f"{curve['episodes'][-1]} "
                                                                     f"({curve['minutes'][-1]:.1f})"}
    for label, k in (("zero-shot", 0), ("adapted", -1)):
        rows[f"success on {real}, {grid}, {label} (95 % CI)"] = _ci(curve["value"][k], curve["ci95"][k],
                                                                    curve["trials"][k])
        rows[f"held-out consistency loss, {label}"] = f"{curve['consistency_after'][k]:.4f}"
    ranking = RESULTS / "mechanism" / ENTRIES[base].task / f"{real}-wide-zoo.json"
    if ranking.is_file():
        models = json.loads(ranking.read_text(encoding="utf-8"))["models"]
        for label in ("zero-shot", "adapted"):
            rho = models[label]["spearman"]
            rows[f"plan ranking on {real}, Spearman ρ, {label} ({rho['n']} states)"] = (
                f"{rho['mean']:.3f} [{rho['low']:.3f}, {rho['high']:.3f}]")
    return rows


def entry_agent(entry: Entry, source: Path) -> Any:
    """The agent of ``source`` acting with the entry task's manipulation preset and the entry's planner settings."""
    from simdist import get, load_agent
    from simdist.planning import planner_preset

    preset = planner_preset("manipulation", **get("task", entry.task).planner_defaults)
    return load_agent(source).with_settings(**{**preset, **entry.planner})


def build_adapted(name: str) -> Path | None:
    """hub/models/<name>: the last stage of the base's adaptation run (its dynamics finetuned on the proxy-real
    episodes) acting with the base's planner, ``base_model`` its base; skipped when the run's model is not here."""
    base, real, kept = ADAPTED[name]
    entry = ENTRIES[base]
    curve = json.loads((kept / "curve.json").read_text(encoding="utf-8"))
    source = ROOT / curve["models"][-1]
    if not (source / "model.safetensors").is_file():
        print(f"skipped {name}: no {source.relative_to(ROOT)} (python -m results.ur5e.run adaptplan --task "
              f"{entry.task} makes it)")
        return None
    agent = entry_agent(entry, source)
    text = (f"`simdist/{base}` with only its dynamics finetuned on {curve['episodes'][-1]} on-policy episodes "
            f"({curve['minutes'][-1]:.1f} minutes) of the proxy-real profile `{real}`, the paper's protocol: "
            f"`python -m results.ur5e.run adaptplan --task {entry.task}`. It acts with its base's planner.json. "
            "**Status: experimental**: the rows below give its success on the profile beside the zero-shot "
            "model's, and how both models' scores rank the planner's candidates there (docs/ur5e-simdist.md 5).")
    out = agent.save_pretrained(ROOT / "hub" / "models" / name, base_model=f"simdist/{base}",
                                metrics=adapted_rows(base, real, curve), tags=[*entry.tags, "proxy-real-adapted"],
                                model_card_kwargs={"repo_id": f"simdist/{name}", "description": text})
    print(f"built {out} from {source.relative_to(ROOT)}")
    return out


def build(name: str) -> Path:
    """hub/models/<name>: the agent of the entry's source acting with the task's manipulation preset and the
    entry's planner settings (its planner.json), its card's metrics from the committed results."""
    entry = ENTRIES[name]
    agent = entry_agent(entry, entry.source)
    metrics = {f"{label} (success, 95 % CI)": success(path) for label, path in entry.success_files.items()}
    out = agent.save_pretrained(ROOT / "hub" / "models" / name, metrics={**metrics, **entry.rows()},
                                tags=entry.tags,
                                model_card_kwargs={"repo_id": f"simdist/{name}", "description": entry.description})
    print(f"built {out} from {entry.source.relative_to(ROOT)}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    known = sorted({*ENTRIES, *ADAPTED})
    parser.add_argument("names", nargs="*", help=f"entries to build, of {known} (default: all)")
    names = parser.parse_args().names or known
    unknown = sorted(set(names) - set(known))
    if unknown:
        parser.error(f"names: no entry {unknown[0]!r}; one of {known}")
    for name in names:
        build(name) if name in ENTRIES else build_adapted(name)


if __name__ == "__main__":
    main()
