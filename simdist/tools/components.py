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
