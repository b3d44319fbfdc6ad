"""Go2 experiment runners: one subcommand per figure or table of docs/go2.md.

    python -m results.go2.run --help                     # the experiments
    python -m results.go2.run EXPERIMENT --help          # its parameters and defaults
    python -m results.go2.run EXPERIMENT [...] --dry-run # print the commands it would run, run nothing
    python -m results.go2.run EXPERIMENT [...]           # run them, from the repository root

Every experiment is a list of `simdist` commands (and the analysis modules of results.go2.analysis). Runs
resume: an evaluation whose result file exists is skipped (results are written to FILE.tmp, then renamed),
training resumes from the stage's last.ckpt, `simdist adapt` and `simdist generate` resume themselves.
Logs go to runs/ (git-ignored); results to results/go2/ by default. Runs use the `simdist` next to this
Python (the README's install: `.venv/bin/python -m results.go2.run ...`), else `python -m simdist.cli`.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from results.runner import simdist_command

ROOT = Path(__file__).resolve().parents[2]
R = "results/go2"
ANALYSIS = "results.go2.analysis"
BASE = "recipes/go2/base.yaml"

#: the real-time MPPI preset (16 + 2 policy samples, one iteration, sampling near the policy head's chunk)
REALTIME = ["--planner-preset", "paper", "--num-samples", "16", "--iterations", "1", "--init-std", "0.1",
            "--warm-start", "policy"]
ENSEMBLE = ["--temporal-ensemble", "0.8"]
#: the nominal-simulation walk: 10 m course at 0.5 m/s, 10 randomised trials
WALK_10M = ["--course-length", "10", "--speeds", "0.5", "--trials", "10", "--randomize"]
#: the adaptation loop's settings of every Go2 schedule (planner flags added per run)
ADAPT = ["--envs", "16", "--episodes-per-eval", "5", "--heldout-episodes", "4", "--epochs", "3",
         "--windows-per-epoch", "12000"]
#: short name -> (reality profile, the protocol's middle speed: where the loop logged before it drew speeds)
PROFILES = {"ptfe57": ("ptfe-slope-5.7deg", "0.3"), "foam": ("foam", "0.7")}
TERRAINS = ("flat", "slope")


# ------------------------------------------------------------------------------------------------ steps
@dataclass
class Step:
    """One thing to do: ``text`` is what --dry-run prints, ``action`` does it, ``done`` marks it finished."""

    text: str
    action: Callable[[], None]
    done: Path | None = None
    parallel: list[Step] = field(default_factory=list)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def _display(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(str(a)) for a in argv)


def _resolve(argv: list[str]) -> list[str]:
    """``simdist`` -> the installed command, ``python`` -> this interpreter (the first one in ``argv``)."""
    for i, token in enumerate(argv):
        if token in ("simdist", "python"):
            return [*argv[:i], *(simdist_command() if token == "simdist" else [sys.executable]), *argv[i + 1:]]
    return argv


def _run(argv: list[str], *, stdout: Path | None = None, log: str | None = None, merge: bool = False) -> None:
    real = _resolve(argv)
    if stdout is not None:  # a result file: written atomically, stderr kept beside it on failure
        stdout.parent.mkdir(parents=True, exist_ok=True)
        tmp, err = stdout.with_name(stdout.name + ".tmp"), stdout.with_name(stdout.name + ".err")
        with open(tmp, "w") as out, open(err, "w") as errf:
            code = subprocess.call(real, stdout=out, stderr=subprocess.STDOUT if merge else errf, env=_env())
        if code:
            raise RuntimeError(f"exit {code}: {_display(argv)} (see {err})")
        tmp.replace(stdout)
        err.unlink()
        return
    if log is not None:
        path = ROOT / "runs" / f"{log}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as out:
            code = subprocess.call(real, stdout=out, stderr=subprocess.STDOUT, env=_env())
    else:
        code = subprocess.call(real, env=_env())
    if code:
        raise RuntimeError(f"exit {code}: {_display(argv)}" + (f" (see runs/{log}.log)" if log else ""))


def cmd(*argv: str, out: str | None = None, log: str | None = None, done: str | None = None,
        merge: bool = False) -> Step:
    """A command; ``out``: its stdout (and stderr if ``merge``) is this result file, skipped when it exists;
    ``log``: its output is appended to runs/LOG.log; ``done``: skipped when this path exists."""
    text = _display(argv) + (f" > {out}" + (" 2>&1" if merge else "") if out else
                             f" >> runs/{log}.log 2>&1" if log else "")
    target = Path(out) if out else None
    return Step(text, lambda: _run(list(argv), stdout=target, log=log, merge=merge),
                done=Path(out) if out else Path(done) if done else None)


def evaluate(out: str, *args: str) -> Step:
    """`simdist evaluate --task go2 ... --json` into ``out``; planning agents act with the paper's preset at the budget
    the arguments give (as these numbers were measured) unless they name another preset."""
    preset = [] if "--planner-preset" in args else ["--planner-preset", "paper"]
    return cmd("simdist", "evaluate", "--task", "go2", *preset, *args, "--json", out=out)


def analysis(script: str, *args: str, log: str | None = None) -> Step:
    """An analysis script; one that writes ``--out FILE`` is skipped when FILE exists."""
    written = args[args.index("--out") + 1] if "--out" in args and not script.startswith("summarize") else None
    return cmd("python", "-m", f"{ANALYSIS}.{script.removesuffix('.py')}", *args, log=log, done=written)


def copy(sources: Sequence[str], dest: str) -> Step:
    def action() -> None:
        Path(dest).mkdir(parents=True, exist_ok=True)
        for s in sources:
            shutil.copy2(s, dest)
    return Step(f"mkdir -p {dest} && cp {' '.join(sources)} {dest}/", action)


def together(*steps: Step) -> Step:
    """Steps run at the same time (e.g. two adaptation runs on two cores)."""
    return Step("in parallel:", lambda: None, parallel=list(steps))


def execute(plan: list[Step], *, dry_run: bool) -> int:
    for step in plan:
        todo = [s for s in (step.parallel or [step]) if not (s.done and s.done.exists())]
        if dry_run:
            if step.parallel:
                print("# in parallel:")
            for s in step.parallel or [step]:
                print(("  " if step.parallel else "") + ("# done: " if s not in todo else "") + s.text)
            continue
        for s in (step.parallel or [step]):
            if s not in todo:
                print(f"[skip, done] {s.text}", flush=True)
        if not todo:
            continue
        for s in todo:
            print(f"[run] {s.text}", flush=True)
        if len(todo) == 1:
            todo[0].action()
        else:
            with ThreadPoolExecutor(len(todo)) as pool:
                for future in [pool.submit(s.action) for s in todo]:
                    future.result()
    return 0


# ------------------------------------------------------------------------------------------ experiments
def walk(out: str, model: str, *args: str) -> Step:
    """The nominal-simulation walk (10 m at 0.5 m/s, 10 randomised trials) of a world model."""
    return evaluate(out, "--controller", f"model:{model}", *WALK_10M, *args)


def exp_expert(a: argparse.Namespace) -> list[Step]:
    """The expert's 20 s bars: straight 0.5 m/s on a 10 m course, randomised starts, 20 trials per row."""
    plan, seed = [], f"_seed{a.seed}" if a.seed else ""
    flags = ["--controller", f"expert:{a.expert}", "--course-length", "10", "--time-factor", "1", "--speeds", "0.5",
             "--trials", str(a.trials), "--randomize", *(["--seed", str(a.seed)] if a.seed else [])]
    for t in a.terrains.split(","):
        if t in ("boxes", "rough"):
            plan += [evaluate(f"{a.out}/{t}{seed}_d{d}.json", *flags, "--terrain", t, "--difficulty", d)
                     for d in a.difficulties.split(",")]
        else:
            plan.append(evaluate(f"{a.out}/{t}{seed}.json", *flags, "--terrain", t))
    return plan + [analysis("expert_summary.py", a.out)]


def exp_expert_profiles(a: argparse.Namespace) -> list[Step]:
    """The expert on the proxy-real profiles (the paper's speeds, 5 trials each, nominal starts)."""
    return [evaluate(f"{a.out}/profile_{p}.json", "--controller", f"expert:{a.expert}", "--profile", p,
                     "--trials", "5") for p in a.profiles.split(",")]


def exp_expert_walks(a: argparse.Namespace) -> list[Step]:
    """The expert on the 10 m nominal-simulation walks (10 randomised and 5 nominal trials)."""
    plan = []
    for t in TERRAINS:
        e = ["--controller", f"expert:{a.expert}", "--terrain", t, "--course-length", "10", "--speeds", "0.5"]
        plan += [evaluate(f"{a.out}/expert_{t}.json", *e, "--trials", "10", "--randomize"),
                 evaluate(f"{a.out}/expert_{t}_nominal.json", *e, "--trials", "5")]
    return plan


def exp_ppo_profiles(a: argparse.Namespace) -> list[Step]:
    """PPO continued from the stage-1 expert (iteration 1950) for 150 iterations on each proxy-real profile."""
    plan = []
    for profile, speeds in (("ptfe-slope-5.7deg", "0.1,0.5"), ("foam", "0.2,1.2"), ("ptfe-slope-3deg", "0.1,0.5")):
        d = f"runs/ppo_on_{profile}"
        start = Path(d) / "model_1950.pt"
        if not start.exists():
            plan.append(copy([f"{a.expert}/train_state/model_1950.pt"], d))
        plan.append(cmd("simdist", "train-expert", "--log-dir", d, "--iterations", "2100", "--envs", "256",
                        "--profile", profile, "--command-mode", "straight", "--straight-speed", speeds,
                        "--save-interval", "25", "--export", f"{d}/export", "--suboptimal", "1950",
                        log=f"ppo_on_{profile}", done=f"{d}/export"))
        plan.append(evaluate(f"{R}/ppo_on_{profile}.json", "--controller", f"expert:{d}/export", "--profile",
                             profile, "--trials", "5"))
    return plan


DATASETS = {
    # stages 1-2: the expert set as of commit 872dbda (expert iteration 1950), no walk starts (the official data)
    "cpu": ("mkdir -p runs/expert-872dbda && git archive 872dbda hub/experts/go2 | tar -x -C runs/expert-872dbda",
            ["simdist", "generate", "--task", "go2", "--experts", "runs/expert-872dbda/hub/experts/go2", "--out",
             "data/go2/sim-cpu", "--preset", "cpu", "--seed", "0", "--walk-start-prob", "0"]),
    # stages 3-4: the shipped expert set (iteration 2549), 30 % of episodes start standing (the default)
    "ws": (None, ["simdist", "generate", "--task", "go2", "--experts", "hub/experts/go2", "--out",
                  "data/go2/sim-cpu-ws", "--preset", "cpu"]),
    # the student-takeover extension: the stage-3 model's policy head takes over expert-driven envs
    "student": (None, ["simdist", "generate", "--task", "go2", "--experts", "hub/experts/go2", "--out",
                       "data/go2/sim-cpu-student", "--envs", "256", "--transitions", "1500000", "--seed", "7",
                       "--student", "outputs/go2/pretrain-ws/model"]),
}


def exp_data(a: argparse.Namespace) -> list[Step]:
    """The pretraining datasets (the data engine's `cpu` preset, 5 M transitions each)."""
    plan = []
    for name in a.sets.split(","):
        prepare, argv = DATASETS[name]
        if prepare:
            plan.append(Step(prepare, lambda p=prepare: _run(["bash", "-c", p]),
                             done=Path("runs/expert-872dbda/hub/experts/go2")))
        plan.append(cmd(*argv, log=f"generate_{name}"))
    return plan


#: stage -> (stage file, output folder, checkpoint it starts from)
STAGES = {
    "1": ("stage1", "outputs/go2/pretrain", None),
    "2": ("stage2", "outputs/go2/pretrain-cont", "outputs/go2/pretrain/checkpoints/last.ckpt"),
    "3": ("stage3-walk-starts", "outputs/go2/pretrain-ws", "outputs/go2/pretrain-cont/checkpoints/last.ckpt"),
    "4": ("stage4", "outputs/go2/pretrain-s4", "outputs/go2/pretrain-ws/checkpoints/last.ckpt"),
    "4-ema": ("stage4-ema", "outputs/go2/pretrain-s4-ema", "outputs/go2/pretrain-s4/step32000.ckpt"),
    "student": ("stage4-student", "outputs/go2/pretrain-student", "outputs/go2/pretrain-ws/checkpoints/last.ckpt"),
}


def recipe(stage_file: str) -> list[str]:
    return ["--config", BASE, "--config", f"recipes/go2-slope/{stage_file}.yaml"]


def fit(stage: str, *extra: str, start: str | None = None) -> Step:
    """`simdist fit` of a stage, resuming its own last.ckpt when there is one."""
    name, out, previous = STAGES[stage]
    own = f"{out}/checkpoints/last.ckpt"
    ckpt = own if Path(own).exists() else (start or previous)
    return cmd("simdist", "fit", *recipe(name), *(["--ckpt_path", ckpt] if ckpt else []), *extra,
               log=f"fit_{name}")


def exp_pretrain(a: argparse.Namespace) -> list[Step]:
    """The CPU pretraining stages of the zoo's Go2 model, or the student-takeover run.

    Stages 1 -> 2 -> 3 -> 4 (kept at 32,000 steps, then on to 37,000) -> 4-ema (from 32,000)."""
    plan = []
    for stage in a.stages.split(","):
        if stage == "4":  # stopped at 32,000 (kept as step32000.ckpt: stage 4-ema starts there), then on to 37,000
            s32 = "outputs/go2/pretrain-s4/step32000.ckpt"
            if not Path(s32).exists():
                last = "outputs/go2/pretrain-s4/checkpoints/last.ckpt"
                plan += [fit("4", "--trainer.max_steps", "32000"),
                         Step(f"cp {last} {s32}", lambda src=last, dst=s32: shutil.copy2(src, dst), done=Path(s32))]
            if not a.stop_at_32k:
                plan.append(fit("4", start="outputs/go2/pretrain-s4/checkpoints/last.ckpt"))
        elif stage == "student":
            plan += exp_data(argparse.Namespace(sets="student")) + [fit("student")]
        else:
            plan.append(fit(stage))
    return plan


def validate(stage_file: str, ckpt: str, out: str) -> Step:
    """Held-out loss terms (`simdist validate`, 40 batches) into a log the build script reads."""
    return cmd("simdist", "validate", *recipe(stage_file), "--ckpt_path", ckpt, "--trainer.limit_val_batches",
               "40", out=out, merge=True)


def export(ckpt: str, model: str, *flags: str) -> Step:
    return cmd("simdist", "export", "--ckpt", ckpt, "--out", model, *flags, log="export", done=f"{model}/config.json")


def exp_measure(a: argparse.Namespace) -> list[Step]:
    """A pretraining checkpoint in nominal simulation.

    Held-out losses, MPPI (real-time preset; seeds 0 and 1) and the policy head on the 10 m walks, and the
    policy head's error along the expert's walks and along its own."""
    out, m = a.out, a.model
    plan = [validate(a.stage, a.ckpt, f"{out}/validate.log"), export(a.ckpt, m)]
    for t in TERRAINS:
        plan += [walk(f"{out}/mppi_{t}.json", m, "--terrain", t, *REALTIME),
                 walk(f"{out}/mppi_{t}_seed1.json", m, "--terrain", t, *REALTIME, "--seed", "1"),
                 walk(f"{out}/policy_{t}.json", m, "--terrain", t, "--planner", "policy")]
        if a.nominal:  # 5 nominal (not randomised) trials, as the first models were measured
            plan.append(evaluate(f"{out}/mppi_{t}_nominal.json", "--controller", f"model:{m}", "--terrain", t,
                                 "--course-length", "10", "--speeds", "0.5", "--trials", "5", *REALTIME))
        if not a.no_errors:
            plan += [analysis("walk_start_error.py", m, t, "--randomize", "--out",
                              f"{out}/walk_start_error_{t}.json", log="walk_start_error"),
                     analysis("on_policy_error.py", m, t, "--out", f"{out}/on_policy_error_{t}.json",
                              log="on_policy_error")]
    return plan


def exp_ema_walks(a: argparse.Namespace) -> list[Step]:
    """The weight-averaged stage-4 checkpoints (the zoo model's table).

    Held-out losses and MPPI + temporal ensembling 0.8 on the 10 m walks (seeds 0-1); for the chosen one
    (--confirm) seeds 2-3, MPPI without ensembling (seeds 0-3) and the policy head with and without it (seeds
    0-1); a table per checkpoint."""
    run, out, plan = "outputs/go2/pretrain-s4-ema", f"{R}/stage4-ema", []
    for name in a.checkpoints.split(","):
        step = name.removesuffix("-raw")
        ckpt, m, res = f"{run}/checkpoints/step{step}.ckpt", f"{run}/model-{name}", f"{out}/{name}"
        raw = name.endswith("-raw")  # the raw (non-averaged) weights; validation reads the averaged ones
        if not raw:
            plan.append(validate("stage4-ema", ckpt, f"{res}/validate.log"))
        plan.append(export(ckpt, m, *(["--current-weights"] if raw else [])))
        seeds = ("0", "1", "2", "3") if name == a.confirm else ("0", "1")
        for t in TERRAINS:
            plan += [walk(f"{res}/mppi_te0.8_{t}_seed{s}.json", m, "--terrain", t, *REALTIME, *ENSEMBLE, "--seed", s)
                     for s in seeds]
            if name == a.confirm:
                plan += [walk(f"{res}/mppi_{t}_seed{s}.json", m, "--terrain", t, *REALTIME, "--seed", s)
                         for s in ("0", "1", "2", "3")]
                for s in ("0", "1"):
                    plan += [walk(f"{res}/policy_{t}_seed{s}.json", m, "--terrain", t, "--planner", "policy",
                                  "--seed", s),
                             walk(f"{res}/policy_te0.8_{t}_seed{s}.json", m, "--terrain", t, "--planner",
                                  "policy", *ENSEMBLE, "--seed", s)]
        plan.append(analysis("summarize_walks.py", res, "--out", f"{res}/table.md"))
    return plan


def exp_temporal_ensemble(a: argparse.Namespace) -> list[Step]:
    """Temporal ensembling decays for MPPI (real-time preset) and the policy head.

    Decays compared on seeds 0-1, the chosen 0.8 against none on seeds 2-3."""
    m, out, plan = a.model, a.out, []
    for t in ("slope", "flat"):
        for s in ("0", "1"):
            plan += [walk(f"{out}/policy_{t}_te{d}_seed{s}.json", m, "--terrain", t, "--planner", "policy",
                          "--temporal-ensemble", d, "--seed", s) for d in ("0.5", "0.8", "0.9", "0.95")]
            plan.append(walk(f"{out}/policy_{t}_seed{s}.json", m, "--terrain", t, "--planner", "policy", "--seed", s))
            plan += [walk(f"{out}/mppi_{t}_te{d}_seed{s}.json", m, "--terrain", t, *REALTIME, "--temporal-ensemble",
                          d, "--seed", s) for d in ("0.7", "0.8", "0.9")]
        for s in ("0", "1", "2", "3"):
            plan += [walk(f"{out}/mppi_{t}_seed{s}.json", m, "--terrain", t, *REALTIME, "--seed", s),
                     walk(f"{out}/mppi_{t}_te0.8_seed{s}.json", m, "--terrain", t, *REALTIME, *ENSEMBLE, "--seed", s)]
    return plan + [analysis("summarize_walks.py", out, "--out", f"{out}/table.md")]


def exp_reset_phase(a: argparse.Namespace) -> list[Step]:
    """The protocol's reset phase: walking at once (--reset-steps 1) and re-padding the history at the walk start."""
    plan = []
    for t in TERRAINS:
        for p in ("mppi", "policy"):
            e = ["--terrain", t, "--planner", p, *(REALTIME if p == "mppi" else [])]
            plan += [walk(f"{a.out}/{p}_{t}_reset1.json", a.model, *e, "--reset-steps", "1"),
                     walk(f"{a.out}/{p}_{t}_pad.json", a.model, *e, "--walk-start-history", "pad")]
    return plan


def exp_paper_vs_realtime(a: argparse.Namespace) -> list[Step]:
    """The paper-size MPPI against the real-time preset (3 m nominal flat course, 2 trials each).

    Paper size: 450 + 22 samples x 8 iterations, the official settings (a tick takes about 1.3 s for 2 envs)."""
    e = ["--controller", f"model:{a.model}", "--terrain", "flat", "--course-length", "3", "--speeds", "0.5",
         "--trials", "2"]
    return [evaluate(f"{a.out_prefix}_paper.json", *e, "--num-samples", "450", "--iterations", "8"),
            evaluate(f"{a.out_prefix}_realtime.json", *e, *REALTIME)]


def exp_action_jitter(a: argparse.Namespace) -> list[Step]:
    """Step-to-step change of the executed action, with and without temporal ensembling."""
    return [analysis("action_jitter.py", *a.models, "--terrain", "slope", "--out", a.out, log="action_jitter")]


def exp_demo(a: argparse.Namespace) -> list[Step]:
    """`simdist demo` (timed with /usr/bin/time -v when there is one), its outputs copied into the results."""
    timed = ["/usr/bin/time", "-v"] if Path("/usr/bin/time").exists() else []
    extra = [*(["--collect-speed", a.collect_speed] if a.collect_speed else []), *shlex.split(a.extra)]
    files = ["results.json", "results.md", "curve.json", "curve.png", "rollout_zero_shot.gif", "rollout_adapted.gif"]
    return [cmd(*timed, "simdist", "demo", "--task", "go2", "--model", a.model, "--out", a.run, *extra, log="demo"),
            copy([f"{a.run}/{f}" for f in files], a.results)]


def exp_adapt_curve(a: argparse.Namespace) -> list[Step]:
    """The adaptation schedule on the proxy-real profiles (slope and foam in parallel).

    Per stage: collect on-policy proxy-real data with the planner, finetune the dynamics on all of it,
    evaluate; then the curves and the value AUC of the logged foam episodes under the zero-shot model and the
    last stage's."""
    models = {"ptfe57": a.slope_model, "foam": a.foam_model}
    plan_flags = [*REALTIME, *([] if a.no_ensemble else ENSEMBLE)]
    runs, after, last = [], [], len(a.schedule.split(",")) - 1
    for key in a.profiles.split(","):
        profile, middle = PROFILES[key]
        run = f"outputs/adapt/{key}-{a.tag}"
        res = a.results.format(profile=key, tag=a.tag)
        speed = ["--collect-speed", middle] if a.collect_speed == "middle" else []
        runs.append(cmd("simdist", "adapt", "--model", models[key], "--real", profile, "--schedule", a.schedule,
                        "--out", run, *plan_flags, *speed, *ADAPT, log=f"adapt_{key}-{a.tag}"))
        after.append(copy([f"{run}/curve.json", f"{run}/curve.png"], res))
        if key in a.auc.split(","):
            minutes = a.schedule.split(",")[-1]
            after += [analysis("value_auc_scores.py", run, models[key], "--out", f"{res}/value_auc_scores.json"),
                      analysis("value_auc_scores.py", run, f"{run}/stages/stage-{last}", "--out",
                               f"{res}/value_auc_scores_{minutes}min.json")]
    plan = [together(*runs) if len(runs) > 1 else runs[0], *after]
    if a.build_zoo:
        plan.append(cmd("python", "hub/build_go2_models.py", "adapted"))
    return plan


def exp_ablations(a: argparse.Namespace) -> list[Step]:
    """Other trainable parts on the demo's proxy-real data (4 minutes): the demo's finetuning with --freeze F."""
    plan = []
    for parts in ("dynamics,encoder", "dynamics,value", "all"):
        run = f"outputs/adapt/ptfe57-{parts}{a.tag}"
        plan += [cmd("simdist", "adapt", "--model", a.model, "--real", "ptfe-slope-5.7deg", "--schedule", "0,4",
                     "--freeze", parts, "--data-from", a.demo, "--out", run, "--envs", "16", *REALTIME,
                     *shlex.split(a.plan), "--episodes-per-eval", "3", "--heldout-episodes", "4", "--epochs", "3",
                     "--windows-per-epoch", "6000", log=f"ablation_{parts}{a.tag}"),
                 copy([f"{run}/curve.json"], f"{R}/ablations{a.tag}/{parts}")]
    return plan


def exp_planner_reach(a: argparse.Namespace) -> list[Step]:
    """Shadow planners: how far swapping in the adapted dynamics moves the executed action (3 trials a speed)."""
    friction = f"{R}/ptfe-friction/profiles/ptfe-mu0.18.yaml"
    runs = [("ptfe57", "hub/models/go2-slope", "outputs/adapt/ptfe57-ema-speeds/stages/stage-2",
             "ptfe-slope-5.7deg", "0.1,0.3,0.5"),
            ("foam", "hub/models/go2-foam", "outputs/adapt/foam-ema-speeds/stages/stage-2", "foam", "0.2,0.7,1.2"),
            ("ptfe-mu0.18", "hub/models/go2-slope", "outputs/adapt/calib-mu0.18/stages/stage-2", friction,
             "0.1,0.3,0.5")]
    return [analysis("planner_reach.py", base, adapted, "--profile", profile, "--speeds", speeds, "--trials", "3",
                     "--out", f"{R}/planner-reach/{name}_realtime.json", log="planner_reach")
            for name, base, adapted, profile, speeds in runs]


def exp_wide_search(a: argparse.Namespace) -> list[Step]:
    """Wider MPPI searches on the PTFE slope, zero-shot and with the 16-minute dynamics (3 trials a speed)."""
    out, plan = f"{R}/wide-search", []
    models = ("hub/models/go2-slope", "outputs/adapt/ptfe57-ema-speeds/stages/stage-2")

    def search(f: str, m: str, n: str, it: str, std: str, *extra: str, warm: str = "policy") -> Step:
        return evaluate(f, "--controller", f"model:{m}", "--profile", "ptfe-slope-5.7deg", "--trials", "3",
                        "--num-samples", n, "--iterations", it, "--init-std", std, "--warm-start", warm, *ENSEMBLE,
                        *extra)

    for m in models:
        plan += [search(f"{out}/probe_0.3ms_{Path(m).name}_{n}_{it}_{std}.json", m, n, it, std, "--speeds", "0.3")
                 for n, it, std in (("128", "3", "0.5"), ("256", "4", "1.0"))]
    plan += [search(f"{out}/ptfe57_256x4_std1_{Path(m).name}.json", m, "256", "4", "1.0") for m in models]
    for std in ("0.1", "0.3"):  # the real-time budget with the shift warm start
        plan += [search(f"{out}/shift16x1_std{std}_{Path(m).name}.json", m, "16", "1", std, warm="shift")
                 for m in models]
    return plan


def _profile_with_friction(mu: str, path: Path) -> None:
    candidates = [ROOT / "components/tasks/go2/profiles/ptfe-slope-5.7deg.yaml",
                  ROOT / "components/tasks/go2/profiles/ptfe-slope-5.7deg.yaml"]
    text = next(p for p in candidates if p.exists()).read_text()
    lines = [f"friction: {mu}" if ln.startswith("friction: 0.12") else f"name: ptfe-mu{mu}" if ln.startswith("name: ")
             else ln for ln in text.splitlines()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def exp_friction_sweep(a: argparse.Namespace) -> list[Step]:
    """The shipped PTFE slope at higher frictions (the 20 ms delay kept).

    The expert and the zoo model zero-shot at 0.14-0.20, the 0/8/16-minute schedule at 0.14 and 0.18, the
    value AUC of its logged episodes and the paper's planner on it."""
    out, plan = f"{R}/ptfe-friction", []
    for mu in ("0.14", "0.16", "0.18", "0.2"):
        p = Path(f"{out}/profiles/ptfe-mu{mu}.yaml")
        plan += [Step(f"write {p} (ptfe-slope-5.7deg with friction {mu})",
                      lambda mu=mu, p=p: _profile_with_friction(mu, p), done=p),
                 evaluate(f"{out}/expert_mu{mu}.json", "--trials", "5", "--controller", "expert:hub/experts/go2",
                          "--profile", str(p)),
                 evaluate(f"{out}/simdist_mu{mu}.json", "--trials", "5", "--controller", "model:hub/models/go2-slope",
                          "--profile", str(p), *REALTIME, *ENSEMBLE)]
    for mu in ("0.14", "0.18"):
        run = f"outputs/adapt/calib-mu{mu}"
        plan += [cmd("simdist", "adapt", "--model", "hub/models/go2-slope", "--real",
                     f"{out}/profiles/ptfe-mu{mu}.yaml", "--schedule", "0,8,16", "--out", run, *REALTIME, *ENSEMBLE,
                     *ADAPT, log=f"adapt_calib-mu{mu}"),
                 copy([f"{run}/curve.json", f"{run}/curve.png"], f"{out}/adapt-mu{mu}")]
    for m in ("hub/models/go2-slope", "outputs/adapt/calib-mu0.18/stages/stage-2"):
        plan.append(analysis("value_auc_scores.py", "outputs/adapt/calib-mu0.18", m, "--out",
                             f"{out}/adapt-mu0.18/value_auc_{Path(m).name}.json"))
    for m in ("hub/models/go2-slope", "outputs/adapt/calib-mu0.18/stages/stage-2"):  # the paper's planner, ~10 min
        plan.append(evaluate(f"{out}/paper_planner_mu0.18_{Path(m).name}.json", "--controller", f"model:{m}",
                             "--profile", f"{out}/profiles/ptfe-mu0.18.yaml", "--speeds", "0.3", "--trials", "3"))
    return plan + [analysis("ptfe_friction_table.py", out)]


#: the Go2 summary table (docs/go2.md "Summary"): label -> result files (pooled)
README_ROWS = [
    "expert, flat=results/go2/expert_flat.json",
    "expert, 5.7 deg slope=results/go2/expert_slope.json",
    "expert, ptfe-slope-5.7deg=results/go2/expert-2549/profile_ptfe-slope-5.7deg.json",
    "expert, foam=results/go2/expert-2549/profile_foam.json",
    "SimDist zoo model, flat=results/go2/stage4-ema/37000/mppi_te0.8_flat_seed*.json",
    "SimDist zoo model, 5.7 deg slope=results/go2/stage4-ema/37000/mppi_te0.8_slope_seed*.json",
    "demo zero-shot, ptfe-slope-5.7deg=results/go2/demo-30-trials/results.json#protocol.zero_shot",
    "demo adapted (4 min), ptfe-slope-5.7deg=results/go2/demo-30-trials/results.json#protocol.adapted",
]


def exp_readme_table(a: argparse.Namespace) -> list[Step]:
    """The Go2 summary table of docs/go2.md (mean, 95 % bootstrap CI, trials) from the committed result files."""
    return [analysis("walk_ci.py", *README_ROWS)]


def opt(*names: str, **kwargs: object) -> tuple[tuple[str, ...], dict[str, object]]:
    return names, kwargs


EXPERT = opt("--expert", default="hub/experts/go2", help="expert set (default: the shipped one, iteration 2549)")
#: experiment -> (plan builder, its options)
EXPERIMENTS: dict[str, tuple[Callable[[argparse.Namespace], list[Step]], list[tuple[tuple[str, ...], dict]]]] = {
    "expert": (exp_expert, [
        EXPERT, opt("--out", default=f"{R}/expert-2549"),
        opt("--seed", type=int, default=0, help="0: files TERRAIN[_dD].json; S: TERRAIN_seedS[_dD].json"),
        opt("--terrains", default="flat,slope,boxes,rough"), opt("--difficulties", default="0.1,0.3,0.5,0.7,0.9,1.0"),
        opt("--trials", type=int, default=20)]),
    "expert-profiles": (exp_expert_profiles, [
        EXPERT, opt("--out", default=f"{R}/expert-2549"),
        opt("--profiles", default="ptfe-slope-5.7deg,ptfe-slope-3deg,foam")]),
    "expert-walks": (exp_expert_walks, [EXPERT, opt("--out", default=R)]),
    "ppo-profiles": (exp_ppo_profiles, [EXPERT]),
    "data": (exp_data, [opt("--sets", default="cpu,ws", help=f"comma-separated, of {', '.join(DATASETS)}")]),
    "pretrain": (exp_pretrain, [
        opt("--stages", default="1,2,3,4,4-ema", help=f"comma-separated, of {', '.join(STAGES)}"),
        opt("--stop-at-32k", action="store_true", help="stage 4: stop at 32,000 steps (all that 4-ema needs)")]),
    "measure": (exp_measure, [
        opt("--stage", required=True, help="the stage file the checkpoint validates with, e.g. stage4"),
        opt("--ckpt", required=True), opt("--model", required=True, help="where to export the checkpoint"),
        opt("--out", required=True, help="results folder"),
        opt("--nominal", action="store_true", help="also 5 nominal (not randomised) MPPI trials"),
        opt("--no-errors", action="store_true", help="skip the policy-head error measurements")]),
    "ema-walks": (exp_ema_walks, [
        opt("--checkpoints", default="37000,35000,37000-raw", help="steps of stage 4-ema; -raw: the raw weights"),
        opt("--confirm", default="37000", help="the checkpoint measured with more seeds and controllers")]),
    "temporal-ensemble": (exp_temporal_ensemble, [
        opt("--model", default="outputs/go2/pretrain-s4/model-32k"), opt("--out", default=f"{R}/temporal-ensemble")]),
    "reset-phase": (exp_reset_phase, [
        opt("--model", required=True, help="docs/go2.md: the 20,000-step model (stage 2)"),
        opt("--out", default=f"{R}/reset-phase")]),
    "paper-vs-realtime": (exp_paper_vs_realtime, [
        opt("--model", default="hub/models/go2-slope"), opt("--out-prefix", default=f"{R}/mppi_flat_3m")]),
    "action-jitter": (exp_action_jitter, [
        opt("--models", nargs="+", default=["outputs/go2/pretrain-s4/model-32k", "hub/models/go2-slope"]),
        opt("--out", default=f"{R}/stage4-ema/action_jitter_slope.json")]),
    "demo": (exp_demo, [
        opt("--model", default="simdist/go2-slope"), opt("--run", default="outputs/go2-demo", help="the demo's --out"),
        opt("--results", default=f"{R}/demo"),
        opt("--collect-speed", default=None, help="e.g. 0.3: log at one speed, as before the loop drew speeds"),
        opt("--extra", default="", help="more `simdist demo` options, as one string")]),
    "adapt-curve": (exp_adapt_curve, [
        opt("--tag", default="ema-speeds", help="runs in outputs/adapt/PROFILE-TAG"),
        opt("--slope-model", default="hub/models/go2-slope"), opt("--foam-model", default="hub/models/go2-foam"),
        opt("--profiles", default="ptfe57,foam", help="of ptfe57 (ptfe-slope-5.7deg) and foam"),
        opt("--schedule", default="0,8,16"),
        opt("--no-ensemble", action="store_true", help="plan without temporal ensembling"),
        opt("--collect-speed", choices=["range", "middle"], default="range",
            help="log episodes over the protocol's speed range (the loop's default) or at its middle speed"),
        opt("--auc", default="foam", help="profiles whose logged episodes get value AUC scores"),
        opt("--results", default=f"{R}/adapt-{{profile}}-{{tag}}", help="results folder pattern"),
        opt("--build-zoo", action="store_true", help="then rebuild the adapted zoo models")]),
    "ablations": (exp_ablations, [
        opt("--demo", default="outputs/go2-demo", help="the demo run whose proxy-real data is reused"),
        opt("--tag", default="-ema", help="results in results/go2/ablationsTAG/"),
        opt("--model", default="hub/models/go2-slope"),
        opt("--plan", default="--temporal-ensemble 0.8", help="more planner options, as one string")]),
    "planner-reach": (exp_planner_reach, []),
    "wide-search": (exp_wide_search, []),
    "friction-sweep": (exp_friction_sweep, []),
    "readme-table": (exp_readme_table, []),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog="docs/go2.md names the "
                                     "experiment behind every figure; results/README.md describes them.")
    sub = parser.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    for name, (build, options) in EXPERIMENTS.items():
        doc = (build.__doc__ or "").replace("%", "%%")
        p = sub.add_parser(name, help=doc.splitlines()[0], description=doc)
        for names, kwargs in options:
            p.add_argument(*names, **kwargs)
        p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    plan = EXPERIMENTS[args.experiment][0](args)
    try:
        return execute(plan, dry_run=args.dry_run)
    except RuntimeError as err:
        print(f"run.py {args.experiment}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
