"""``simdist demo [--task NAME] ...`` and ``simdist train-expert [--task NAME] ...``: a task's own tools.

The remaining arguments go to the task's demo or expert trainer; without ``--task`` the task that declares itself
the default runs (for the demo ``Task.default_demo``: the task where the demo shows adaptation's effect; for the
expert trainer ``Task.default``). Every task's demo takes the same options and runs the demo pipeline
(:mod:`simdist.workflows.demo_pipeline`) with the task's hook (``Task.demo_hook``); it needs a task with an
evaluation protocol. The expert trainer is the task's :class:`~simdist.capabilities.ExpertTrainer`: this command
builds the parser, the task adds its options and trains with the parsed ones.
"""

from __future__ import annotations

from typing import Any

from simdist.capabilities import EvaluationProtocol, ExpertTrainer, require_class
from simdist.tasks import Task, default_task, preparse_task, task_class, task_names


def demo(task_cls: type[Task], argv: list[str], hook: Any = None) -> int:
    """``simdist demo --task NAME ...`` through the demo pipeline with ``hook`` (None: the task's)."""
    from simdist.errors import InputError
    from simdist.fsutil import check_output_path, output_lock
    from simdist.tasks import TaskError
    from simdist.workflows import demo_pipeline

    hook = hook or demo_pipeline.hook_for(task_cls)
    parser = demo_pipeline.demo_parser(task_cls, hook)
    args = parser.parse_args(argv)
    check_output_path(args.out, kind=f"{hook.task_name} demo", markers=hook.markers)  # before any work
    demo_pipeline.check_overwrite(hook, args)
    try:
        demo_pipeline.resolve(hook, args)
    except (ValueError, InputError, TaskError) as err:
        parser.error(str(err))
    with output_lock(args.out, kind=f"{hook.task_name} demo", markers=hook.markers):  # one writer per folder
        demo_pipeline.run_demo(hook, args)
    return 0


def _strip_task(argv: list[str]) -> list[str]:
    out, skip = [], False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        if arg == "--task":
            skip = i + 1 < len(argv)
            continue
        if arg.startswith("--task="):
            continue
        out.append(arg)
    return out


def _task(argv: list[str], tool: str) -> type[Task]:
    """The task of ``--task`` (or the default of ``tool``'s role); ``--help`` first says how to pick one."""
    role = "default_demo" if tool == "demo" else "default"
    if {"-h", "--help"} & set(argv):
        print(f"simdist {tool} [--task NAME] ...: registered tasks: {', '.join(task_names())} "
              f"(default: {default_task(role)}); the task's own options follow.\n")
    return task_class(preparse_task(argv, default=False) or default_task(role))  # bad input: the command's boundary


def train_expert(cls: type[ExpertTrainer], argv: list[str]) -> int:
    """``simdist train-expert --task NAME ...``: the task's trainer options parsed, then its trainer run."""
    from simdist.arguments import tool_parser

    parser = tool_parser("train-expert", cls.expert_description)
    cls.add_expert_arguments(parser)
    return int(cls.train_expert(parser.parse_args(argv)) or 0)


def main(argv: list[str]) -> int:
    cls = require_class(_task(argv, "demo"), EvaluationProtocol, "simdist demo")
    return demo(cls, _strip_task(argv))


def train_expert_main(argv: list[str]) -> int:
    cls = require_class(_task(argv, "train-expert"), ExpertTrainer, "simdist train-expert")
    return train_expert(cls, _strip_task(argv))
