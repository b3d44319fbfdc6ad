"""SimDist's own protocol on the Go2 (docs/official.md 7): the paper's planner acts, logs the real data and judges.

The official robot code runs the full MPPI at every tick (450 Gaussian samples at std 2.0 + 22 noisy copies of
the policy chunk, 8 iterations, 64 elites, temperature 0.25, no temporal ensembling, the released initial mean),
logs that planner's executed actions as the real data, and finetunes the dynamics alone for 100 passes over them
at batch 32. Each step below is one ``simdist`` command writing one small result file under
``results/official/protocol/<profile>/``; a step whose result exists is skipped, so the same command resumes::

    python -m results.official.protocol zero-shot     # the official model zero-shot, 30 trials at 0.7 m/s
    python -m results.official.protocol control       # point 2: the value head on the candidates' true end states
    python -m results.official.protocol adapt         # log 8 minutes with the paper's planner, finetune 100 passes
    python -m results.official.protocol adapted       # the adapted models judged as zero-shot was
    python -m results.official.protocol adapt --minutes 1   # a session-sized pilot: 1 minute of real data
    python -m results.official.protocol all --dry-run # list what remains
    python -m results.official.protocol table         # the tables of docs/official.md 7 from the result files

Run from the repository root (one OpenMP thread, the Hub offline: ``results.runner.run_command``).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

from results.runner import ROOT, estimate_cell, run_result_step, simdist_command
from simdist import bootstrap_ci

PROFILE = "results/official/profiles/foam-hard.yaml"
OUT = Path("results/official/protocol/foam-hard")
OFFICIAL = "simdist/go2-official"
#: the official robot's planner: the ``paper`` preset (450 + 22 x 8, std 2.0, no ensembling) with the released
#: initial mean (SIMDIST 11.1a: the previous plan's last step, then zeros)
PAPER = ["--planner-preset", "paper", "--planner.warm_start", "official"]
#: the closed loop at the speed where zero-shot fell in every trial so far (docs/official.md 6.1-6.2); the paper's
#: planner costs about 0.4 s of CPU per env and tick here, so the two slower-walking speeds are left out, and the
#: 30 trials run as 3 chunks of 10 (seeds 0-2), each its own result file, so that an interrupted run loses one chunk
JUDGE = ["--profile", PROFILE, "--speeds", "0.7", "--trials", "10", "--envs", "10"]
CHUNKS = 3
#: the real data and the finetuning: ``simdist adapt`` logs 8 minutes (24,000 steps at 50 Hz) plus 4 held-out
#: episodes with the paper's planner, one env at a time (a batch keeps planning for envs whose counted episode has
#: ended until its last one ends: 47 % of the first 4-env chunk's ticks here, while one env's tick costs the same
#: CPU per env as four's; an interruption loses at most one episode; ``torch.compile``), then finetunes the
#: dynamics alone with the official recipe (100 passes over the real data at batch 32, lr 2e-4 to 1e-4 with 2,000
#: warm-up steps and a cosine decay over 400,000 steps: ``config/finetune_model.yaml``); the closed loop is not run
#: inside the loop (no evaluation trials) but by the same ``simdist evaluate`` as zero-shot. A killed run resumes
#: at the last episode or finetuning checkpoint when the same command runs again.
ADAPT_RUN = Path("outputs/official-protocol/foam-hard")
#: the protocol's amount of real data in minutes (the issue's least; the paper's least is 16)
MINUTES = 8.0
#: the smaller amounts run as session-sized pilots (``--minutes``), whose rows the table prints too
PILOTS = (1.0,)
#: each adapted model (its ``stage-1`` folder, 2.7 MB) is copied here when its finetuning ends, so that a later
#: session judges it from a clean checkout (the logged data that made it are never committed)
MODELS = OUT / "models"
COLLECT = ["--evaluation.trials", "0", "--num_envs", "1", "--heldout_episodes", "4",
           "--planner-preset", "paper", "--planner.warm_start", "official", "--planner.compile", "true"]
OFFICIAL_RECIPE = ["--finetune.windows_per_epoch", "null", "--finetune.batch_size", "32", "--finetune.lr", "2e-4",
                   "--finetune.warmup_steps", "2000", "--finetune.decay_steps", "400000", "--seed", "0"]
#: finetuning budgets in passes over the real data: the official recipe's 100 and one shorter, for the curve (the
#: shorter run starts from the first run's logged data and held-out set)
PASSES = (100, 10)
#: the cloned states of docs/official.md 6.2 (24 states on the first foam block, seed 3)
ON_FOAM = ["--states", "24", "--candidates", "16", "--every", "20", "--skip", "80", "--envs", "8", "--seed", "3"]


def chunk_path(name: str, seed: int) -> Path:
    """The result file of closed loop ``name``'s chunk of trials with ``seed``."""
    return OUT / f"{name}_seed{seed}.json"


def closed_loop(name: str, agent: str) -> list[tuple[Path, list[str]]]:
    """``simdist evaluate --json`` of ``agent`` acting with the paper's planner on the profile, one chunk of trials
    per seed (``NAME_seedS.json``)."""
    return [(chunk_path(name, seed), simdist_command(
        "evaluate", "--task", "go2", "--agent", agent, *PAPER, *JUDGE, "--seed", str(seed), "--json"))
        for seed in range(CHUNKS)]


def finished_chunks(name: str) -> list[dict[str, Any]]:
    """The finished chunks of closed loop ``name`` (their ``simdist evaluate --json`` reports)."""
    paths = (ROOT / chunk_path(name, seed) for seed in range(CHUNKS))
    return [json.loads(path.read_text()) for path in paths if path.is_file()]


def control(driver: str, std: str, pool: str, adapted: int | None = None,
            minutes: float = MINUTES) -> tuple[Path, list[str]]:
    """``simdist mechanism --split --true-value``: the frozen heads on the candidates' true latents beside their
    predicted ones, ρ bootstrapped over episodes; ``driver`` ``realtime`` (docs 6.2's states) or ``paper``,
    candidates from every iteration (``all``) or from the last one (``last``). With ``adapted`` (a finetuning
    budget in passes, on ``minutes`` of real data) the adapted model scores the same states and candidates beside
    zero-shot, whose planner visits them (``control-adapted[-Mmin]-<P>pass_...``): how adaptation moved the
    ranking."""
    planner = ["--planner-preset", "realtime"] if driver == "realtime" else PAPER
    planner = [*planner, "--planner.init_std", std]
    models = ["--model", f"zero-shot={OFFICIAL}"]
    name = f"control_{driver}_std{std}_{pool}.json"
    if adapted is not None:
        models += ["--model", f"adapted={adapted_model(adapted, minutes)}", "--reference", "zero-shot"]
        name = f"control-{adapted_name(adapted, minutes)}_{driver}_std{std}_{pool}.json"
    out = OUT / name
    return out, simdist_command("mechanism", "--task", "go2", "--real", PROFILE, *models, *planner, *ON_FOAM,
                                "--pool", pool, "--split", "--true-value", "--out", str(out))


def data_tag(minutes: float) -> str:
    """The suffix that names a run with ``minutes`` of real data (none for the protocol's 8)."""
    return "" if minutes == MINUTES else f"-{minutes:g}min"


def adapt_run(passes: int, minutes: float = MINUTES) -> Path:
    """The run folder of the finetuning budget ``passes`` on ``minutes`` of real data (the first budget's run
    logs the data)."""
    first = ADAPT_RUN.with_name(ADAPT_RUN.name + data_tag(minutes))
    return first if passes == PASSES[0] else first.with_name(f"{first.name}-{passes}pass")


def adapted_name(passes: int, minutes: float = MINUTES) -> str:
    """``adapted[-Mmin]-<P>pass``: the name of an adapted model's result files and its committed folder."""
    return f"adapted{data_tag(minutes)}-{passes}pass"


def adapted_model(passes: int, minutes: float = MINUTES) -> Path:
    """The committed copy of the adapted model (``keep_adapt_records``), which the ``adapted`` steps judge."""
    return MODELS / adapted_name(passes, minutes)


def adapt(passes: int, minutes: float = MINUTES) -> tuple[Path, list[str]]:
    """``simdist adapt`` of the official model on the profile: the paper's planner logs ``minutes`` of real data,
    then the dynamics finetune for ``passes`` passes; its ``curve.json`` (held-out consistency before and after)
    marks it done."""
    run = adapt_run(passes, minutes)
    first = adapt_run(PASSES[0], minutes)
    start = [] if run == first else ["--data_from", str(first)]
    return run / "curve.json", simdist_command(
        "adapt", "--task", "go2", "--agent", OFFICIAL, "--real", PROFILE, "--out", str(run), *start,
        "--schedule", f"[0, {minutes:g}]", *COLLECT, *OFFICIAL_RECIPE, "--finetune.epochs", str(passes))


def plan(what: str, minutes: float = MINUTES) -> list[tuple[Path, list[str]]]:
    """The steps of ``what`` (``zero-shot``, ``control``, ``adapt``, ``adapted`` or ``all``) in the order they
    run, the adaptation steps on ``minutes`` of real data."""
    steps: list[tuple[Path, list[str]]] = []
    if what in ("zero-shot", "all"):
        steps += closed_loop("zero-shot", OFFICIAL)
    if what in ("control", "all"):
        steps += [control("realtime", "2.0", "all"), control("realtime", "0.5", "all"),
                  control("paper", "2.0", "last"), control("paper", "2.0", "all")]
    if what in ("adapt", "all"):
        steps += [adapt(passes, minutes) for passes in PASSES]
    if what in ("adapted", "all"):
        for passes in PASSES:
            # the cheaper control first (the real-time planner visits the states), then the closed loop, then
            # the paper's planner's control, so that an interrupted session leaves the most finished rows
            steps += [control("realtime", "2.0", "all", passes, minutes)]
            steps += closed_loop(adapted_name(passes, minutes), str(adapted_model(passes, minutes)))
            steps += [control("paper", "2.0", "last", passes, minutes)]
    return steps


def keep_adapt_records(out: Path, passes: int, minutes: float) -> None:
    """Copy a finished adaptation run's ``curve.json`` (held-out consistency, the data logged) beside the
    protocol's results (``adapt-<run>_curve.json``) and its adapted model to ``MODELS``, both to be committed;
    the logged data stay in outputs/."""
    if not (ROOT / out).is_file():
        return
    (ROOT / OUT).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / out, ROOT / OUT / f"adapt-{out.parent.name}_curve.json")
    model = ROOT / adapted_model(passes, minutes)
    if not model.is_dir():
        tmp = model.with_name(f".{model.name}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(ROOT / out.parent / "stages" / "stage-1", tmp)
        tmp.rename(model)


def closed_loop_row(name: str, chunks: list[dict[str, Any]]) -> str:
    """One closed-loop row over its finished chunks: progress mean [95 % CI] (trials, seeds), falls, the planner
    it acted with."""
    values = [v for c in chunks for v in c["values"]]
    e = bootstrap_ci(values)
    falls = sum(1 for c in chunks for ok in c["success"] if not ok)
    p = chunks[0]["details"]["settings"].get("planner_settings", {})
    planner = (f"{p.get('num_samples')} + {p.get('num_policy_samples', 0)} x {p.get('iterations')}, std "
               f"{p.get('init_std')}, warm start {p.get('warm_start')}, ensemble {p.get('temporal_ensemble')}")
    return f"| {name} | {e.mean:.2f} [{e.low:.2f}, {e.high:.2f}] ({e.n}; {len(chunks)} seeds) | {falls} | {planner} |"


def control_row(name: str, report: dict[str, Any]) -> str:
    """One control row: ρ of the whole score, of the value term imagined and on the true end state against the
    true tail, of the reward head imagined and on true latents against the true horizon, by states and (for the
    whole score and the value on the true end state) by episodes."""
    m = next(iter(report["models"].values()))
    q, sp, ep = m["true_latents"], m["split"], m["by_episode"]
    return (f"| {name} | {estimate_cell(m['spearman'])} | {estimate_cell(ep['spearman'])} "
            f"({ep['spearman']['episodes']}) | {estimate_cell(sp['rho_value'])} | "
            f"{estimate_cell(q['rho_value_on_true'])} | {estimate_cell(ep['rho_value_on_true'])} | "
            f"{estimate_cell(sp['rho_reward'])} | {estimate_cell(q['rho_reward_on_true'])} | "
            f"{estimate_cell(q['rho_value_pred_vs_true'])} | {q['value_spread_on_true']['mean']:.3g} / "
            f"{q['value_spread_predicted']['mean']:.3g} / {q['tail_spread']['mean']:.3g} |")


def table() -> str:
    """The markdown tables of every finished step (docs/official.md 7)."""
    lines = ["| closed loop on foam-hard, 0.7 m/s | progress, m of 3.00: mean [95 % CI] (trials) | falls | planner |",
             "|---|---|---|---|"]
    loops = {"zero-shot": "zero-shot"}
    for minutes in (MINUTES, *PILOTS):
        loops |= {adapted_name(p, minutes): f"adapted, {minutes:g} min, {p} passes" for p in PASSES}
    lines += [closed_loop_row(label, chunks) for name, label in loops.items() if (chunks := finished_chunks(name))]
    lines += ["", "| control: driver, std, candidates | ρ whole score | ρ whole, over episodes (episodes) | "
              "ρ value term imagined vs true tail | ρ value head on the true end state vs true tail | "
              "the same over episodes | ρ reward head imagined vs true horizon | ρ reward head on true latents vs "
              "true horizon | ρ value imagined vs on the true end state | value spread on true / imagined / true "
              "tail spread |", "|---|---|---|---|---|---|---|---|---|---|"]
    for out, _ in plan("control"):
        if (ROOT / out).is_file():
            _, driver, std, pool = out.stem.split("_")
            lines.append(control_row(f"{driver}, {std.removeprefix('std')}, {pool}",
                                     json.loads((ROOT / out).read_text())))
    adapted = [(out, json.loads((ROOT / out).read_text())) for minutes in (MINUTES, *PILOTS)
               for out, _ in plan("adapted", minutes) if out.name.startswith("control-") and (ROOT / out).is_file()]
    for out, report in adapted:
        run, driver, std, pool = out.stem.split("_")
        for name in ("zero-shot", "adapted"):
            one = {**report, "models": {name: report["models"][name]}}
            lines.append(control_row(f"{driver}, {std.removeprefix('std')}, {pool}: {name} "
                                     f"({run.removeprefix('control-adapted-')})", one))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["zero-shot", "control", "adapt", "adapted", "all", "table"])
    parser.add_argument("--minutes", type=float, default=MINUTES,
                        help=f"minutes of real data the adaptation steps log and finetune on (default {MINUTES:g})")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    if not 0 < args.minutes <= MINUTES:
        parser.error(f"--minutes must be in (0, {MINUTES:g}], got {args.minutes:g}")
    if args.what == "table":
        print(table())
        return
    budgets = {adapt(passes, args.minutes)[0]: passes for passes in PASSES}
    for out, cmd in plan(args.what, args.minutes):
        if not (ROOT / out).is_file():
            run_result_step(out, cmd, args.dry_run)
        if not args.dry_run and out in budgets:
            keep_adapt_records(out, budgets[out], args.minutes)


if __name__ == "__main__":
    main()
