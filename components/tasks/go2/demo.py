"""``simdist demo --task go2``: the Go2 demo, zero-shot vs adapted MPPI planning on a proxy-real course.

The demo pipeline every task's demo runs (:mod:`simdist.workflows.demo_pipeline`) with the Go2's hook
(:class:`Go2Demo`):
loads a pretrained Go2 world model (``--model``: a Hub id, by default the paper's own ``simdist/go2-official``, or ours,
``simdist/go2-slope``, or a folder)
and runs :class:`~simdist.workflows.adaptation.AdaptationLoop` (with :func:`phased_parts`: phase lines with an ETA) on
a reality profile (``--real``) with the schedule ``[0, --minutes]``: evaluate the zero-shot planner (the real-time MPPI
preset with temporal ensembling, ``REALTIME_DECAY`` of :mod:`simdist.components.planners.presets`) with the
straight-walk protocol, collect ``--minutes`` of on-policy proxy-real data with it, finetune only the dynamics,
evaluate again. Prints a
before/after table (mean, 95 % bootstrap interval and trial count per side, and plainly whether the intervals
overlap) and writes ``results.json``, ``results.md``, ``progress.png`` (each side with its 95 % interval),
``curve.png``, ``timing.json`` (wall-clock seconds, kept out of ``results.json`` so that the same command and seed
rewrite it byte for byte) and (``--video``) ``rollout_zero_shot.gif`` / ``rollout_adapted.gif`` into ``--out``.
Rerunning the same command resumes (``state.json``): finished stages are not collected, trained or evaluated again
(stages recorded with other settings are, on the data already logged).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from simdist.arguments import positive_int
from simdist.components.tasks.go2.task import Go2Task
from simdist.model.freeze import FinetuneConfig
from simdist.workflows.adaptation import AdaptationLoop, AdaptConfig, default_parts
from simdist.workflows.demo_pipeline import Bar, DemoDefaults, DemoHook, Panel
from simdist.workflows.loop_parts import (
    Collector,
    EvaluationConfig,
    Evaluator,
    Finetuner,
    HeldoutCollector,
    LoopParts,
    Run,
)

PREFIX = "[go2-demo]"
#: entries that make a folder a Go2 demo's output (``--out``; rerun to resume)
DEMO_MARKERS = ("state.json", "heldout-data", "real-data", "stages", "results.json", "lightning", "live")
#: video length: the protocol's reset phase plus this much walking (or less: the trial ends on success or a fall)
VIDEO_WALK_S = 10.0
#: guess of the software-rendering cost per frame before the first video measured it
RENDER_FRAME_S = 0.03
ROWS = (("zero_shot", "zero-shot"), ("adapted", "adapted (dynamics only)"))
#: Protocol trials per speed. Measured: the zero-shot zoo model's forward progress on ptfe-slope-5.7deg varies
#: with sd 0.19 m from trial to trial (30 trials, 10 per speed, seed 1); with n trials per side the two 95 %
#: intervals stop overlapping at a difference of about 2 x 1.96 x 0.19 / sqrt(n) m: 0.24 m at 3 x 3 trials (the
#: old default), 0.19 m at 3 x 5, 0.14 m at 3 x 10 (0.16 m if the adapted trials spread by 0.3 m). 10 per speed
#: keeps the whole demo within about 6 min on 2 cores (docs/reproducibility.md).
DEMO_TRIALS = 10
VIDEO_LABELS = {"zero_shot": "zero-shot", "adapted": "adapted"}


# ---------------------------------------------------------------------------------------------- the hook
class Go2Demo(DemoHook):
    """The Go2's hook into the demo pipeline (:mod:`simdist.workflows.demo_pipeline`): the paper's own model
    (``simdist/go2-official``, the zoo's best Go2 model; ``--model simdist/go2-slope`` runs ours) on the
    ``ptfe-slope-5.7deg`` course, 4 minutes of real data, the real-time MPPI preset, phase lines with an ETA, the
    straight-walk protocol's results and the rollout videos."""

    DEFAULTS = DemoDefaults(real="ptfe-slope-5.7deg", model="simdist/go2-official", out="outputs/go2-demo",
                            minutes=4.0, video=True, progress=False,
                            loop=AdaptConfig(evaluation=EvaluationConfig(trials=DEMO_TRIALS),
                                             num_envs=16))  # the loop's budgets
    QUICK = DemoDefaults(real="ptfe-slope-5.7deg", model="simdist/go2-official", out="outputs/go2-demo", minutes=0.5,
                         video=False, progress=False,
                         loop=AdaptConfig(evaluation=EvaluationConfig(trials=2), num_envs=8,
                                          finetune=FinetuneConfig(epochs=1, windows_per_epoch=1_000),
                                          heldout_episodes=2))
    planner_preset = "realtime"  # the real-time preset (simdist.components.planners.presets)
    can_render = True
    markers = DEMO_MARKERS

    def __init__(self, task_cls: type | None = None) -> None:
        super().__init__(task_cls or Go2Task)
        self.phases = Progress()
        self.timing: dict[str, Any] = {}

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        super().add_arguments(parser)  # --collect-speed
        parser.add_argument("--max-steps", type=positive_int, default=None,
                            help="cap on protocol trial, collection episode and video steps (smoke tests)")
        parser.epilog = "`simdist demo --task toy-reach [--quick]` runs the toy-task demo instead."

    def check(self, args: argparse.Namespace) -> None:
        if args.real in ("toy", "toy-real"):
            raise ValueError("the toy task has its own demo: simdist demo --task toy-reach")

    def log(self, msg: str) -> None:
        self.phases.log(msg)

    def load_base(self, model: str) -> Any:
        from simdist.provenance import provenance
        from simdist.workflows.adaptation import weights_fingerprint, world_model_of

        self.phases.log(f"loading {model}")
        base = load_model(model)  # fail early, with a hint
        # a Hub id may resolve to the HF cache or to the bundled copy: the fingerprint says which weights ran
        self.made_with = provenance(base)  # the code, versions and weights this run starts with
        fingerprint = weights_fingerprint(world_model_of(base) or base)
        self.phases.log(f"loaded {getattr(base, 'source', None) or model}: weights {fingerprint}")
        return base

    def make_task(self, args: argparse.Namespace) -> Any:
        episode_s = 20.0 if args.max_steps is None else min(20.0, args.max_steps * 0.02)
        return DemoTask(profile=args.real, max_steps=args.max_steps, episode_length_s=episode_s,
                        collect_speed=args.collect_speed, phases=self.phases)

    def make_loop(self, model: str, task: Any, out: Path, cfg: AdaptConfig, **kwargs: Any) -> AdaptationLoop:
        return AdaptationLoop(model, task, out, cfg, parts=phased_parts(cfg, self.phases), **kwargs)

    def before_run(self, args: argparse.Namespace, loop: AdaptationLoop) -> None:
        """Time a planner tick and a finetuning step, then log the phases ahead and their ETA."""
        task, cfg, progress = loop.task, loop.cfg, self.phases
        self.speed = task.speeds[len(task.speeds) // 2]
        self.video_steps = _video_steps(task, self.speed, args.max_steps) if args.video else None
        done = loop.stages_done()
        self.rates = rates = measure_rates(loop, {cfg.num_envs, args.trials, 1})
        progress.estimates = estimate_phases(task, cfg, rates, stages_done=done, video_steps=self.video_steps,
                                             heldout_done=(loop.out / "heldout-data" / "dataset.json").exists())
        tick = rates["tick_s"]
        resuming = f" (resuming: {done} of 2 stages done)" if done else ""
        progress.log(f"{task.name}, speeds {list(task.speeds)} m/s; MPPI {1e3 * tick[1]:.0f} ms/tick (1 env), "
                     f"{1e3 * tick[cfg.num_envs]:.0f} ms/tick ({cfg.num_envs} envs); {len(progress.estimates)} "
                     f"phases to run, ETA ~{_fmt_s(progress.remaining())}{resuming}")

    def results(self, args: argparse.Namespace, loop: AdaptationLoop, curve: dict[str, Any]) -> dict[str, Any]:
        with self.phases.phase("value-auc", "value AUC of the zero-shot model on every logged episode"):
            zero_shot_auc = loop.auc(loop.base)
        results = collect_results(args, loop, curve, zero_shot_auc, self.made_with)
        self.timing = {"phases": self.phases.seconds, "tick_s": {str(k): v for k, v in self.rates["tick_s"].items()},
                       "train_step_s": self.rates["train_step_s"]}
        return results

    def videos(self, args: argparse.Namespace, loop: AdaptationLoop, out: Path) -> dict[str, str]:
        return render_videos(loop, loop.task, self.speed, self.video_steps or 0, out, args.seed, self.phases)

    def table(self, results: dict[str, Any]) -> str:
        return results_table(results)

    def markdown(self, results: dict[str, Any]) -> str:
        return results_markdown(results)

    def panels(self, results: dict[str, Any]) -> list[Panel]:
        """Forward progress of the zero-shot and the adapted planner, each bar with its 95 % interval."""
        rows = results["rows"]
        return [Panel(f"forward progress (m of {results['course_length']:.2f})",
                      tuple(Bar(title, rows[key]["forward_progress"], rows[key]["ci95"][0], rows[key]["ci95"][1],
                                side=key, n=rows[key]["trials"])
                            for key, title in (("zero_shot", "zero-shot"), ("adapted", "adapted"))))]

    def title(self, results: dict[str, Any]) -> str:
        return f"simdist go2 on {results['real']}: zero-shot vs dynamics-only adaptation"


# ---------------------------------------------------------------------------------------------- progress
@dataclass
class Progress:
    """``[go2-demo]`` log lines with the elapsed time, per-phase estimates and the ETA of what is left."""

    estimates: dict[str, float] = field(default_factory=dict)  # phase -> estimated seconds, in run order
    log_fn: Callable[[str], None] = print
    started: float = field(default_factory=time.perf_counter)
    done: set[str] = field(default_factory=set)
    seconds: dict[str, float] = field(default_factory=dict)  # phase -> measured seconds (timing.json)

    def log(self, msg: str) -> None:
        self.log_fn(f"{PREFIX} [{_fmt_s(time.perf_counter() - self.started)}] {msg}")

    def remaining(self) -> float:
        """Estimated seconds of the phases not finished yet."""
        return sum(v for k, v in self.estimates.items() if k not in self.done)

    def skip(self, key: str) -> None:
        self.done.add(key)

    @contextmanager
    def phase(self, key: str, title: str) -> Iterator[None]:
        """Log the start (its estimate, the ETA of all unfinished phases) and the end (duration) of ``key``."""
        keys = list(self.estimates)
        where = f"{keys.index(key) + 1}/{len(keys)} " if key in keys else ""
        hint = f" (~{_fmt_s(self.estimates[key])}; ETA ~{_fmt_s(self.remaining())})" if key in keys else ""
        self.log(f"{where}{title}{hint}")
        t0 = time.perf_counter()
        yield
        self.done.add(key)
        self.seconds[key] = time.perf_counter() - t0
        self.log(f"{where}done in {_fmt_s(self.seconds[key])}")


def _fmt_s(seconds: float) -> str:
    s = max(0.0, float(seconds))
    return f"{s:.0f}s" if s < 90 else f"{s / 60:.1f}min"


# ---------------------------------------------------------------------------------------------- the loop, logged
@dataclass(frozen=True)
class PhasedHeldout:
    """The held-out collection inside a ``[go2-demo]`` phase line."""

    inner: HeldoutCollector
    phases: Progress
    episodes: int

    def collect_heldout(self, run: Run) -> Any:
        with self.phases.phase("heldout", f"collecting the held-out proxy-real set ({self.episodes} zero-shot "
                                          "episodes)"):
            return self.inner.collect_heldout(run)


@dataclass(frozen=True)
class PhasedCollector:
    """The collection inside a ``[go2-demo]`` phase line, whose title names the acting planner (``preset``; None:
    the model's own)."""

    inner: Collector
    phases: Progress
    num_envs: int
    preset: str | None = None

    def collect(self, run: Run, agent: Any, amount: float, stage: int) -> Any:
        who = f"the {self.preset} planner" if self.preset else "the model's own planner"
        title = f"collecting {amount:g} min of proxy-real data with {who}, {self.num_envs} envs"
        with self.phases.phase("collect", title):
            return self.inner.collect(run, agent, amount, stage)


@dataclass(frozen=True)
class PhasedFinetuner:
    """The finetuning inside a ``[go2-demo]`` phase line."""

    inner: Finetuner
    phases: Progress
    title: str

    def finetune(self, run: Run, start: Any, stage: int) -> Any:
        with self.phases.phase("finetune", self.title):
            return self.inner.finetune(run, start, stage)


@dataclass(frozen=True)
class StageEvaluator:
    """The evaluation, telling the :class:`DemoTask` which stage it evaluates (its phase line's title)."""

    inner: Evaluator

    def evaluate(self, run: Run, agent: Any, stage: int, path: str) -> Any:
        run.task.stage = stage  # type: ignore[attr-defined]
        return self.inner.evaluate(run, agent, stage, path)


def phased_parts(cfg: AdaptConfig, phases: Progress) -> LoopParts:
    """The loop's default parts with a ``[go2-demo]`` phase line around the held-out collection, each
    collection and finetuning."""
    parts = default_parts(cfg)
    ft = cfg.finetune
    title = f"finetuning dynamics: {ft.epochs} epochs x {ft.windows_per_epoch:,} windows, batch {ft.batch_size}"
    return replace(parts, heldout=PhasedHeldout(parts.heldout, phases, cfg.heldout_episodes),
                   collector=PhasedCollector(parts.collector, phases, cfg.num_envs, cfg.planner_preset),
                   finetuner=PhasedFinetuner(parts.finetuner, phases, title), evaluator=StageEvaluator(parts.evaluator))


@dataclass
class DemoTask(Go2Task):
    """:class:`Go2Task` with a ``[go2-demo]`` phase line around each protocol evaluation."""

    phases: Progress = field(default_factory=lambda: Progress(), repr=False, compare=False)
    stage: int = 0  # the loop's current stage (set by StageEvaluator)

    def evaluate(self, agent: Any, trials: int, seed: int, num_envs: int = 8, log: Any = None) -> Any:
        key, title = ("eval-zero-shot", "zero-shot") if self.stage == 0 else ("eval-adapted", "adapted")
        speeds = ", ".join(f"{v:g}" for v in self.speeds or ())
        with self.phases.phase(key, f"protocol with the {title} planner on {self.profile_name}: {trials} trials "
                                    f"at each of {speeds} m/s"):
            return super().evaluate(agent, trials, seed, num_envs=num_envs, log=log)


# ---------------------------------------------------------------------------------------------- estimates
def measure_rates(loop: Any, batches: set[int]) -> dict[str, Any]:
    """Seconds per planner tick at each batch size and per finetuning step (random inputs, a few repeats)."""
    import copy

    import torch

    from simdist.benchmarking.measure import random_batch, random_history, time_calls
    from simdist.model.losses import WorldModelLoss
    from simdist.registry import create
    from simdist.workflows.adaptation import world_model_of

    model, tick = world_model_of(loop.base), {}
    for b in sorted(batches):
        planner, history = loop.planner(loop.base, 0), random_history(model, b)
        tick[b] = time_calls(lambda p=planner, h=history: p.plan(h), 3, 1, model.device)["wall"]["median"]
    wm = copy.deepcopy(model).train()
    create("freeze_policy", "dynamics_only").apply(wm)
    opt = torch.optim.Adam([p for p in wm.parameters() if p.requires_grad], lr=1e-6)
    loss_fn, batch = WorldModelLoss.dynamics_only(), random_batch(wm, loop.cfg.finetune.batch_size)

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss_fn(wm, batch)["loss"].backward()
        opt.step()

    return {"tick_s": tick, "train_step_s": time_calls(step, 2, 1, model.device)["wall"]["median"]}


def estimate_phases(task: Any, cfg: Any, rates: dict[str, Any], *, stages_done: int, heldout_done: bool,
                    video_steps: int | None) -> dict[str, float]:
    """Seconds per phase still to run, in run order (upper-bound style: episodes run to their time limit)."""
    from simdist.components.tasks.go2.protocol import make_course, trial_steps

    tick = rates["tick_s"]
    course = make_course(profile=task.profile)
    episode = int(round(task.episode_length_s / task.dt))
    steps = sum(trial_steps(course, v, max_steps=task.max_steps) for v in task.speeds)
    evaluation = tick[cfg.evaluation.trials] * steps
    target = math.ceil(cfg.schedule[-1] * 60.0 / task.dt)
    windows = target + cfg.heldout_episodes * episode
    est: dict[str, float] = {}
    if not heldout_done:
        est["heldout"] = tick[cfg.num_envs] * episode
    if stages_done < 1:
        est["eval-zero-shot"] = evaluation
    if stages_done < 2:
        est["collect"] = tick[cfg.num_envs] * math.ceil(target / (cfg.num_envs * episode)) * episode
        ft = cfg.finetune
        est["finetune"] = rates["train_step_s"] * ft.epochs * math.ceil(ft.windows_per_epoch / ft.batch_size)
        est["eval-adapted"] = evaluation
    est["value-auc"] = rates["train_step_s"] / 3 * windows / cfg.finetune.batch_size  # forward passes only
    if video_steps:
        frames = video_steps // 2 + 1
        est["video-zero-shot"] = est["video-adapted"] = tick[1] * video_steps + RENDER_FRAME_S * frames
    return est


# ---------------------------------------------------------------------------------------------- the demo
def load_model(name: str) -> Any:
    """The agent, or a SystemExit that says where to find one."""
    from simdist.agents import load_agent

    try:
        return load_agent(name)
    except (FileNotFoundError, ValueError) as err:
        raise SystemExit(
            f"simdist demo: cannot load the world model {name!r}: {err}\n"
            "`simdist zoo list` shows the zoo's Go2 models (published on the Hub or bundled in hub/models/); "
            "pass one with --model ID, or a model folder (e.g. from `simdist export`) with --model PATH."
        ) from err


def _video_steps(task: Any, speed: float, max_steps: int | None) -> int:
    from simdist.components.tasks.go2.protocol import RESET_STEPS, make_course, trial_steps

    cap = RESET_STEPS + int(round(VIDEO_WALK_S / task.dt))
    return trial_steps(make_course(profile=task.profile), speed, max_steps=min(cap, max_steps or cap))


def _row(stage: dict[str, Any], value_auc: float | None, consistency: float) -> dict[str, Any]:
    summary, protocol = stage["eval"]["summary"], stage["eval"]["details"]["protocol"]
    return {"forward_progress": summary["mean"], "ci95": summary["ci95"], "trials": summary["trials"],
            "success_rate": summary["success_rate"], "fall_rate": protocol["termination_rate"],
            "heldout_consistency": consistency, "value_auc": value_auc,
            "minutes": stage["minutes"], "episodes": stage["episodes"], "model": stage["model"]}


def collect_results(args: argparse.Namespace, loop: Any, curve: dict[str, Any], zero_shot_auc: float | None,
                    made_with: dict[str, Any] | None = None) -> dict[str, Any]:
    """The before/after rows (from the loop's stages), the settings and the provenance (``made_with``, else now)."""
    from simdist.provenance import provenance

    zero, adapted = loop.state["stages"][:2]
    protocol = zero["eval"]["details"]["protocol"]
    overlap, comparison = _comparison(zero, adapted)
    return {
        "model": args.model, "real": loop.task.profile_name, "task": loop.task.describe(),
        "course_length": protocol["course_length"], "speeds": list(loop.task.speeds),
        "rows": {"zero_shot": _row(zero, zero_shot_auc, zero["consistency"]["after"]),
                 "adapted": _row(adapted, adapted["value_auc"], adapted["consistency"]["after"])},
        "protocol": {"zero_shot": protocol, "adapted": adapted["eval"]["details"]["protocol"]},
        "comparison": comparison, "intervals_overlap": overlap,
        "settings": {k: v for k, v in vars(args).items() if k not in ("progress",)},
        "provenance": made_with or provenance(loop.base),
        "curve": {k: curve[k] for k in ("minutes", "value", "consistency_after", "value_auc")},
    }


def render_videos(loop: Any, task: Any, speed: float, steps: int, out: Path, seed: int, progress: Progress
                  ) -> dict[str, str]:
    """``rollout_zero_shot.gif`` and ``rollout_adapted.gif`` (kept if they exist: delete them to redo)."""
    from simdist.agents import load_agent
    from simdist.components.tasks.go2.render import render_rollout

    models = {"zero_shot": lambda: loop.base, "adapted": lambda: load_agent(loop.state["stages"][1]["model"])}
    videos = {}
    for key, title in ROWS:
        path = out / f"rollout_{key}.gif"
        videos[key] = path.name
        if path.exists():
            progress.skip(f"video-{key.replace('_', '-')}")
            continue
        with progress.phase(f"video-{key.replace('_', '-')}", f"rendering {path.name}: {title} planner at "
                                                              f"{speed:g} m/s, up to {steps} steps"):
            render_rollout(loop.planner(models[key](), seed), task.profile, speed, steps, path, seed=seed,
                           label=f"{VIDEO_LABELS[key]}: {task.profile}, {speed:g} m/s")
    return videos


# ---------------------------------------------------------------------------------------------- outputs
def _num(x: float | None, fmt: str) -> str:
    return "n/a" if x is None or not math.isfinite(float(x)) else format(float(x), fmt)


def _comparison(zero: dict[str, Any], adapted: dict[str, Any]) -> tuple[bool, str]:
    """Whether the two 95 % intervals overlap, and the sentence that says so plainly."""
    from simdist.evaluation import EvaluationResult, compare

    before, after = (EvaluationResult.from_dict(s["eval"]).estimate() for s in (zero, adapted))
    detail = compare(before, after, "forward progress (m), adapted vs zero-shot", ".3f")
    if before.overlaps(after):
        return True, (f"**No difference**: the 95 % intervals of the zero-shot and the adapted planner overlap, so "
                      f"with {before.n} and {after.n} trials this run does not show that adaptation changed the "
                      f"forward progress.\n\n{detail}")
    verb = "walks further" if after.mean > before.mean else "walks less far"
    return False, (f"**The adapted planner {verb}** than the zero-shot one: the 95 % intervals do not overlap "
                   f"({after.n} and {before.n} trials).\n\n{detail}")


def results_table(r: dict[str, Any]) -> str:
    """The before/after table (Markdown, readable as text) and whether the intervals overlap."""
    length = r["course_length"]
    lines = [f"| model | real data (min) | forward progress (m of {length:.2f}), mean [95 % CI] | trials | success "
             "| fell | held-out consistency loss | value AUC |", "|---|---|---|---|---|---|---|---|"]
    for key, title in ROWS:
        row = r["rows"][key]
        low, high = row["ci95"]
        progress = (f"{_num(row['forward_progress'], '.2f')} [{_num(low, '.2f')}, {_num(high, '.2f')}] "
                    f"({_num(100 * row['forward_progress'] / length, '.0f')}%)")
        lines.append(f"| {title} | {row['minutes']:.2f} | {progress} | {row['trials']} | "
                     f"{_num(100 * row['success_rate'], '.0f')}% | {_num(100 * row['fall_rate'], '.0f')}% | "
                     f"{_num(row['heldout_consistency'], '.4f')} | {_num(row['value_auc'], '.2f')} |")
    return "\n".join(lines) + "\n\n" + r.get("comparison", "") + "\n"


def results_markdown(r: dict[str, Any]) -> str:
    s = r["settings"]
    p = s.get("planner_settings", s)  # what the planner ran with (results written before: the options themselves)
    parts = [f"# SimDist Go2 demo: {r['model']} on {r['real']}", "",
             f"Straight-walk protocol at {', '.join(f'{v:g}' for v in r['speeds'])} m/s, {s['trials']} trials each; "
             f"MPPI {p.get('num_samples', p.get('samples'))} samples x {p['iterations']} iterations"
             + (f", temporal ensembling {p['temporal_ensemble']:g}" if p.get("temporal_ensemble") else "")
             + "; adapted on "
             f"{r['rows']['adapted']['minutes']:.1f} min of proxy-real data (dynamics only).", "",
             results_table(r), "![adaptation curve](curve.png)", ""]
    for key, title in ROWS:
        if key in r.get("videos", {}):
            parts += [f"{title}:", "", f"![{title}]({r['videos'][key]})", ""]
    return "\n".join(parts)


def write_results(r: dict[str, Any], out: Path, timing: dict[str, Any] | None = None) -> None:
    """``results.json`` and ``results.md`` (numbers and settings only: the same command and seed on the same
    machine writes them byte for byte again) and ``timing.json`` (wall-clock seconds, which vary)."""
    from simdist.fsutil import atomic_write_json, atomic_write_text

    atomic_write_json(out / "results.json", r, default=str)
    atomic_write_text(out / "results.md", results_markdown(r))
    if timing is not None:
        atomic_write_json(out / "timing.json", timing)
