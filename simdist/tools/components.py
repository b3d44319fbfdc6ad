"""``simdist components [KIND]``: list the registered components (built-ins and plugins)."""

from __future__ import annotations

from simdist.cli import tool_parser


def main(argv: list[str]) -> int:
    parser = tool_parser("components", __doc__.split(":", 1)[1].strip())
    parser.add_argument("kind", nargs="?", default=None)
    args = parser.parse_args(argv)
    from simdist.registry import list_components

    table = list_components(args.kind)
    if isinstance(table, list):
        table = {args.kind: table}
    for kind, names in table.items():
        print(f"{kind:<14} {', '.join(names) or '-'}")
    return 0


def tasks_main(argv: list[str]) -> int:
    """``simdist tasks``: every registered task with its metric, control period and reality profiles."""
    parser = tool_parser("tasks", "list the registered tasks, their metrics and reality profiles")
    parser.parse_args(argv)
    from simdist.registry import get
    from simdist.tasks import task_names

    for name in task_names():
        cls = get("task", name)
        default = " (default)" if getattr(cls, "default", False) else ""
        print(f"{name}{default}: metric {cls.metric}, dt {cls.dt:g} s, preset {cls.preset or '-'}; "
              f"profiles: {', '.join(cls.profiles()) or '-'}")
    return 0
