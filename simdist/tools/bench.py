"""``simdist bench``: MPPI and training throughput of a preset world model on this machine.

Sections (``--sections``, all by default):

* ``mppi``: one paper-size MPPI tick of the task's paper planner preset (``paper``: SIMDIST 6.1, 450 + 22
  samples × 8 iterations × horizon 25; ``manipulation``: 256 + 12 × 3 × 5), wall and CPU time per
  tick (median, p99, and whether the p99 fits the task's control period), the analytic FLOP count per tick
  and the GFLOP/s achieved;
* ``naive``: the official structure (encoder, context and policy head recomputed per sample and
  iteration) on the same seed and history, its speed and its largest plan difference to ``mppi``;
* ``realtime``: the ``realtime`` planner preset as deployed (``REALTIME`` MPPI with temporal ensembling and
  its automatic tick-thread choice, which the row reports), and the same on the caller's threads, median and
  p99 tick (target: p99 ≤ 20 ms);
* ``envs``: batched planning for 1, 8 and 32 envs (ticks/s and env-ticks/s);
* ``paper-batched`` (not in the default list): the paper's planner as the protocol acts with it (the released
  code's initial mean) for ``--batched-envs`` envs per tick, eager and under ``--compile``, env-ticks per second and the
  ratio to the fp32 matrix-product floor measured in the same run (:mod:`simdist.benchmarking.batched`);
* ``train``: pretraining of each task's preset at its recipes' batch size (``--train-presets``; every task
  that declares ``pretrain_batch``) and finetuning (dynamics only, batch 32): ``WorldModelLoss`` + backward + Adam on
  random batches, windows/s of each training variant (today's window path, chunks of consecutive windows
  encoded once, bf16, compiled: :mod:`simdist.benchmarking.training`), FLOP per window and the machine's
  matrix-product rate.

Planner settings are the presets the planners declare (:func:`simdist.planning.planner_preset`);
``--planner.KEY VALUE`` replaces a setting of the task's paper preset (``--num-samples``, ``--iterations`` and
``--score-chunk`` are its deprecated spellings). ``--compile``
adds ``torch.compile`` variants (compile time reported separately). Every timing runs under each ``--threads``
setting (the bench's own ``torch.set_num_threads``, as a user would set it; the planners change no torch setting
themselves). The machine may be shared: CPU time (all threads of this process) is reported beside wall time, and
the load average before and after. ``--json`` prints one JSON object.

The measurements live in :mod:`simdist.benchmarking` (the FLOP counts: :mod:`simdist.benchmarking.planning`);
this module is the command line and the table.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import torch

from simdist.arguments import IntList, add_planner_overrides, nonnegative_int, positive_int, tool_parser
from simdist.benchmarking.batched import bench_paper_batched, protocol_settings
from simdist.benchmarking.measure import load_average, machine_info, num_threads
from simdist.benchmarking.planning import bench_planners, imagine_flops, paper_settings
from simdist.benchmarking.training import DEFAULT_VARIANTS, bench_presets, parse_variant
from simdist.errors import InputError
from simdist.planning.base import planner_preset
from simdist.planning.settings import check_overrides, preset_of
from simdist.resources import MAX_ENVS, MAX_THREADS
from simdist.tasks import add_task_argument, default_task, pretrain_presets, task_class

SECTIONS = ("mppi", "naive", "realtime", "envs", "train")
#: sections run only when ``--sections`` names them
OPTIONAL_SECTIONS = ("paper-batched",)


# ---------------------------------------------------------------------- output
def format_table(report: dict[str, Any]) -> str:
    """The report as a plain-text table."""
    lines = [f"simdist bench: preset {report['settings']['preset']} on {report['machine']['device']} "
             f"({report['machine']['cpu']}, {report['machine']['logical_cores']} logical cores, "
             f"torch {report['machine']['torch']})",
             f"load average before {report['machine']['load_avg']} after {report['load_avg_after']}",
             f"{'section':<13} {'setting':<24} {'thr':>3} {'median ms':>10} {'p99 ms':>9} {'cpu ms':>9} "
             f"{'n':>4}  notes"]
    skip = {"section", "setting", "threads", "median_ms", "p99_ms", "cpu_ms", "n"}
    for r in report["results"]:
        notes = ", ".join(f"{k}={_fmt(v)}" for k, v in r.items() if k not in skip and v is not None)
        lines.append(f"{r['section']:<13} {r['setting']:<24} {r['threads'] or '-':>3} {r['median_ms']:>10.2f} "
                     f"{r['p99_ms']:>9.2f} {r['cpu_ms']:>9.2f} {r['n']:>4}  {notes}")
    return "\n".join(lines)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e-2 or abs(v) >= 1e4 else f"{v:.2f}"
    return str(v)


def _train_presets(args: Any) -> list[tuple[str, int]]:
    """``--train-presets`` parsed, else ``--preset`` at ``--pretrain-batch``, else every task's preset at its
    recipes' batch size."""
    if args.train_presets:
        out = []
        for item in args.train_presets.split(","):
            name, _, batch = item.strip().rpartition(":")
            if not name or not batch.isdigit() or int(batch) < 1:
                raise ValueError(f"--train-presets: {item!r} is not PRESET:BATCH")
            out.append((name, int(batch)))
    elif args.pretrain_batch:
        out = [(args.preset, args.pretrain_batch)]
    else:
        out = pretrain_presets() or [(args.preset, 128)]
    for variant in args.train_variants:
        parse_variant(variant)
    for name, batch in out:
        if any(v.startswith("chunks") for v in args.train_variants) and batch % args.windows_per_chunk:
            raise ValueError(f"--windows-per-chunk {args.windows_per_chunk} does not divide {name}'s batch {batch}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = tool_parser("bench", __doc__.splitlines()[0].split(":", 1)[1].strip())
    add_task_argument(parser)
    parser.add_argument("--preset", default=None,
                        help="world-model preset (default: the task's official architecture; `simdist tasks`)")
    parser.add_argument("--model", default=None,
                        help="time this agent's world model (a Hub id or folder from the zoo) instead "
                             "of --preset's architecture with random weights")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma list of {', '.join(SECTIONS + OPTIONAL_SECTIONS)}")
    parser.add_argument("--threads", type=IntList(1, MAX_THREADS), default="1,2",
                        help=f"torch thread counts to run under (CPU), e.g. 1,2 (each 1 to {MAX_THREADS})")
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:i]")
    parser.add_argument("--repeats", type=positive_int, default=10, help="timed paper-size ticks per setting")
    parser.add_argument("--warmup", type=nonnegative_int, default=2)
    parser.add_argument("--naive-repeats", type=positive_int, default=3)
    parser.add_argument("--realtime-repeats", type=positive_int, default=200)
    parser.add_argument("--envs", type=IntList(1, MAX_ENVS), default="1,8,32",
                        help=f"env counts for the batched-planning section (each 1 to {MAX_ENVS})")
    parser.add_argument("--envs-preset", choices=("realtime", "paper"), default=None,
                        help="planner setting for the envs section (default: realtime on CPU, paper on CUDA)")
    parser.add_argument("--batched-envs", type=IntList(1, MAX_ENVS), default="1,4,8,16",
                        help=f"env counts of the paper-batched section (each 1 to {MAX_ENVS})")
    parser.add_argument("--batched-repeats", type=positive_int, default=3, help="timed ticks per paper-batched row")
    add_planner_overrides(parser, ("--num-samples", "--samples", "--iterations", "--score-chunk"))
    parser.add_argument("--train-steps", type=positive_int, default=5, help="timed pretraining steps (finetune: 4x)")
    parser.add_argument("--train-presets", default=None, metavar="PRESET:BATCH,...",
                        help="presets and batch sizes the train section pretrains (default: each task's preset "
                             "at its recipes' batch size; with --pretrain-batch: --preset at that size)")
    parser.add_argument("--train-variants", default=",".join(DEFAULT_VARIANTS),
                        help="training variants, interleaved: windows, chunks, each with optional +bf16, +compile")
    parser.add_argument("--windows-per-chunk", type=positive_int, default=16,
                        help="consecutive windows per chunk of the chunks variants")
    parser.add_argument("--pretrain-batch", type=positive_int, default=None)
    parser.add_argument("--finetune-batch", type=nonnegative_int, default=32, help="0: no finetuning rows")
    parser.add_argument("--compile", nargs="?", const="default", default=None, metavar="MODE",
                        help="also time torch.compile variants (MODE: default, reduce-overhead, ...)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args(argv)
    task_cls = task_class(args.task or default_task())
    args.planner_preset, args.control_period = task_cls.planner_preset, task_cls.dt
    try:  # --planner.KEY: a setting of the planner of the task's preset
        check_overrides(preset_of(args.planner_preset)[0], args.planner_overrides)
    except InputError as err:
        parser.error(str(err))
    if args.preset is None:
        preset = task_cls.preset
        if preset is None:
            parser.error(f"task {args.task!r} names no world-model preset; pass --preset")
        args.preset = preset
    args.sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = set(args.sections) - set(SECTIONS + OPTIONAL_SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {SECTIONS + OPTIONAL_SECTIONS}")
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("CUDA is not available")
    args.envs_preset = args.envs_preset or ("paper" if device.type == "cuda" else "realtime")
    args.compile_modes = [] if args.compile is None else [True if args.compile == "default" else args.compile]
    thread_counts: list[int | None] = list(args.threads) if device.type == "cpu" else [None]
    args.train_variants = [v.strip() for v in args.train_variants.split(",") if v.strip()]
    try:
        args.train_presets = _train_presets(args)
    except ValueError as err:
        parser.error(str(err))

    from simdist import WorldModel

    wm: Any = None
    if args.model is not None:
        from simdist.agents import load_agent

        try:
            wm = getattr(load_agent(args.model), "world_model", None)
        except (FileNotFoundError, ValueError) as err:
            parser.error(f"--model {args.model!r}: {err}")
        if not isinstance(wm, WorldModel):
            parser.error(f"--model {args.model!r}: not a world-model agent")
    machine = machine_info(device)
    torch.manual_seed(0)
    if args.model is None:
        wm = WorldModel.from_preset(args.preset)
    wm = wm.to(device).eval()
    results: list[dict[str, Any]] = []
    for threads in thread_counts:
        with num_threads(threads):
            results += bench_planners(wm, args, threads, device)
            if "paper-batched" in args.sections:
                results += bench_paper_batched(wm, args, threads, device)
            if "train" in args.sections:
                results += bench_presets(args.train_presets, args, threads, device)
            print(f"[bench] threads={threads} done", file=sys.stderr)
    report = {
        "machine": machine, "load_avg_after": load_average(),
        "settings": {
            "preset": args.preset, "model": args.model, "parameters": wm.count_parameters()["total"],
            "sections": args.sections,
            "threads": thread_counts, "repeats": args.repeats, "naive_repeats": args.naive_repeats,
            "realtime_repeats": args.realtime_repeats, "paper": paper_settings(args),
            "control_period_s": args.control_period,
            "realtime": planner_preset("realtime"),
            "planner_overrides": args.planner_overrides, "envs": args.envs,
            "envs_preset": args.envs_preset, "batched_envs": args.batched_envs,
            "batched_repeats": args.batched_repeats, "paper_batched": protocol_settings(args),
            "compile": args.compile, "pretrain_batch": args.pretrain_batch,
            "finetune_batch": args.finetune_batch, "flop_per_sequence": imagine_flops(wm),
            "train_presets": args.train_presets, "train_variants": args.train_variants,
            "windows_per_chunk": args.windows_per_chunk,
        },
        "results": results,
    }
    print(json.dumps(report, indent=2, default=str) if args.json else format_table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
