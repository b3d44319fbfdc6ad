"""``simdist evaluate --task NAME --agent ID [--profile P] --trials N``: an agent on a task's protocol.

Loads any agent (:func:`simdist.agents.load_agent`: a Hub id or folder; its ``config.json`` names the type)
or ``expert:PATH`` (an exported privileged expert), runs the task's evaluation protocol on the reality
profile ``--profile`` and prints the metric's mean with its 95 % bootstrap interval and the trial count
per condition, or the whole result as JSON with ``--json``. Planning agents act with their own ``planner.json``;
``--planner.KEY VALUE`` replaces single settings of it (a key of ``planner.json``, checked against the planner's
schema), ``--planner NAME`` swaps the planner, ``--planner-preset NAME`` acts with a preset's budget instead
(:func:`simdist.arguments.acting_settings`).
``--workers N`` spreads the protocol's independent passes over N processes (tasks that have them:
:meth:`~simdist.capabilities.EvaluationProtocol.evaluation_passes`); the result equals the one-process run at one
torch thread.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any

from simdist.agents import build_controller
from simdist.arguments import (
    add_planner_arguments,
    int_range,
    planner_keywords,
    seed_int,
    setup_logging,
    tool_parser,
)
from simdist.capabilities import EvaluationProtocol, require, require_class
from simdist.resources import MAX_ENVS, MAX_TRIALS, MAX_WORKERS, check_memory
from simdist.tasks import Task, TaskError, add_task_argument, preparse_task, task_class
from simdist.workflows.parallel import evaluate_in_workers, evaluation_passes


def controller_for(task: Task, spec: str, **settings: Any) -> Any:
    """``--agent SPEC``: the task's own agent (:meth:`Task.builtin_agent`) or :func:`build_controller` with
    ``settings`` (its keyword arguments); what each ``--workers`` process builds for itself."""
    controller = task.builtin_agent(spec)
    return controller if controller is not None else build_controller(spec, task=task, **settings)


def main(argv: list[str]) -> int:
    try:
        cls = require_class(task_class(preparse_task(argv)), EvaluationProtocol, "simdist evaluate")
    except TaskError as err:
        print(f"simdist evaluate: error: {err}", file=sys.stderr)
        return 2
    parser = tool_parser("evaluate", "evaluate an agent with a task's protocol (mean, 95 % CI, trials)")
    add_task_argument(parser)
    parser.add_argument("--agent", "--controller", dest="agent", required=True,
                        help="agent: Hub id or folder (model:ID also accepted), expert:PATH, or one the task "
                             "provides (e.g. a scripted expert: expert, scripted:NAME)")
    add_planner_arguments(parser)
    parser.add_argument("--profile", default=None,
                        help=f"reality profile ({', '.join(cls.profiles()) or 'none built in'}, or a YAML path)")
    parser.add_argument("--trials", type=int_range(1, MAX_TRIALS), default=5,
                        help=f"trials per condition of the protocol (1 to {MAX_TRIALS})")
    parser.add_argument("--envs", type=int_range(1, MAX_ENVS), default=8,
                        help=f"parallel envs (1 to {MAX_ENVS}); trials beyond what a task runs at once run in "
                             "batches of this many")
    parser.add_argument("--seed", type=seed_int, default=0, help="base seed (0 to 2**31 - 1)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--workers", type=int_range(1, MAX_WORKERS), default=1,
                        help="processes the protocol's independent passes are spread over (tasks that split "
                             f"their protocol; 1 to {MAX_WORKERS}); the result equals one process at one torch "
                             "thread")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    cls.add_arguments(parser, "evaluate")
    args = parser.parse_args(argv)
    if not args.json:
        setup_logging()
    try:
        task = require(cls.from_args(args, "evaluate", profile=args.profile), EvaluationProtocol)
        evaluation_passes(task, args.trials, args.seed, args.workers)  # refuse --workers N before any work
        batch = task.evaluation_batch(args.trials, args.envs)
        check_memory("--envs" if batch == args.envs else "--trials", batch, task.env_memory, "parallel envs")
        build: Callable[[Task, str], Any] = functools.partial(
            controller_for, device=args.device, seed=args.seed, **planner_keywords(args))
        controller = build(task, args.agent)  # here too: errors before any work, and the provenance
    except (ValueError, FileNotFoundError) as err:
        parser.error(str(err))
    log = None if args.json else print
    if args.workers == 1:
        result = task.evaluate(controller, args.trials, args.seed, num_envs=args.envs, log=log)
    else:
        result = evaluate_in_workers(task, args.agent, args.trials, args.seed, workers=args.workers,
                                     num_envs=args.envs, build=build, log=log)
    from simdist.provenance import provenance

    result.details["settings"] = {"agent": args.agent, "planner": args.planner or "agent",
                                  "planner_preset": args.planner_preset,
                                  "temporal_ensemble": args.planner_overrides.get("temporal_ensemble"),
                                  "trials": args.trials, "seed": args.seed, "provenance": provenance(controller)}
    to_planner_dict = getattr(getattr(controller, "config", None), "to_planner_dict", None)
    if callable(to_planner_dict):  # the planner settings that ran: planner.json with the options given
        result.details["settings"]["planner_settings"] = to_planner_dict()
    if args.workers > 1:  # one torch thread each (the one-process default records none of this)
        result.details["settings"] |= {"workers": args.workers, "worker_torch_threads": 1}
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        print(result.table())
    return 0
