"""``python -m results.toy.map run|table|mechanism|response|levers|levers-table``: run the map's grid (resumable),
draw its table and heatmap from the committed cells, measure the mechanism (and the dynamics' response) on finished
cells, run the levers against it on failing cells (resumable) and draw their table."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m results.toy.map", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="pretrain once per seed, then every cell of the grid (a rerun resumes)")
    run.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    run.add_argument("--out", default="outputs/toy-map", help="where the runs go (git ignores outputs/)")
    run.add_argument("--jobs", type=int, default=2, help="cells run at a time, one thread each (default 2)")
    run.add_argument("--cells", default=None, help="comma-separated cell names (default: the whole grid, in order)")
    run.add_argument("--dry", action="store_true", help="print the commands only")
    table = sub.add_parser("table", help="copy finished cells from --runs, then write the table and heatmap")
    table.add_argument("--runs", default=None, help="a run folder (e.g. outputs/toy-map) whose finished cells to copy")
    mech = sub.add_parser("mechanism", help="the mechanism measurements on finished cells")
    mech.add_argument("--runs", default="outputs/toy-map", help="the run folder holding the cells' models")
    mech.add_argument("--cells", required=True, help="comma-separated CELL-sSEED folder names")
    mech.add_argument("--episodes", type=int, default=16, help="real episodes per model (default 16)")
    mech.add_argument("--pretrained-from", default=None,
                      help="the folder holding pretrain-sS (default: --runs; a lever's runs: the map's folder)")
    mech.add_argument("--tag", default=None, help="prefix of the copies in results/toy/map/mechanism (e.g. a lever)")
    resp = sub.add_parser("response", help="level or response: what adaptation teaches the dynamics, per cell")
    resp.add_argument("--runs", default="outputs/toy-map", help="the run folder holding the cells' models")
    resp.add_argument("--cells", required=True, help="comma-separated CELL-sSEED folder names")
    lev = sub.add_parser("levers", help="the levers against the mechanism on failing cells (a rerun resumes)")
    lev.add_argument("--levers", default="value,horizon16,epochs24,wide,narrow",
                     help="comma-separated levers (value, horizon16, epochs24, wide, narrow, ensemble, decision)")
    lev.add_argument("--cells", default=None, help="comma-separated cells (default: lag and four failing ones)")
    lev.add_argument("--seeds", type=int, nargs="+", default=[0])
    lev.add_argument("--out", default="outputs/toy-map", help="the map's run folder (its pretrained models)")
    lev.add_argument("--dry", action="store_true", help="print the commands only")
    lev_table = sub.add_parser("levers-table", help="copy finished lever runs from --runs, then write their table")
    lev_table.add_argument("--runs", default=None, help="the map's run folder (e.g. outputs/toy-map)")
    args = parser.parse_args(argv)
    if args.command in ("levers", "levers-table"):
        from results.toy.map import levers

        return levers.main(args) if args.command == "levers" else levers.table(args.runs)
    if args.command == "run":
        if args.jobs < 1:
            parser.error(f"--jobs must be >= 1, got {args.jobs}")
        from results.toy.map.run import run as go

        return go(args)
    if args.command == "response":
        from results.toy.map.response import main as response_main

        return response_main(args)
    if args.command == "table":
        from results.toy.map.table import main as table_main

        return table_main(args.runs)
    from results.toy.map.mechanism import main as mech_main

    return mech_main(args)


if __name__ == "__main__":
    sys.exit(main())
