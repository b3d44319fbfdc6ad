"""``simdist adapt --task NAME --agent ID --real PROFILE --schedule [0,8,16] --out DIR``: the adaptation curve.

Runs :class:`simdist.workflows.adaptation.AdaptationLoop`: per stage of cumulative real-data minutes, collect
on-policy episodes with the agent, finetune under ``--freeze`` and evaluate on the real env; writes
``state.json`` (resumable: rerun the same command), ``curve.json``, ``curve.png``, the logged data and the
stage models. The loop's options come from :class:`~simdist.workflows.adaptation.AdaptConfig` (``--config FILE``
reads them from YAML), its parts' as ``--finetune.KEY`` (the finetuning budget; ``--freeze`` is short for
``--finetune.freeze``), ``--evaluation.KEY`` (the evaluation: ``trials``, ``workers``) and ``--collection.KEY`` (the
real-data collection: ``workers``, the processes its chunks run in at once); the flat spellings
(``--epochs``, ``--episodes_per_eval``, ...) still work, deprecated (:mod:`simdist.workflows.flat_settings`). The
task adds its own options (``simdist adapt --task NAME --help``). ``--planner.KEY VALUE`` sets
one of ``planner_overrides`` (a key of the agent's ``planner.json``, checked against its planner's schema).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import typing
import warnings
from typing import TYPE_CHECKING

from simdist.agents import check_agent_for_task, load_agent
from simdist.arguments import dashes_to_underscores, jsonargparse_parser, setup_logging, split_planner_options
from simdist.capabilities import EnvFactory, EvaluationProtocol, require, require_class
from simdist.errors import InputError
from simdist.fsutil import check_output_path, output_lock
from simdist.planning.legacy import dotted_argv
from simdist.resources import check_memory, step_bytes
from simdist.tasks import TaskError, add_task_argument, preparse_task, task_class

if TYPE_CHECKING:
    from simdist.workflows.adaptation import AdaptConfig

logger = logging.getLogger(__name__)


#: ``--finetune.KEY``: the finetuning settings of each stage (AdaptConfig.finetune) and what they mean
FINETUNE_HELP = {
    "freeze": "trainable components: dynamics_only, all, heads_only, or a set such as dynamics,encoder (--freeze)",
    "epochs": "finetuning epochs per stage", "windows_per_epoch": "training windows per epoch (null: one pass over "
                                                                   "the real data, as the official recipe's epochs)",
    "batch_size": "finetuning batch size", "lr": "peak learning rate (decays to lr / 2)",
    "warmup_steps": "learning-rate warm-up steps",
    "decay_steps": "steps the learning rate decays over after the warm-up (null: max(10 * warmup_steps, 2000); the "
                   "official recipe: 400000)"}


def _plain_forms(argv: list[str]) -> list[str]:
    """Accept ``--schedule 0,8,16`` (as well as YAML ``[0, 8, 16]``) and ``--envs N`` for ``--num_envs N``."""
    out = []
    for i, arg in enumerate(argv):
        previous = argv[i - 1] if i else ""
        if previous == "--schedule" and not arg.lstrip().startswith("["):
            arg = f"[{arg}]"
        elif arg.startswith("--schedule=") and not arg.split("=", 1)[1].lstrip().startswith("["):
            arg = f"--schedule=[{arg.split('=', 1)[1]}]"
        out.append({"--envs": "--num_envs"}.get(arg, arg) if arg.startswith("--envs") else arg)
    return [a.replace("--envs=", "--num_envs=", 1) if a.startswith("--envs=") else a for a in out]


def check_requests(config: AdaptConfig, task: EnvFactory) -> None:
    """ValueError, naming the option, when the run's envs or its schedule's real data cannot fit in memory."""
    check_memory("--envs", config.num_envs, task.env_memory, "parallel envs")
    if config.schedule_unit == "minutes":
        per_minute = step_bytes(task.dataset_spec()) * round(60 / task.dt)
        check_memory("--schedule", max(1, int(config.schedule[-1])), per_minute, "minutes of logged real data")


def main(argv: list[str]) -> int:
    from simdist.model.freeze import FINETUNE, FinetuneConfig
    from simdist.workflows.adaptation import RUN_MARKERS, AdaptationLoop, AdaptConfig
    from simdist.workflows.flat_settings import SHORT, TYPES, nest, nested

    try:
        cls = require_class(task_class(preparse_task(argv)), EvaluationProtocol, "simdist adapt")
    except TaskError as err:
        print(f"simdist adapt: error: {err}", file=sys.stderr)
        return 2
    fields = [f.name for f in dataclasses.fields(AdaptConfig)]
    parser = jsonargparse_parser("adapt", "finetune on growing amounts of real data; metric vs minutes curve")
    add_task_argument(parser)
    parser.add_argument("--agent", "--model", dest="agent", required=True,
                        help="pretrained agent: Hub id or folder (any agent type)")
    parser.add_argument("--real", required=True, help=f"reality profile of the task ({', '.join(cls.profiles())}, "
                                                      "or a YAML path)")
    parser.add_argument("--out", required=True, help="run folder (rerun the same command to resume)")
    parser.add_argument("--data_from", default=None, help="start from another adapt run's logged real data")
    parser.add_argument("--progress", action="store_true", help="Lightning progress bars")
    parser.add_class_arguments(AdaptConfig, nested_key=None, skip={"finetune"})
    hints = typing.get_type_hints(FinetuneConfig)
    for name, text in FINETUNE_HELP.items():  # the finetuner's settings (AdaptConfig.finetune)
        parser.add_argument(f"--finetune.{name}", type=str if name == "freeze" else hints[name],
                            default=getattr(FINETUNE, name), help=text)
    for name, kind in TYPES.items():  # the flat spellings, given or absent (null is a value of some)
        parser.add_argument(f"--{name}", type=kind, default=argparse.SUPPRESS,
                            help=f"short for --{nested(name)}" if name in SHORT else
                            f"deprecated: use --{nested(name)}")
    cls.add_arguments(parser, "adapt")
    try:  # --planner.KEY VALUE (and the deprecated flags that set one): the loop's planner_overrides
        argv, dotted = split_planner_options(dotted_argv(argv, "simdist adapt"))
    except InputError as err:
        parser.error(str(err))
    args = parser.parse_args(_plain_forms(dashes_to_underscores(argv, [*fields, *TYPES, "data_from"])))
    setup_logging()
    try:
        given = {f: args[f] for f in fields}
        defaults = parser.get_defaults()  # a flat spelling sets its nested option unless that was set too
        flat = {name: args[name] for name in TYPES if name in args and args[nested(name)] == defaults[nested(name)]}
        for name in sorted(set(TYPES) - set(flat)):
            if name in args:
                warnings.warn(f"simdist adapt: --{name} is ignored, --{nested(name)} is given", FutureWarning,
                              stacklevel=2)
        for name, value in flat.items():  # refused under the name given
            AdaptConfig.check_budget(name, value)
        given |= nest(flat, {part: args[part].as_dict() for part in ("finetune", "evaluation")}, "simdist adapt", "--")
        given["collection"] = args["collection"].as_dict()
        config = AdaptConfig(**{**given, "planner_overrides": {**(given["planner_overrides"] or {}), **dotted}})
        task = require(cls.from_args(args, "adapt", profile=args.real), EvaluationProtocol)
        check_requests(config, task)
    except ValueError as err:
        parser.error(str(err))
    warnings.filterwarnings("ignore", ".*(eval mode|does not have many workers|__len__).*")
    check_output_path(args.out, kind="adaptation run", markers=RUN_MARKERS)
    try:  # before the lock: a refused agent leaves no file behind
        base = load_agent(args.agent)
    except (FileNotFoundError, ValueError) as err:
        parser.error(f"--agent {args.agent!r}: {err}")
    check_agent_for_task(base, task, "--agent")
    with output_lock(args.out, kind="adaptation run", markers=RUN_MARKERS):
        try:
            loop = AdaptationLoop(args.agent, task, args.out, config, progress=args.progress,
                                  data_from=args.data_from, base=base)
        except (FileNotFoundError, ValueError) as err:
            parser.error(f"--agent {args.agent!r}: {err}")
        curve = loop.run()
    amounts = [f"{e} episodes" if config.schedule_unit == "episodes" else f"{m:.1f} min"
               for e, m in zip(curve["episodes"], curve["minutes"])]
    if config.evaluation.trials == 0:
        rows = ", ".join(f"{a}: {before:.4f} -> {after:.4f}" for a, before, after in
                         zip(amounts, curve["consistency_before"], curve["consistency_after"]))
        print(f"held-out consistency by real data ({config.schedule_unit}), before -> after finetuning: {rows}; "
              f"no closed-loop evaluation (--evaluation.trials 0): judge {args.out}/stages/stage-K with "
              "`simdist evaluate`")
    else:
        rows = ", ".join(f"{a}: {v:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] (n={n})" for a, v, ci, n in
                         zip(amounts, curve["value"], curve["ci95"], curve["trials"]))
        print(f"{curve['metric']} by real data ({config.schedule_unit}), mean [95 % CI] (trials): {rows}")
    if len(curve["value"]) > 1 and config.evaluation.trials:
        from simdist.evaluation import Estimate, compare

        first, last = (Estimate(curve["value"][k], curve["ci95"][k][0], curve["ci95"][k][1], curve["trials"][k])
                       for k in (0, -1))
        print(compare(first, last, f"{curve['metric']}, {amounts[-1]} vs zero-shot", ".3f"))
    print(f"curve written to {args.out}/curve.json and curve.png")
    return 0
