"""``simdist generate --task NAME --out DIR [--experts NAME|DIR] [--preset P]``: a pretraining dataset.

The task's data generator (:meth:`~simdist.capabilities.DataGeneration.generate`) writes the dataset folder;
rerunning the same command resumes. ``--parts N`` splits the run into N parts that independent workers can share
(``torchrun --nproc-per-node W -m simdist.cli generate ... --parts N``, or a SLURM array; see
:mod:`simdist.data.parts`); every worker runs the same command and the last one to finish leaves the
index of the whole dataset. The folder's ``origin.json`` records the settings that made it: a rerun with other
settings is refused (:mod:`simdist.data.origin`). ``--envs`` and ``--transitions`` override the task's preset;
the task adds its own options (``simdist generate --task NAME --help``).
"""

from __future__ import annotations

import json
import logging
import sys

from simdist.arguments import int_range, nonnegative_int, positive_int, seed_int, setup_logging, tool_parser
from simdist.capabilities import DataGeneration, require, require_class
from simdist.data.origin import check_origin, generate_settings
from simdist.data.shards import DATASET_MARKERS
from simdist.fsutil import check_output_path, output_lock
from simdist.resources import MAX_ENVS, check_memory
from simdist.tasks import TaskError, add_task_argument, get_task_name, preparse_task, task_class

logger = logging.getLogger(__name__)


def main(argv: list[str]) -> int:
    try:
        cls = require_class(task_class(preparse_task(argv)), DataGeneration, "simdist generate")
    except TaskError as err:
        print(f"simdist generate: error: {err}", file=sys.stderr)
        return 2
    name = get_task_name(cls)
    presets: dict[str, dict[str, int]] = dict(cls.data_defaults.get("presets", {}))
    parser = tool_parser("generate", "generate a pretraining dataset with a task's data engine")
    add_task_argument(parser)
    parser.add_argument("--experts", default=None, help="expert set: a zoo name (e.g. the task's) or a folder")
    parser.add_argument("--out", required=True, help="dataset folder (rerun to resume)")
    if presets:
        parser.add_argument("--preset", default=next(iter(presets)), choices=sorted(presets))
    parser.add_argument("--envs", type=int_range(1, MAX_ENVS), default=None,
                        help=f"batch size B (1 to {MAX_ENVS}; overrides the preset)")
    parser.add_argument("--transitions", type=positive_int, default=None, help="budget (overrides the preset)")
    parser.add_argument("--seed", type=seed_int, default=42, help="base seed (0 to 2**31 - 1)")
    parser.add_argument("--parts", type=positive_int, default=None,
                        help="split the budget into this many parts (independent seeds and episode-id ranges); "
                             "needed to spread the run over workers")
    parser.add_argument("--rank", type=nonnegative_int, default=None,
                        help="this worker's rank (default: RANK from torchrun, a SLURM array's task id, else 0)")
    parser.add_argument("--world-size", type=positive_int, default=None,
                        help="number of workers (default: WORLD_SIZE from torchrun, a SLURM array's task count, "
                             "else 1)")
    parser.add_argument("--expert-only", action="store_true",
                        help="the expert alone, never perturbed: the paper's expert-only ablation data (same budget)")
    parser.add_argument("--torch-threads", type=positive_int, default=1, help="torch threads for the policies")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    cls.add_arguments(parser, "generate")
    args = parser.parse_args(argv)
    # before any work (as a worker: a lone writer's lock refuses it here, the exact check comes with the lock)
    check_output_path(args.out, kind="dataset", markers=DATASET_MARKERS, shared=True)
    if args.experts is not None and cls.scripted_experts:
        parser.error(f"--experts {args.experts}: task {name!r}'s experts are scripted; --experts does not apply")

    preset = presets.get(getattr(args, "preset", ""), {})
    num_envs = args.envs or preset.get("num_envs")
    transitions = args.transitions or preset.get("transitions")
    if not num_envs or not transitions:
        parser.error(f"task {name!r} has no data presets: pass --envs and --transitions")
    from simdist.data.parts import worker_share

    try:
        rank, world = worker_share(args.rank, args.world_size)
    except ValueError as err:
        parser.error(str(err))
    if world > 1 and (args.parts or 0) < world:
        parser.error(f"--parts ({args.parts}) must be at least the number of workers ({world}): "
                     "each worker runs the parts k with k % workers == its rank")
    task = require(cls.from_args(args, "generate"), DataGeneration)
    try:
        check_memory("--envs", num_envs, task.env_memory, "parallel envs")
    except ValueError as err:
        parser.error(str(err))
    if not args.json:
        setup_logging()
    workers = {"parts": args.parts, "rank": rank, "world": world} if args.parts is not None else {}
    if args.expert_only:
        workers["expert_only"] = True

    import torch

    torch.set_num_threads(args.torch_threads)
    # the workers of one distributed run share the lock
    with output_lock(args.out, shared=world > 1, kind="dataset", markers=DATASET_MARKERS):
        check_origin(args.out, generate_settings({**vars(args), "task": name, "envs": num_envs,
                                                  "transitions": transitions}))
        summary = task.generate(args.out, experts=args.experts, num_envs=num_envs, transitions=transitions,
                                seed=args.seed, progress=not args.no_progress,
                                preset=getattr(args, "preset", "custom"), args=args, **workers)
    if args.json or "session" not in summary:
        print(json.dumps(summary, indent=1, default=str))
        return 0
    s = summary["session"]
    print(f"{summary['transitions']:,} transitions in {summary['episodes']:,} episodes "
          f"({summary['parts_done']}/{summary['parts']} parts); dropped (diverged): "
          f"{summary['dropped_diverged']}; discarded unfinished: {summary['discarded_unfinished']:,}; "
          f"expert-flag fraction {summary['expert_fraction']:.3f}, noised {summary['noised_fraction']:.3f}")
    print(f"this run: {s['simulated_transitions']:,} simulated transitions in {s['wall_s']:.1f} s wall "
          f"({s['simulated_per_s']:,.0f}/s), {s['cpu_s']:.1f} CPU-s ({s['simulated_per_cpu_s']:,.0f}/CPU-s)")
    return 0
