"""``simdist demo [--task NAME] ...`` and ``simdist train-expert [--task NAME] ...``: a task's own tools.

The remaining arguments go to the task's demo (:meth:`simdist.tasks.Task.demo`) or expert trainer; without
``--task`` the task that declares itself the default runs (for the demo ``Task.default_demo``: the task where the
demo shows adaptation's effect; for the expert trainer ``Task.default``).
"""

from __future__ import annotations

from simdist.tasks import default_task, preparse_task, task_class, task_names


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
    return int(getattr(cls, tool)(_strip_task(argv)) or 0)


def main(argv: list[str]) -> int:
    return _run(argv, "demo")


def train_expert_main(argv: list[str]) -> int:
    return _run(argv, "train_expert")
