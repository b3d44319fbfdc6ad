"""``simdist demo [--task NAME] ...``: one pipeline for every task's end-to-end demo.

(optionally) pretrain a world model → :class:`~simdist.workflows.adaptation.AdaptationLoop` on the schedule
``[0, budget]``:
the zero-shot stage, real data logged with its planner, the dynamics finetuned, the adapted stage → ``results.json``
and ``results.md`` (each evaluation's mean, 95 % interval and trial count, and whether the intervals overlap),
``progress.png`` (zero-shot vs adapted bars, each with its 95 % interval), the loop's ``curve.json``/``curve.png``,
``timing.json`` (wall-clock seconds, kept out of ``results.json``) and, with ``--video``, the task's videos.

Every task takes the same options (:func:`demo_parser`; ``simdist demo`` parses them, :mod:`simdist.tools.demo`).
What differs between tasks is a :class:`DemoHook`, which a task names with ``Task.demo_hook``: its defaults
(profile, model, budgets, ``--quick``), its pretraining (for a task whose demo starts from nothing), its loop (an
:class:`~simdist.workflows.adaptation.AdaptationLoop` with its own parts, :mod:`simdist.workflows.loop_parts`, to
collect, finetune or evaluate its own way), its
results, table and plot bars, its videos, and the dataclass of its own settings, set with ``--option KEY=VALUE``
(the experiments' levers). A task without a hook runs the generic one: its ``--model`` adapted by the plain loop.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import time
import warnings
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from simdist.arguments import (
    FloatRange,
    add_planner_arguments,
    int_range,
    positive_float,
    positive_int,
    seed_int,
    tool_parser,
)
from simdist.capabilities import EnvFactory, EvaluationProtocol, require, require_class
from simdist.model.freeze import FINETUNE
from simdist.resources import (
    MAX_ENVS,
    MAX_EPISODES,
    MAX_SCHEDULE_EPISODES,
    MAX_SCHEDULE_MINUTES,
    MAX_TRIALS,
    check_memory,
)
from simdist.workflows.adaptation import AdaptConfig

#: what the demo's finetuning trains unless ``--freeze`` says otherwise (SimDist's: the dynamics only)
FINETUNE_FREEZE = FINETUNE.freeze

if TYPE_CHECKING:
    from simdist.tasks import Task
    from simdist.workflows.adaptation import AdaptationLoop

#: the loop's own entries of a demo folder (``--out``): a hook that does not resume removes them first
LOOP_ENTRIES = ("state.json", "heldout-data", "real-data", "stages", "curve.json", "curve.png", "lightning", "live")
#: the demo's own files
DEMO_FILES = ("results.json", "results.md", "progress.png", "timing.json")
#: the bar colours of the zero-shot and the adapted side (and a third for a reference, e.g. the simulator)
COLORS = {"reference": "#777", "zero_shot": "#c44", "adapted": "#48c"}


@dataclass(frozen=True)
class DemoDefaults:
    """A task's defaults for the common options (None where the option has no default: ``real`` None means it must
    be given; ``model`` None means the demo pretrains its own, or must be given; exactly one of ``minutes`` and
    ``real_episodes`` is the real-data budget). The loop's budgets (the options of :data:`LOOP_OPTIONS`: trials,
    envs, planner budget, finetuning, held-out episodes) are ``loop``'s, an :class:`AdaptConfig`: the adaptation
    loop's own defaults unless the task sets them; its other settings (e.g. ``finetune.warmup_steps``) reach the
    loop too."""

    real: str | None = None
    model: str | None = None
    out: str | None = None  # None: outputs/TASK-demo
    minutes: float | None = None
    real_episodes: int | None = None
    video: bool = False
    progress: bool = False
    loop: AdaptConfig = field(default_factory=AdaptConfig)


#: the demo options that set the loop's budget -> their :class:`AdaptConfig` setting (a part's as ``PART.KEY``)
LOOP_OPTIONS = {"trials": "evaluation.trials", "envs": "num_envs", "epochs": "finetune.epochs",
                "windows_per_epoch": "finetune.windows_per_epoch", "batch_size": "finetune.batch_size",
                "lr": "finetune.lr", "heldout_episodes": "heldout_episodes"}


def loop_setting(cfg: AdaptConfig, key: str) -> Any:
    """``cfg``'s setting ``key`` (a loop setting, or a part's as ``finetune.epochs``)."""
    value: Any = cfg
    for name in key.split("."):
        value = getattr(value, name)
    return value


def with_loop_settings(cfg: AdaptConfig, values: dict[str, Any], **changes: Any) -> AdaptConfig:
    """``cfg`` with the settings ``values`` (keys as :func:`loop_setting`'s) and the loop fields ``changes``."""
    own = {key: value for key, value in values.items() if "." not in key}
    parts = {part: replace(getattr(cfg, part), **{key.split(".", 1)[1]: value for key, value in values.items()
                                                   if key.startswith(part + ".")})
             for part in ("finetune", "evaluation", "collection")}
    return replace(cfg, **changes, **own, **parts)


@dataclass(frozen=True)
class Bar:
    """One bar of ``progress.png``: a mean and its 95 % interval."""

    label: str
    mean: float
    low: float
    high: float
    side: str = "adapted"  # a key of COLORS
    n: int | None = None  # the trial count under the label


@dataclass(frozen=True)
class Panel:
    """One axis of ``progress.png``."""

    ylabel: str
    bars: tuple[Bar, ...]
    note: str = ""


class DemoHook:
    """What a task's demo does its own way; every method has the generic behaviour (the task's ``--model``
    adapted by the plain :class:`~simdist.workflows.adaptation.AdaptationLoop`). One instance per run."""

    #: the defaults of the common options (and, :meth:`defaults`, those of ``--quick``)
    DEFAULTS: ClassVar[DemoDefaults] = DemoDefaults(real=None, real_episodes=16)
    QUICK: ClassVar[DemoDefaults | None] = None
    #: the planner preset the demo acts with (``--planner-preset``'s default; None: the task's own)
    planner_preset: ClassVar[str | None] = None
    #: the dataclass of ``--option KEY=VALUE`` settings (None: the demo has none)
    options_class: ClassVar[type | None] = None
    #: whether a rerun into the same ``--out`` resumes (False: it needs ``--overwrite``, then starts afresh)
    resume: ClassVar[bool] = True
    #: whether the demo can pretrain its own model (``--pretrain-only``, or no ``--model``)
    can_pretrain: ClassVar[bool] = False
    #: whether the demo renders videos (``--video``)
    can_render: ClassVar[bool] = False
    #: the entries that make a folder this demo's output (``--out``)
    markers: ClassVar[tuple[str, ...]] = LOOP_ENTRIES + DEMO_FILES

    def __init__(self, task_cls: type[Task]) -> None:
        self.task_cls = task_cls
        self.started = time.perf_counter()

    # -- options ----------------------------------------------------------------------------------
    @property
    def task_name(self) -> str:
        from simdist.tasks import get_task_name

        return get_task_name(self.task_cls)

    def defaults(self, quick: bool) -> DemoDefaults:
        return self.QUICK if quick and self.QUICK is not None else self.DEFAULTS

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The task's own options (default: ``Task.add_arguments(parser, "demo")``)."""
        self.task_cls.add_arguments(parser, "demo")

    def check(self, args: argparse.Namespace) -> None:
        """Refuse bad input before any work (ValueError: one line naming the option)."""

    def log(self, msg: str) -> None:
        print(f"[{time.perf_counter() - self.started:6.1f}s] {msg}", flush=True)

    # -- stages -----------------------------------------------------------------------------------
    def pretrain(self, args: argparse.Namespace, out: Path) -> str:
        """Pretrain the demo's model in ``out``; returns its folder."""
        raise ValueError(f"--model: the {self.task_name} demo starts from a pretrained model; pass one")

    def make_task(self, args: argparse.Namespace) -> EvaluationProtocol:
        return require(self.task_cls.from_args(args, "demo", profile=args.real), EvaluationProtocol, "simdist demo")

    def adapt_config(self, args: argparse.Namespace) -> AdaptConfig:
        """The loop's schedule ``[0, budget]`` and budgets from the common options (the other fields: the
        defaults' ``loop``)."""
        unit, amount = ("minutes", float(args.minutes)) if args.minutes is not None else \
            ("episodes", float(args.real_episodes))
        values = {name: getattr(args, option) for option, name in LOOP_OPTIONS.items()}
        return with_loop_settings(self.defaults(getattr(args, "quick", False)).loop,
                                  {**values, "finetune.freeze": args.freeze}, schedule=[0.0, amount],
                                  schedule_unit=unit, planner=args.planner, planner_preset=args.planner_preset,
                                  planner_overrides=dict(args.planner_overrides), seed=args.seed)

    def load_base(self, model: str) -> Any:
        from simdist.agents import load_agent

        return load_agent(model)

    def make_loop(self, model: str, task: Task, out: Path, cfg: AdaptConfig, **kwargs: Any) -> AdaptationLoop:
        """The loop (``kwargs``: ``progress``, ``log``, ``base``); a hook may give it other parts that collect,
        finetune or evaluate its own way (:class:`~simdist.workflows.loop_parts.LoopParts`)."""
        from simdist.workflows.adaptation import AdaptationLoop

        return AdaptationLoop(model, task, out, cfg, **kwargs)

    def before_run(self, args: argparse.Namespace, loop: AdaptationLoop) -> None:
        """Called once the loop is built, before it runs (e.g. to time the stages ahead)."""

    # -- outputs ----------------------------------------------------------------------------------
    def results(self, args: argparse.Namespace, loop: AdaptationLoop, curve: dict[str, Any]) -> dict[str, Any]:
        """The numbers of ``results.json``: per side the metric's mean, 95 % interval and trial count."""
        from simdist.evaluation import EvaluationResult, compare

        zero, adapted = loop.state["stages"][:2]
        estimates = {key: EvaluationResult.from_dict(s["eval"]).estimate() for key, s in
                     (("zero_shot", zero), ("adapted", adapted))}
        rows = {key: {"value": e.mean, "ci95": [e.low, e.high], "trials": e.n,
                      "heldout_consistency": s["consistency"]["after"], "value_auc": s["value_auc"],
                      "minutes": s["minutes"], "episodes": s["episodes"], "model": s["model"]}
                for (key, e), s in zip(estimates.items(), (zero, adapted))}
        return {"task": loop.task.describe(), "model": loop.model_id, "real": loop.task.profile_name,
                "metric": loop.task.metric, "rows": rows,
                "comparison": compare(estimates["zero_shot"], estimates["adapted"],
                                      f"{loop.task.metric}, adapted vs zero-shot", ".3f"),
                "settings": settings_of(args)}

    def panels(self, results: dict[str, Any]) -> list[Panel]:
        rows = results["rows"]
        return [Panel(results["metric"], tuple(Bar(label, rows[key]["value"], rows[key]["ci95"][0],
                                                   rows[key]["ci95"][1], side=key, n=rows[key]["trials"])
                                               for key, label in (("zero_shot", "zero-shot"),
                                                                  ("adapted", "adapted"))))]

    def table(self, results: dict[str, Any]) -> str:
        lines = [f"| model | real data (min) | {results['metric']}, mean [95 % CI] | trials | held-out consistency |",
                 "|---|---|---|---|---|"]
        for key, title in (("zero_shot", "zero-shot"), ("adapted", "adapted (dynamics only)")):
            row = results["rows"][key]
            low, high = row["ci95"]
            lines.append(f"| {title} | {row['minutes']:.2f} | {_num(row['value'], '.3f')} [{_num(low, '.3f')}, "
                         f"{_num(high, '.3f')}] | {row['trials']} | "
                         f"{_num(row['heldout_consistency'], '.4f')} |")
        return "\n".join(lines) + "\n\n" + results["comparison"] + "\n"

    def markdown(self, results: dict[str, Any]) -> str:
        return f"# SimDist demo: {results['model']} on {results['real']}\n\n{self.table(results)}\n" \
               "![zero-shot vs adapted](progress.png)\n"

    def results_text(self, results: dict[str, Any]) -> str:
        """``results.json``'s text (numbers and settings only: the same command and seed rewrite it byte for
        byte)."""
        return json.dumps(results, indent=1, default=str) + "\n"

    def videos(self, args: argparse.Namespace, loop: AdaptationLoop, out: Path) -> dict[str, str]:
        return {}

    def title(self, results: dict[str, Any]) -> str:
        return f"simdist {self.task_name}: zero-shot vs dynamics-only adaptation"


def hook_for(task_cls: type[Task]) -> DemoHook:
    """``task_cls``'s hook (``Task.demo_hook``, ``"module:Class"``; None: the generic :class:`DemoHook`)."""
    import importlib

    if task_cls.demo_hook is None:
        return DemoHook(task_cls)
    module, _, name = task_cls.demo_hook.partition(":")
    hook = getattr(importlib.import_module(module), name)(task_cls)
    assert isinstance(hook, DemoHook), task_cls.demo_hook
    return hook


def _num(x: Any, fmt: str) -> str:
    return "n/a" if x is None or not math.isfinite(float(x)) else format(float(x), fmt)


def settings_of(args: argparse.Namespace) -> dict[str, Any]:
    """The options a run's numbers depend on (not ``progress``)."""
    return {k: v for k, v in vars(args).items() if k not in ("progress", "overwrite")}


# ---------------------------------------------------------------------------------------------- options
class _OptionAction(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        text = str(values)
        if "=" not in text:
            parser.error(f"--option {text!r}: expected KEY=VALUE")
        key, value = text.split("=", 1)
        items = dict(getattr(namespace, self.dest) or {})
        items[key.strip().replace("-", "_")] = _value(value)
        setattr(namespace, self.dest, items)


def _value(text: str) -> Any:
    """``--option`` values: JSON (numbers, true/false, lists such as [256,256]), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def demo_parser(task_cls: type[Task], hook: DemoHook) -> argparse.ArgumentParser:
    """The options every task's demo takes (defaults None: filled from the hook's :class:`DemoDefaults`)."""
    d, loop = hook.DEFAULTS, hook.DEFAULTS.loop
    parser = tool_parser("demo", f"{hook.task_name} demo: zero-shot vs adapted planning on a proxy-real profile")
    parser.add_argument("--model", "--pretrained", dest="model", default=None,
                        help="pretrained world model: Hub id or folder (default: "
                             f"{d.model or 'pretrain one: generate simulation data, then pretrain'})")
    parser.add_argument("--real", default=None, help="reality profile: name or YAML path"
                        + (f" (default: {d.real})" if d.real else ""))
    parser.add_argument("--out", default=d.out or f"outputs/{hook.task_name}-demo",
                        help="output folder" + (" (rerun to resume)" if hook.resume else
                                                " (a folder holding an earlier run needs --overwrite)"))
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an earlier run's files in --out (only the demo's own; the rest stays)"
                             + (" instead of resuming it" if hook.resume else ""))
    parser.add_argument("--seed", type=seed_int, default=0, help="base seed (0 to 2**31 - 1)")
    parser.add_argument("--quick", action="store_true", help="a tiny budget (seconds to minutes), as the tests run")
    parser.add_argument("--pretrain-only", action="store_true",
                        help="stop after pretraining (OUT/...), for several --model runs to reuse")
    parser.add_argument("--trials", type=int_range(1, MAX_TRIALS), default=None,
                        help=f"evaluation trials per side (1 to {MAX_TRIALS}; default {loop.evaluation.trials})")
    parser.add_argument("--envs", type=int_range(1, MAX_ENVS), default=None,
                        help=f"parallel envs (1 to {MAX_ENVS}; default {loop.num_envs})")
    add_planner_arguments(parser, preset=hook.planner_preset)
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--minutes", type=FloatRange(0, MAX_SCHEDULE_MINUTES), default=None,
                        help=f"real data to log, in minutes (at most {MAX_SCHEDULE_MINUTES})"
                        + (f" (default {d.minutes:g})" if d.minutes is not None else ""))
    budget.add_argument("--real-episodes", type=int_range(1, MAX_SCHEDULE_EPISODES), default=None,
                        help=f"real data to log, in episodes (at most {MAX_SCHEDULE_EPISODES})"
                        + (f" (default {d.real_episodes})" if d.real_episodes is not None else ""))
    parser.add_argument("--epochs", "--finetune-epochs", dest="epochs", type=positive_int, default=None,
                        help=f"finetuning epochs (default {loop.finetune.epochs})")
    parser.add_argument("--windows-per-epoch", type=positive_int, default=None,
                        help=f"finetuning windows per epoch (default {loop.finetune.windows_per_epoch:,})")
    parser.add_argument("--batch-size", type=positive_int, default=None, help=f"default {loop.finetune.batch_size}")
    parser.add_argument("--lr", type=positive_float, default=None,
                        help=f"finetuning learning rate ({loop.finetune.lr:g})")
    parser.add_argument("--freeze", default=None, metavar="POLICY",
                        help=f"what finetuning trains (default {FINETUNE_FREEZE}, the paper's); an ablation: "
                             "'dynamics,value' also trains the value head on the real episodes' TD returns")
    parser.add_argument("--heldout-episodes", type=int_range(1, MAX_EPISODES), default=None,
                        help=f"held-out real episodes for the consistency loss (1 to {MAX_EPISODES}; "
                             f"default {loop.heldout_episodes})")
    parser.add_argument("--video", action=argparse.BooleanOptionalAction, default=None,
                        help=f"render the rollout videos (default: {'on' if d.video else 'off'})")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help=f"Lightning progress bars (default: {'on' if d.progress else 'off'})")
    names = ", ".join(f.name for f in fields(hook.options_class)) if hook.options_class else "none for this task"
    parser.add_argument("--option", action=_OptionAction, default=None, metavar="KEY=VALUE",
                        help=f"a setting of this task's demo, repeatable ({names})")
    hook.add_arguments(parser)
    return parser


def resolve(hook: DemoHook, args: argparse.Namespace) -> None:
    """Fill the options not given from the hook's defaults (``--quick``'s with ``--quick``), build
    ``args.options`` (the hook's options dataclass) and check everything; ValueError naming the option."""
    d = hook.defaults(args.quick)
    for name in ("real", "video", "progress"):
        if getattr(args, name, None) is None:
            setattr(args, name, getattr(d, name))
    for option, name in LOOP_OPTIONS.items():
        if getattr(args, option, None) is None:
            setattr(args, option, loop_setting(d.loop, name))
    check_memory("--envs", args.envs, require_class(hook.task_cls, EnvFactory, "simdist demo").env_memory,
                 "parallel envs")
    args.freeze = _freeze_spec(args.freeze)
    if args.real is None:
        raise ValueError(f"--real: name a reality profile of {hook.task_name} (a built-in name or a YAML file)")
    if args.minutes is None and args.real_episodes is None:
        args.minutes, args.real_episodes = d.minutes, d.real_episodes
    # the demo plans with a preset's budget (the hook's, else the task's) on the task's preset, the overrides given
    # (and the defaults' loop's) replacing its values (simdist.arguments.acting_settings); what it plans with is
    # written into results.json (planner_settings)
    from simdist.arguments import acting_settings, check_planner_options

    args.planner_preset = args.planner_preset or hook.task_cls.planner_preset
    args.planner_overrides = {**d.loop.planner_overrides, **args.planner_overrides}
    check_planner_options(args)
    settings = acting_settings(hook.task_cls, planner=args.planner, preset=args.planner_preset,
                               overrides=args.planner_overrides)
    args.planner_settings = {k: v for k, v in settings.items() if k != "seed"}
    given = args.option or {}
    if hook.options_class is None:
        if given:
            raise ValueError(f"--option {next(iter(given))}: the {hook.task_name} demo has no options")
        args.options = None
    else:
        known = {f.name for f in fields(hook.options_class)}
        unknown = sorted(set(given) - known)
        if unknown:
            raise ValueError(f"--option {unknown[0]}: not a setting of the {hook.task_name} demo (settings: "
                             f"{', '.join(sorted(known))})")
        try:
            args.options = hook.options_class(**given)
        except TypeError as err:
            raise ValueError(f"--option: {err}") from None
    if args.video and not hook.can_render:
        raise ValueError(f"--video: the {hook.task_name} demo renders no video")
    if args.pretrain_only and not hook.can_pretrain:
        raise ValueError(f"--pretrain-only: the {hook.task_name} demo starts from a pretrained model")
    if args.pretrain_only and args.model is not None:
        raise ValueError("--pretrain-only pretrains a model: it cannot start from --model/--pretrained")
    if args.model is None and not hook.can_pretrain:
        args.model = d.model
        if args.model is None:
            raise ValueError(f"--model: the {hook.task_name} demo starts from a pretrained model; pass one")
    hook.check(args)


def _freeze_spec(value: str | None) -> str:
    """``--freeze``'s policy as its canonical spec (the default when None); ValueError naming the option."""
    from simdist.model.freeze import FreezePolicy, FreezePolicyError

    if value is None:
        return FINETUNE_FREEZE
    try:
        return FreezePolicy.parse(value).spec
    except FreezePolicyError as err:
        raise ValueError(f"--freeze {value}: {err}") from None


def earlier_run(hook: DemoHook, out: Path) -> list[str]:
    """The demo's own entries already in ``out`` (an earlier run's)."""
    return sorted(e.name for e in out.iterdir() if e.name in hook.markers) if out.is_dir() else []


def check_overwrite(hook: DemoHook, args: argparse.Namespace) -> None:
    """Before any work: an ``--out`` holding an earlier run of a demo that does not resume is refused unless
    ``--overwrite`` (InputError naming what is there)."""
    from simdist.errors import InputError

    mine = earlier_run(hook, Path(args.out))
    if mine and not hook.resume and not args.overwrite:
        raise InputError(f"--out {args.out}: holds an earlier {hook.task_name} demo run ({', '.join(mine[:5])}); "
                         "pass --overwrite to replace its files, or a new folder")


def remove_earlier_run(hook: DemoHook, out: Path, entries: tuple[str, ...]) -> None:
    """Remove ``entries`` of an earlier run from ``out`` (only the demo's own names: the user's files stay)."""
    for name in entries:
        assert name in hook.markers, name
        path = out / name
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink(missing_ok=True)


def run_demo(hook: DemoHook, args: argparse.Namespace) -> dict[str, Any]:
    """Run (or resume) the demo in ``args.out``; returns the results (also written there)."""
    from simdist.fsutil import atomic_path, atomic_write_json, atomic_write_text

    warnings.filterwarnings("ignore", ".*(eval mode|does not have many workers|__len__|LeafSpec).*")
    if not args.progress:  # Lightning's "GPU available" and tip lines, once per finetuning
        import logging

        logging.getLogger("lightning.pytorch.utilities.rank_zero").setLevel(logging.WARNING)
    out = Path(args.out)
    if getattr(args, "overwrite", False) and hook.resume:  # start afresh instead of resuming
        remove_earlier_run(hook, out, tuple(earlier_run(hook, out)))
    if args.model is None:
        out.mkdir(parents=True, exist_ok=True)
        model = hook.pretrain(args, out)
        if args.pretrain_only:
            return {"pretrained": model}
        args.model = model
    task = hook.make_task(args)
    base = hook.load_base(args.model)  # a model that cannot be loaded stops here, before the folder is made
    out.mkdir(parents=True, exist_ok=True)
    if not hook.resume:
        remove_earlier_run(hook, out, LOOP_ENTRIES)
    loop = hook.make_loop(args.model, task, out, hook.adapt_config(args), progress=args.progress, log=hook.log,
                          base=base)
    hook.before_run(args, loop)
    curve = loop.run()
    results = hook.results(args, loop, curve)
    if args.video:
        results["videos"] = hook.videos(args, loop, out)
    atomic_write_text(out / "results.json", hook.results_text(results))
    atomic_write_text(out / "results.md", hook.markdown(results))
    with atomic_path(out / "progress.png") as tmp:
        plot_panels(hook.panels(results), tmp, hook.title(results))
    timing = {"seconds": time.perf_counter() - hook.started, **getattr(hook, "timing", {})}
    atomic_write_json(out / "timing.json", timing)
    hook.log(f"done in {timing['seconds']:.0f}s; results in {out}")
    print(hook.table(results))
    return results


def plot_panels(panels: list[Panel], path: str | Path, title: str) -> None:
    """One bar per evaluation, each with its 95 % interval as an error bar (``progress.png``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 3.6), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        means = np.array([b.mean for b in panel.bars], float)
        err = np.array([[b.mean - b.low for b in panel.bars], [b.high - b.mean for b in panel.bars]], float)
        labels = [b.label if b.n is None else f"{b.label}\nn={b.n}" for b in panel.bars]
        ax.bar(labels, means, yerr=np.clip(np.nan_to_num(err), 0, None), capsize=6,
               color=[COLORS.get(b.side, "#48c") for b in panel.bars], error_kw={"elinewidth": 1.2})
        ax.set_ylabel(panel.ylabel)
        ax.set_title(f"mean, 95 % CI{'; ' + panel.note if panel.note else ''}", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)


__all__ = ["LOOP_OPTIONS", "Bar", "DemoDefaults", "DemoHook", "Panel", "check_overwrite", "demo_parser", "hook_for",
           "plot_panels", "resolve", "run_demo"]
