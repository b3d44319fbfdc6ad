"""Table I as one sweep: every ablation variant pretrained with the same seed and step budget, evaluated with
the same planner settings on the same simulation trials, tabled beside the paper's numbers.

    python -m results.table1.sweep --task toy-reach [--variants full,data-10] [--dry-run]
    python -m results.table1.sweep --task ur5e-peg          # the cpu data preset, Wide lattice
    python -m results.table1.sweep --task ur5e-table-leg
    python -m results.table1.sweep --task go2              # reduced equal budget, the reward grid

Per variant: the data (`simdist generate`; the expert-only variant generates its own, same budget), `simdist
fit` with the task's base and stage and the variant's overlay from recipes/table1/, `simdist export`, `simdist
evaluate --profile sim --json`. Every step is skipped when its output exists, so rerunning resumes (a killed
`fit` resumes from its last checkpoint). Outputs: `outputs/table1/<task>/<variant>/`, results
`results/table1/<task>/<variant>.json` and `results/table1/<task>/table.md` (mean, 95 % CI, trials).
The Go2's metric is the paper's: the mean accumulated reward per episode over a grid of speed × friction × terrain
type × difficulty (`simdist evaluate --task go2 --reward-grid`), every variant pretrained at one reduced budget
(recipes/table1/go2-reduced.yaml); `--references` adds the zoo's go2-slope model (same planner) and the PPO expert
(privileged observations, the data's expert) on the same grid for comparison.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from results.runner import pretrain_and_export
from results.runner import run_command as _run
from results.runner import simdist_command as _simdist

ROOT = Path(__file__).resolve().parents[2]

#: the paper's Table I (SIMDIST.md 13 §4.1): peg, table leg, quadruped
PAPER = {"full": (0.90, 0.85, 22.78), "data-50": (0.72, 0.61, 22.73), "data-10": (0.06, 0.02, 19.38),
         "expert-only": (0.10, 0.05, 16.68), "mlp-heads": (0.82, 0.60, 19.47),
         "reconstruction": (0.32, 0.21, 23.34)}
VARIANTS = tuple(PAPER)
OVERLAYS = {"data-50": "recipes/table1/data-50.yaml", "data-10": "recipes/table1/data-10.yaml",
            "mlp-heads": "recipes/table1/mlp-heads.yaml", "reconstruction": "recipes/table1/reconstruction.yaml"}
TASKS = {
    "toy-reach": {"generate": ["--envs", "16", "--transitions", "20000"], "recipes": ["recipes/toy/base.yaml",
                  "recipes/toy/pretrain.yaml"], "evaluate": ["--trials", "32", "--envs", "8", "--planner-preset",
                                                             "paper", "--num-samples", "128", "--iterations", "4"],
                  "paper": None},
    "ur5e-peg": {"generate": ["--preset", "cpu"], "recipes": ["recipes/ur5e-peg/base.yaml",
                 "recipes/ur5e-peg/pretrain.yaml"], "evaluate": ["--grid", "wide", "--trials", "2", "--envs", "20",
                                                                 "--planner-preset", "manipulation"],
                 "paper": 0},
    "ur5e-table-leg": {"generate": ["--preset", "cpu"], "recipes": ["recipes/ur5e-table-leg/base.yaml",
                       "recipes/ur5e-table-leg/pretrain.yaml"], "evaluate": ["--grid", "wide", "--trials", "2",
                                                                             "--envs", "20", "--planner-preset",
                                                                             "manipulation"], "paper": 1},
    "go2": {"generate": ["--experts", "hub/experts/go2", "--envs", "128", "--transitions", "400000"],
            "recipes": ["recipes/go2/base.yaml", "recipes/table1/go2-reduced.yaml"],
            "evaluate": ["--reward-grid"], "paper": 2, "sim": False,
            "planner": ["--planner", "mppi", "--planner-preset", "realtime", "--temporal-ensemble", "0.8"]},
}
#: the paper's metric per column of PAPER
COLUMNS = ("peg success", "table-leg success", "quadruped reward / episode")
#: the zoo model the Go2 variants are set beside (`--references`)
ZOO_MODEL = "hub/models/go2-slope"
#: result name -> (table row, agent, planner arguments: None for the variants' own) of the Go2's reference rows
REFERENCES = {"zoo": ("zoo model (go2-slope)", ZOO_MODEL, None),
              "expert": ("PPO expert (privileged observations)", "expert:hub/experts/go2", [])}
#: `--policy-head`: every variant also acts with its policy head alone (no planning), results `<variant>-policy`
POLICY_HEAD = ["--planner", "policy"]


def run_tag(name: str, seed: int, steps: int | None = None, train_seed: int | None = None) -> str:
    """A run's name: ``<variant>[-<steps>steps][-seed<train_seed>]`` (its outputs folder and result file)."""
    tag = name + ("" if steps is None else f"-{steps}steps")
    return tag + ("" if train_seed is None or train_seed == seed else f"-seed{train_seed}")


def variant(task: str, name: str, seed: int, dry: bool, steps: int | None = None,
            train_seed: int | None = None) -> Path:
    """Data, pretraining, export and evaluation of one variant; returns its result JSON. ``steps`` replaces the
    recipe's step budget (and its learning-rate decay), ``train_seed`` the pretraining seed alone (same data, same
    evaluation); the outputs and result are then named by :func:`run_tag`."""
    spec, work = TASKS[task], ROOT / "outputs" / "table1" / task
    tag = run_tag(name, seed, steps, train_seed)
    result = ROOT / "results" / "table1" / task / f"{tag}.json"
    if result.exists():
        return result
    data = work / ("data-expert-only" if name == "expert-only" else "data")
    if not (data / "dataset.json").exists():
        extra = ["--expert-only"] if name == "expert-only" else []
        _run(_simdist("generate", "--task", task, *spec["generate"], *extra, "--seed", str(seed), "--out",
                      str(data), "--no-progress"), work / "generate.log", dry)
    out = work / tag
    model = out / "model"
    if not (model / "config.json").exists():
        configs = [a for r in spec["recipes"] for a in ("--config", r)]
        if name in OVERLAYS:
            configs += ["--config", OVERLAYS[name]]
        if steps is not None:
            configs += ["--trainer.max_steps", str(steps), "--model.init_args.decay_steps", str(steps)]
        pretrain_and_export(configs, data, out, model, seed if train_seed is None else train_seed, dry,
                            placement_name="placement.yaml")
    result.parent.mkdir(parents=True, exist_ok=True)
    evaluate(task, model, result, seed, dry)
    return result


def evaluate(task: str, agent: Path | str, result: Path, seed: int, dry: bool,
             planner: list[str] | None = None) -> None:
    """The task's evaluation of ``agent`` (a model folder, or any ``--agent`` value) into ``result`` (JSON), its
    log beside the result; ``planner``: planner arguments (None: the task's planner settings)."""
    spec = TASKS[task]
    where = ["--profile", "sim"] if spec.get("sim", True) else []
    planner = spec.get("planner", []) if planner is None else planner
    _run(_simdist("evaluate", "--task", task, "--agent", str(agent), *where, *spec["evaluate"], *planner, "--seed",
                  str(seed), "--json"), result.with_suffix(".log"), dry, stdout=result)


def table(task: str, names: list[str]) -> str:
    """Markdown: each variant's metric (mean [95 % CI], trials) beside the paper's number for the task's column."""
    from simdist import EvaluationResult, seeds_bootstrap_ci

    col = TASKS[task]["paper"]
    folder = ROOT / "results" / "table1" / task
    metric = "return" if col is None else ("success" if col < 2 else "reward / episode")

    def cell(res: EvaluationResult) -> str:
        est = res.success_estimate() if col is not None and col < 2 else res.estimate()
        return est.interval(".2f" if col is not None and col < 2 else ".3g")

    def survival(res: EvaluationResult) -> str:
        """The reward grid's mean episode length (steps before a fall or the end) and the share that never fell."""
        return f" {np.mean(res.details['steps']):.0f} | {res.success_rate:.2f} |"

    heads = any(folder.glob("*-policy.json"))
    grid = task == "go2"
    head = f"| variant | {metric}, mean [95 % CI] | trials |"
    head += " steps per episode | never fell |" if grid else ""
    head += " policy head alone |" if heads else ""
    head += f" paper ({COLUMNS[col]}) |" if col is not None else ""
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    rows, pooled = [], []
    for name in names:  # each variant, then its runs at other budgets (`--steps`) and seeds (`--train-seed`)
        rows.append((name, name))
        seeds = [name]
        for stem in sorted(p.stem for p in folder.glob(f"{name}-*.json")):
            m = re.fullmatch(re.escape(name) + r"(?:-(\d+)steps)?(?:-seed(\d+))?", stem)
            if m and stem != name:
                rows.append((", ".join([name] + [f"{m[1]} steps"] * bool(m[1]) + [f"seed {m[2]}"] * bool(m[2])), stem))
                seeds += [stem] if m[2] and not m[1] else []
        if len(seeds) > 1:
            pooled.append((name, seeds))
    if task == "go2":
        rows += [(label, name) for name, (label, _, _) in REFERENCES.items()]
    results: dict[str, EvaluationResult] = {}
    for label, name in rows:
        if not (folder / f"{name}.json").exists():
            continue
        res = EvaluationResult.load(folder / f"{name}.json")
        results[name] = res
        row = f"| {label} | {cell(res)} | {res.trials} |"
        row += survival(res) if grid else ""
        if heads:
            policy = folder / f"{name}-policy.json"
            row += f" {cell(EvaluationResult.load(policy))} |" if policy.exists() else " |"
        paper = PAPER.get(name)
        if col is not None:
            row += f" {paper[col]:.2f} |" if paper else " |"
        lines.append(row)
    for name, stems in pooled:  # a variant's training seeds together: seeds, then trials, resampled
        values = [results[stem].values for stem in stems]
        lines.append(f"\n{name} over its {len(stems)} training seeds (two-level bootstrap): "
                     f"{seeds_bootstrap_ci(values).interval('.3g')}; per seed "
                     + ", ".join(f"{np.mean(v):.3g}" for v in values))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=sorted(TASKS), required=True)
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma list of {', '.join(VARIANTS)}")
    parser.add_argument("--seed", type=int, default=0, help="data, pretraining and evaluation seed")
    parser.add_argument("--train-seed", type=int, default=None,
                        help="another pretraining seed alone, on the same data and trials (results <variant>-seedN)")
    parser.add_argument("--steps", type=int, default=None,
                        help="another step budget for the chosen variants (results <variant>-<steps>steps)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands only")
    parser.add_argument("--references", action="store_true",
                        help=f"go2: also evaluate {ZOO_MODEL} and the PPO expert on the same grid")
    parser.add_argument("--policy-head", action="store_true",
                        help="also evaluate every variant with its policy head alone (no planning)")
    args = parser.parse_args()
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        parser.error(f"--variants: unknown {unknown}; known: {', '.join(VARIANTS)}")
    for i, name in enumerate(names):
        print(f"[{i + 1}/{len(names)}] {args.task} {name}", flush=True)
        variant(args.task, name, args.seed, args.dry_run, args.steps, args.train_seed)
    folder = ROOT / "results" / "table1" / args.task
    tags = [run_tag(n, args.seed, args.steps, args.train_seed) for n in names]
    extra = [(f"{t}-policy", ROOT / "outputs" / "table1" / args.task / t / "model", POLICY_HEAD)
             for t in tags if args.policy_head]
    if args.references and args.task == "go2":
        extra += [(n, agent, planner) for n, (_, agent, planner) in REFERENCES.items()]
        extra += [("zoo-policy", ROOT / ZOO_MODEL, POLICY_HEAD)] if args.policy_head else []
    for name, agent, planner in extra:
        if not (folder / f"{name}.json").exists():
            evaluate(args.task, agent, folder / f"{name}.json", args.seed, args.dry_run, planner)
    if not args.dry_run:
        text = table(args.task, [n for n in VARIANTS if n in names or (folder / f"{n}.json").exists()])
        (ROOT / "results" / "table1" / args.task / "table.md").write_text(text + "\n")
        print(text)
        print(json.dumps({"task": args.task, "variants": names}))


if __name__ == "__main__":
    main()
