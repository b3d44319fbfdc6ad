"""The official SimDist Go2 model and PPO experts on simdist's protocol (docs/official.md).

Every step is one ``simdist evaluate --task go2 ... --json`` written to ``results/official/<group>/<name>.json``;
a step whose result exists is skipped, so the same command resumes after an interruption::

    python -m results.official.run walks          # the official model vs simdist/go2-slope, 10 m walks
    python -m results.official.run experts        # the official expert's protocol results beside ours
    python -m results.official.run ranking        # plan ranking of both models at four spreads
    python -m results.official.run split          # the ranking ceiling: true return and score split in parts
    python -m results.official.run calibrate      # proxy-real candidates for the adaptation test
    python -m results.official.run adapt          # the adaptation test on foam-hard (hours; resumes)
    python -m results.official.run adapt --only 32min-ep100  # one budget of the curve (demo, ranking, evaluation)
    python -m results.official.run all --dry-run  # list what remains

Run from the repository root (one OpenMP thread, the Hub offline: ``results.runner.run_command``).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from results.runner import ROOT, run_result_step, simdist_command

OUT = Path("results/official")
OFFICIAL = "simdist/go2-official"
OURS = "simdist/go2-slope"
OFFICIAL_EXPERT = "hub/experts/go2-official"
OUR_EXPERT = "hub/experts/go2"
#: the real-time MPPI preset with temporal ensembling (docs/go2.md 4.1: the zoo model's row)
REALTIME = ["--planner-preset", "realtime", "--temporal-ensemble", "0.8"]
#: a middle budget: 64 + 3 policy samples × 2 iterations around the policy chunk at std 0.5
MIDDLE = ["--planner-preset", "paper", "--num-samples", "64", "--iterations", "2", "--init-std", "0.5", "--warm-start",
          "policy",
          "--temporal-ensemble", "0.8"]
WALK_10M = ["--course-length", "10", "--speeds", "0.5", "--trials", "10", "--randomize"]
TERRAINS = ("flat", "slope")
PROFILES = ("ptfe-slope-5.7deg", "ptfe-slope-3deg", "foam", "ice-patch")


def evaluate(out: Path, *args: str) -> tuple[Path, list[str]]:
    preset = [] if "--planner-preset" in args else ["--planner-preset", "paper"]  # as these numbers were measured
    return out, simdist_command("evaluate", "--task", "go2", *preset, *args, "--json")


def walks(seeds: int) -> list[tuple[Path, list[str]]]:
    """Nominal 10 m walks at 0.5 m/s, 10 randomised trials per seed: both models at the real-time budget, then
    the middle budget (seeds interleaved so every row grows together)."""
    plan = []
    for budget, flags in (("realtime", REALTIME), ("middle", MIDDLE)):
        for s in range(seeds):
            for t in TERRAINS:
                for name, model in (("official", OFFICIAL), ("ours", OURS)):
                    if name == "ours" and budget == "realtime":
                        continue  # docs/go2.md 4.1 has these 40 trials (results/go2/stage4-ema/37000/)
                    plan.append(evaluate(OUT / "walks" / f"{name}_{budget}_{t}_seed{s}.json", "--agent", model,
                                         "--terrain", t, *WALK_10M, *flags, "--seed", str(s)))
    return plan


def experts(trials: int) -> list[tuple[Path, list[str]]]:
    """Both expert sets on the nominal flat and slope walks (randomised) and on every built-in profile."""
    plan = []
    for name, folder in (("official", OFFICIAL_EXPERT), ("ours", OUR_EXPERT)):
        agent = f"expert:{folder}"
        for t in TERRAINS:
            plan.append(evaluate(OUT / "experts" / f"{name}_{t}.json", "--agent", agent, "--terrain", t,
                                 *WALK_10M[:-3], "--trials", str(trials), "--randomize"))
    for p in PROFILES:
        for name, folder in (("official", OFFICIAL_EXPERT), ("ours", OUR_EXPERT)):
            plan.append(evaluate(OUT / "experts" / f"{name}_profile_{p}.json", "--agent", f"expert:{folder}",
                                 "--profile", p, "--trials", "5"))
    return plan


#: spreads of the candidates around the policy chunk: the real-time planner's, a middle one, the paper's
SPREADS = ("0.1", "0.5", "1.0", "2.0")
RANKING_PROFILES = ("results/official/profiles/nominal-slope.yaml", "ptfe-slope-5.7deg", "foam")


def ranking_command(profile: str, std: str, out: Path, *extra: str) -> list[str]:
    """``simdist mechanism`` of both models on 24 states × 16 candidates the real-time planner visits (seed 3)."""
    return simdist_command(
        "mechanism", "--task", "go2", "--real", profile, "--model", f"zoo={OURS}", "--model",
        f"official={OFFICIAL}", "--reference", "zoo", "--planner-preset", "realtime", "--init-std", std,
        "--states", "24", "--candidates", "16", "--every", "10", "--skip", "30", "--envs", "8", "--seed", "3",
        *extra, "--out", str(out))


def ranking() -> list[tuple[Path, list[str]]]:
    """Plan ranking (``simdist mechanism``): both models score the candidates the zoo model's real-time planner
    samples at each spread, against the true returns from cloned states (Spearman ρ)."""
    plan = []
    for std in SPREADS:
        for profile in RANKING_PROFILES:
            name = Path(profile).name.removesuffix(".yaml")
            out = OUT / "ranking" / f"{name}_std{std}.json"
            plan.append((out, ranking_command(profile, std, out)))
    return plan


#: (profile, spread) cells of the ranking split: the nominal slope at the middle and the paper's spread, and one
#: proxy-real profile at the paper's spread; the same states and candidates as the ranking rows (same seed)
SPLIT_CELLS = (("results/official/profiles/nominal-slope.yaml", "1.0"),
               ("results/official/profiles/nominal-slope.yaml", "2.0"), ("ptfe-slope-5.7deg", "2.0"))


def split() -> list[tuple[Path, list[str]]]:
    """The ranking ceiling (issue point 5): the ranking rows' states and candidates again, the true return split
    into horizon rewards (per term), falls and the critic's continuation after the horizon, and each model's score
    into its horizon rewards and value term (``simdist mechanism --split``)."""
    plan = []
    for profile, std in SPLIT_CELLS:
        name = Path(profile).name.removesuffix(".yaml")
        out = OUT / "split" / f"{name}_std{std}.json"
        plan.append((out, ranking_command(profile, std, out, "--split")))
    return plan


#: proxy-real candidates for the adaptation test (issue point 6) and the flat course they are measured against
CALIBRATION_PROFILES = (*(f"results/official/profiles/{name}.yaml" for name in (
    "flat-nominal", "flat-lat3", "flat-lat3-ms0.6", "foam-hard")),
    "results/go2/ptfe-friction/profiles/ptfe-mu0.18.yaml")


def calibrate(trials: int) -> list[tuple[Path, list[str]]]:
    """Calibration rows of the adaptation profiles: the official model zero-shot with the real-time planner and
    both experts, ``trials`` per protocol speed (the model first on every profile: it decides which profiles
    stay)."""
    plan = []
    agents = (("official", [OFFICIAL, *REALTIME]), ("expert-ours", [f"expert:{OUR_EXPERT}"]),
              ("expert-official", [f"expert:{OFFICIAL_EXPERT}"]))
    for name, agent in agents:
        for profile in CALIBRATION_PROFILES:
            stem = Path(profile).name.removesuffix(".yaml")
            plan.append(evaluate(OUT / "calibration" / f"{name}_{stem}.json", "--agent", *agent, "--profile",
                                 profile, "--trials", str(trials), "--envs", "8", "--seed", "0"))
    return plan


#: the adaptation test (issue point 6): the profile where the official model fails zero-shot (calibration table)
ADAPT_PROFILE = "results/official/profiles/foam-hard.yaml"
ADAPT_RUN = Path("outputs/official-adapt/foam-hard-8min")
#: the demo's loop: 8 minutes of proxy-real data logged with the real-time planner, dynamics-only finetuning with
#: the official recipe (batch 32, lr 2e-4 with warm-up; 4 epochs of 6,000 windows), 10 trials per protocol speed
ADAPT_DEMO = ["--model", OFFICIAL, "--real", ADAPT_PROFILE, "--minutes", "8", "--epochs", "4", "--trials", "10",
              "--no-video", "--seed", "0"]
#: the budget where the ranking holds (section 5: ρ 0.34 at std 0.5, against 0.12 at the real-time std 0.1), at
#: which the adapted dynamics can change the choice (docs/go2.md 6.3); slower than real time on this CPU
ADAPT_EVAL = [*MIDDLE, "--profile", ADAPT_PROFILE, "--speeds", "0.7", "--trials", "30", "--envs", "16"]


#: states on the foam: the mechanism's envs walk at 0.3 m/s, which reach the first block (from 0.3 m) about 50
#: steps into the walk (after 25 standing); cloned at 80, 100 and 120 control steps of each episode
ON_FOAM = ["--candidates", "16", "--every", "20", "--skip", "80", "--envs", "8", "--seed", "3"]


#: budgets beyond the demo's (8 minutes of logged data, 4 epochs): (minutes, epochs, also at the middle budget);
#: each run folder starts from the demo's logged data (a longer budget collects on from there, the same episodes
#: an uninterrupted run would log) and zero-shot stage
BUDGETS = ((8, 16, False), (32, 16, True), (32, 100, True))


def budget_run(minutes: int, epochs: int) -> tuple[Path, str]:
    """The run folder of a budget and its label in result names (``ep16``; ``32min-ep16`` beyond 8 minutes)."""
    label = f"ep{epochs}" if minutes == 8 else f"{minutes}min-ep{epochs}"
    return ADAPT_RUN.with_name(f"foam-hard-{minutes}min-ep{epochs}"), label


def seed_base(run: Path) -> Path:
    """The finished run to start budget run ``run`` from: one with as many minutes of logged data (its episodes
    are the ones ``run`` would log), else the demo's."""
    minutes = {budget_run(m, e)[0]: m for m, e, _ in BUDGETS}
    same = [r for r, m in minutes.items() if r != run and m == minutes[run] and (ROOT / r / "results.json").is_file()]
    return same[0] if same else ADAPT_RUN


def seed_run(base: Path, run: Path, dry: bool) -> None:
    """Start run folder ``run`` from ``base``'s logged data and zero-shot stage (its demo then only finetunes and
    evaluates the adapted stage again, with its own settings)."""
    target = ROOT / run
    if dry or (target.is_dir() and any(target.iterdir())) or not (ROOT / base / "results.json").is_file():
        return
    shutil.copytree(ROOT / base, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
        "stages", "lightning", "live", "results.*", "curve.*", "timing.json"))  # its own results mark it done


def adapt() -> list[tuple[Path, list[str]]]:
    """The loop on ``foam-hard`` (the demo: zero-shot and adapted at the real-time budget, held-out consistency),
    then, once its adapted model exists, both models at the middle budget (30 trials each at 0.7 m/s) and their
    ranking on the profile before and after (``simdist mechanism --split``, the zero-shot planner visiting)."""
    adapted = ADAPT_RUN / "stages" / "stage-1"
    out = OUT / "adapt" / "foam-hard-8min"
    demo = simdist_command("demo", "--task", "go2", *ADAPT_DEMO, "--out", str(ADAPT_RUN))
    plan = [(ADAPT_RUN / "results.json", demo)]
    for std in ("0.5", "2.0"):  # the zero-shot model's ranking on the profile, measurable before the loop ends
        path = out / f"ranking-zero-shot_std{std}.json"
        plan.insert(0, (path, simdist_command(
            "mechanism", "--task", "go2", "--real", ADAPT_PROFILE, "--model", f"zero-shot={OFFICIAL}",
            "--planner-preset", "realtime", "--init-std", std, "--states", "24", *ON_FOAM, "--split", "--out",
            str(path))))
    for minutes, epochs, middle in BUDGETS:
        run, label = budget_run(minutes, epochs)
        demo_args = [*ADAPT_DEMO]
        demo_args[demo_args.index("--minutes") + 1] = str(minutes)
        demo_args[demo_args.index("--epochs") + 1] = str(epochs)
        plan.append((run / "results.json", simdist_command("demo", "--task", "go2", *demo_args, "--out", str(run))))
        model = run / "stages" / "stage-1"
        path = out / f"ranking-{label}_std0.5.json"
        plan.append((path, simdist_command(
            "mechanism", "--task", "go2", "--real", ADAPT_PROFILE, "--model", f"zero-shot={OFFICIAL}", "--model",
            f"adapted-{label}={model}", "--reference", "zero-shot", "--planner-preset",
            "realtime", "--init-std", "0.5", "--states", "24", *ON_FOAM, "--split", "--out", str(path))))
        if middle:
            plan.append(evaluate(out / f"middle_adapted-{label}.json", "--agent", str(model), *ADAPT_EVAL, "--seed",
                                 "0"))
    for name, model in (("zero-shot", OFFICIAL), ("adapted", str(adapted))):
        plan.append(evaluate(out / f"middle_{name}.json", "--agent", model, *ADAPT_EVAL, "--seed", "0"))
    for std in ("0.5", "2.0"):
        plan.append((out / f"ranking_std{std}.json", simdist_command(
            "mechanism", "--task", "go2", "--real", ADAPT_PROFILE, "--model", f"zero-shot={OFFICIAL}", "--model",
            f"adapted={adapted}", "--reference", "zero-shot", "--planner-preset", "realtime", "--init-std", std,
            "--states", "24", *ON_FOAM, "--split", "--out", str(out / f"ranking_std{std}.json"))))
    return plan


def keep_demo_results(out: Path, dry: bool) -> None:
    """Copy a finished demo's small result files (``outputs/.../results.json`` and beside it) to
    ``results/official/adapt/RUN/demo_*`` to be committed."""
    if dry or out.parts[0] != "outputs" or out.name != "results.json" or not (ROOT / out).is_file():
        return
    keep = ROOT / OUT / "adapt" / out.parent.name
    keep.mkdir(parents=True, exist_ok=True)
    for name in ("results.json", "results.md", "timing.json"):
        if (ROOT / out.parent / name).is_file():
            shutil.copyfile(ROOT / out.parent / name, keep / f"demo_{name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["walks", "experts", "ranking", "split", "calibrate", "adapt", "all"])
    parser.add_argument("--seeds", type=int, default=4, help="walks: seeds of 10 trials each")
    parser.add_argument("--trials", type=int, default=20, help="experts: randomised trials per terrain")
    parser.add_argument("--calibration-trials", type=int, default=4, help="calibrate: trials per protocol speed")
    parser.add_argument("--only", metavar="TEXT", help="run only the steps whose result path contains TEXT "
                        "(e.g. 32min-ep100: one budget of the adapt curve)")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    plan = []
    if args.what in ("experts", "all"):
        plan += experts(args.trials)
    if args.what in ("ranking", "all"):
        plan += ranking()
    if args.what in ("calibrate", "all"):
        plan += calibrate(args.calibration_trials)
    if args.what in ("adapt", "all"):
        plan += adapt()
    if args.what in ("split", "all"):
        plan += split()
    if args.what in ("walks", "all"):
        plan += walks(args.seeds)
    if args.only:
        plan = [(out, cmd) for out, cmd in plan if args.only in str(out)]
        if not plan:
            raise SystemExit(f"--only {args.only}: no step of {args.what!r} writes a path containing it")
    for out, cmd in plan:
        if (ROOT / out).is_file():
            keep_demo_results(out, args.dry_run)
            continue
        if out.parent in {budget_run(m, e)[0] for m, e, _ in BUDGETS}:
            seed_run(seed_base(out.parent), out.parent, args.dry_run)
        run_result_step(out, cmd, args.dry_run)
        keep_demo_results(out, args.dry_run)


if __name__ == "__main__":
    main()
