"""``simdist demo [--task NAME] ...`` and ``simdist train-expert [--task NAME] ...``: a task's own tools.

The remaining arguments go to the task's demo or expert trainer; without ``--task`` the task that declares itself
the default runs (for the demo ``Task.default_demo``: the task where the demo shows adaptation's effect; for the
expert trainer ``Task.default``). Every task's demo takes the same options and runs the demo pipeline
(:mod:`simdist.workflows.demo_pipeline`) with the task's hook (``Task.demo_hook``); a task with its own ``demo_module``
runs that instead.
"""

from __future__ import annotations

from typing import Any

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


def _run(argv: list[str], tool: str) -> int:
    role = "default_demo" if tool == "demo" else "default"
    if {"-h", "--help"} & set(argv):
        print(f"simdist {tool.replace('_', '-')} [--task NAME] ...: registered tasks: {', '.join(task_names())} "
              f"(default: {default_task(role)}); the task's own options follow.\n")
    cls = task_class(preparse_task(argv, default=False) or default_task(role))  # bad input: the command's boundary
    if tool == "demo" and cls.demo_module is None:
        return demo(cls, _strip_task(argv))
    return int(getattr(cls, tool)(_strip_task(argv)) or 0)


def main(argv: list[str]) -> int:
    return _run(argv, "demo")


def train_expert_main(argv: list[str]) -> int:
    return _run(argv, "train_expert")
