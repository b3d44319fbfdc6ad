"""``simdist demos --task NAME --agent SPEC --episodes N --out DIR``: record demonstrations on a real profile.

Rolls the agent (one the task provides, e.g. ``expert`` or ``scripted:NAME``, a Hub id or folder, or
``expert:PATH``) on the task's proxy-real env (``--profile``, default: the task's own real profile) and writes
``N`` episodes, only successful ones unless ``--all``, to the dataset folder ``--out``
(:func:`simdist.workflows.demos.record_demos`); rerunning the same command resumes. Planning agents act with their saved
planner settings. The folder is what SimDist+BC (``simdist_bc``) clones its policy head on.
"""

from __future__ import annotations

import json
import math
import sys

from simdist.arguments import int_range, positive_int, seed_int, setup_logging, tool_parser
from simdist.capabilities import EvaluationProtocol, require, require_class
from simdist.data.shards import DATASET_MARKERS
from simdist.fsutil import check_output_path, output_lock
from simdist.resources import MAX_ENVS, MAX_EPISODES, check_memory
from simdist.tasks import TaskError, add_task_argument, preparse_task, task_class


def main(argv: list[str]) -> int:
    try:
        cls = require_class(task_class(preparse_task(argv)), EvaluationProtocol, "simdist demos")
    except TaskError as err:
        print(f"simdist demos: error: {err}", file=sys.stderr)
        return 2
    default_profile = getattr(cls, "profile", None)
    parser = tool_parser("demos", "record demonstrations of an agent on a task's proxy-real profile")
    add_task_argument(parser)
    parser.add_argument("--profile", default=None,
                        help=f"reality profile ({', '.join(cls.profiles()) or 'none built in'}, or a YAML path; "
                             f"default: {default_profile})")
    parser.add_argument("--agent", required=True,
                        help="demonstrator: one the task provides (expert, scripted:NAME), a Hub id or folder, or "
                             "expert:PATH")
    parser.add_argument("--episodes", type=int_range(1, MAX_EPISODES), required=True,
                        help=f"demonstrations to write (1 to {MAX_EPISODES})")
    parser.add_argument("--out", required=True, help="dataset folder (rerun the same command to resume)")
    parser.add_argument("--seed", type=seed_int, default=0, help="base seed (0 to 2**31 - 1)")
    parser.add_argument("--num-envs", "--envs", dest="num_envs", type=int_range(1, MAX_ENVS), default=8,
                        help=f"parallel envs (attempts per chunk; 1 to {MAX_ENVS})")
    parser.add_argument("--all", action="store_true", help="keep failed attempts too (default: successes only)")
    parser.add_argument("--max-attempts", type=positive_int, default=None,
                        help="give up after this many attempts in all (default: 20 x --episodes)")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    cls.add_arguments(parser, "adapt")  # the task's options for collecting on its real env
    args = parser.parse_args(argv)
    if not args.json:
        setup_logging()
    profile = args.profile if args.profile is not None else default_profile
    if profile is None:
        parser.error(f"task {cls.__name__} has no default reality profile: pass --profile")
    from simdist.tools.evaluate import controller_for
    from simdist.workflows.demos import record_demos

    check_output_path(args.out, kind="dataset", markers=DATASET_MARKERS)
    try:  # before the lock: a refused input leaves no file behind
        task = require(cls.from_args(args, "adapt", profile=profile), EvaluationProtocol)
        check_memory("--num-envs", args.num_envs, task.env_memory, "parallel envs")
        agent = controller_for(task, args.agent, planner="agent", seed=args.seed)
    except (ValueError, FileNotFoundError) as err:
        parser.error(str(err))
    with output_lock(args.out, kind="dataset", markers=DATASET_MARKERS):
        try:
            summary = record_demos(task, agent, args.episodes, args.out, seed=args.seed, num_envs=args.num_envs,
                                   successful_only=not args.all, max_attempts=args.max_attempts,
                                   progress=not (args.no_progress or args.json))
        except (ValueError, FileNotFoundError) as err:
            parser.error(str(err))
        except RuntimeError as err:
            print(f"simdist demos: error: {err}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    rate = summary["success_rate"]
    print(f"{summary['episodes']} demos ({summary['steps']:,} steps) in {args.out} from {summary['attempts']} "
          f"attempts ({'n/a' if math.isnan(rate) else f'{rate:.0%}'} success); {summary['written']} written now")
    return 0
