"""``python -m results run EXPERIMENT [STEP] [--dry-run] [-- OPTIONS]``, ``python -m results run --list`` and
``python -m results readme``: the lab's one runner (results/README.md lists the experiments)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from results.lab import EXPERIMENTS, find
from results.lab.readme import PATH, render
from results.lab.run import dry_run, execute, missing
from results.lab.spec import Experiment, Step


def _list() -> int:
    for e in EXPERIMENTS:
        print(f"{e.name}\n    {e.question}\n    {e.doc} § {e.section}\n    steps: {' '.join(s.name for s in e.steps)}")
    return 0


def _select(name: str, step: str | None) -> tuple[Experiment, list[Step]]:
    e = find(name)
    return e, list(e.steps) if step is None else [e.step(step)]


def _run(args: argparse.Namespace, extra: list[str]) -> int:
    if args.list:
        return _list()
    if args.experiment is None:
        print("python -m results run: name an EXPERIMENT or pass --list", file=sys.stderr)
        return 2
    try:
        e, steps = _select(args.experiment, args.step)
    except KeyError as err:
        print(f"python -m results run: {err.args[0]}", file=sys.stderr)
        return 2
    if extra and args.step is None:
        print("python -m results run: options after -- go to one step: name the STEP", file=sys.stderr)
        return 2
    for s in steps:
        print(f"# {e.name} {s.name}: {s.line}" + (" " + " ".join(extra) if extra else ""), file=sys.stderr,
              flush=True)
        if args.dry_run and missing(s):
            print(f"# needs {', '.join(missing(s))}, not there yet", file=sys.stderr, flush=True)
        code = dry_run(s, extra) if args.dry_run else execute(s, extra)
        if code:
            print(f"python -m results run {e.name}: step {s.name} failed (exit {code})", file=sys.stderr)
            return code
    return 0


def _readme(args: argparse.Namespace) -> int:
    text = render(EXPERIMENTS)
    if args.check:
        same = PATH.is_file() and PATH.read_text(encoding="utf-8") == text
        print("results/README.md is " + ("in sync" if same else "out of date: run python -m results readme"))
        return 0 if same else 1
    PATH.write_text(text, encoding="utf-8")
    print(f"wrote {PATH.relative_to(PATH.parents[1])} ({len(EXPERIMENTS)} experiments)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(prog="python -m results", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run an experiment, or one of its steps")
    run.add_argument("experiment", nargs="?", help="its name (--list shows them)")
    run.add_argument("step", nargs="?", help="one step (default: every step, in order)")
    run.add_argument("--list", action="store_true", help="the experiments, their questions and docs")
    run.add_argument("--dry-run", action="store_true", help="print the commands the steps would run, run nothing")
    readme = sub.add_parser("readme", help="write results/README.md from the specs")
    readme.add_argument("--check", action="store_true", help="only say whether it is in sync (exit 1 if not)")
    args = parser.parse_args(argv)
    if args.command == "readme":
        return _readme(args)
    return _run(args, extra)


if __name__ == "__main__":
    raise SystemExit(main())
