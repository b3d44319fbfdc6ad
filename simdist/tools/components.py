"""``simdist components [KIND]``: list the registered components (built-ins and plugins)."""

from __future__ import annotations

from simdist.arguments import tool_parser


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
    """``simdist tasks [--profile-keys TASK]``: every registered task with its metric, control period, reality
    profiles and profile keys; or one task's profile keys as a Markdown table (types, ranges, defaults)."""
    parser = tool_parser("tasks", "list the registered tasks, their metrics and reality profiles")
    parser.add_argument("--profile-keys", metavar="TASK", default=None,
                        help="print TASK's reality-profile keys (type, accepted range, default, unit) as a "
                             "Markdown table")
    args = parser.parse_args(argv)
    from simdist.capabilities import capabilities_of
    from simdist.profiles import profile_table
    from simdist.registry import get
    from simdist.tasks import TaskError, task_class, task_families, task_names

    if args.profile_keys is not None:
        try:
            cls = task_class(args.profile_keys)  # a family's PREFIX:ID is built here
        except TaskError:
            raise SystemExit(f"simdist tasks: --profile-keys {args.profile_keys!r}: unknown task; registered "
                             f"tasks: {', '.join(task_names() + task_families())}") from None
        schema = cls.profile_schema()
        if schema is None:
            raise SystemExit(f"simdist tasks: task {args.profile_keys!r} declares no reality-profile keys")
        print(profile_table(schema))
        return 0
    for name in task_names():
        cls = get("task", name)
        default = " (default)" if getattr(cls, "default", False) else ""
        schema = cls.profile_schema()
        keys = ", ".join(k for k in schema.names if k not in ("name", "description")) if schema else "-"
        metric = getattr(cls, "metric", None) or "- (no evaluation protocol)"
        print(f"{name}{default}: metric {metric}, dt {cls.dt:g} s, preset {cls.preset or '-'}; "
              f"profiles: {', '.join(cls.profiles()) or '-'}; profile keys: {keys}; "
              f"capabilities: {', '.join(capabilities_of(cls)) or '-'}")
    from simdist.registry import family_doc

    for family in task_families():
        print(f"{family}: {family_doc('task', family.partition(':')[0]) or 'a task built on first use from ID'}")
    return 0
