"""``python -m results run EXPERIMENT [STEP] [--dry-run] [-- OPTIONS]``, ``python -m results run --list``,
``python -m results verify [EXPERIMENT [STEP]] [--max-minutes M] [--list] [--table]`` and ``python -m results
readme``: the lab's one runner (results/README.md lists the experiments) and its regeneration check."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from results.lab import EXPERIMENTS, find, ledger
from results.lab.readme import PATH, render
from results.lab.run import dry_run, execute, missing
from results.lab.spec import Experiment, Step
from results.lab.verify import plan, tracked_files, verify


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


def _verify(args: argparse.Namespace) -> int:
    if args.table:
        print(ledger.table(ledger.load(), everything=args.all), end="")
        return 0
    if args.max_minutes is not None and args.max_minutes <= 0:
        print("python -m results verify: --max-minutes must be positive", file=sys.stderr)
        return 2
    try:
        chosen = [_select(args.experiment, args.step)] if args.experiment else [(e, list(e.steps)) for e in EXPERIMENTS]
    except KeyError as err:
        print(f"python -m results verify: {err.args[0]}", file=sys.stderr)
        return 2
    order = [(e.name, s.name) for e in EXPERIMENTS for s in e.steps]
    worst, tracked = 0, tracked_files()
    for e, steps in chosen:
        for s in steps:
            p = plan(e, s, named=args.step is not None, max_minutes=args.max_minutes, tracked=tracked)
            print(f"{e.name} {s.name}: {p.action} ({p.note}; {len(p.outputs)} committed files)", flush=True)
            if args.list:
                continue
            entry = verify(p, timeout_s=None if args.timeout is None else 60 * args.timeout, keep=args.keep)
            ledger.record(entry, order)
            if entry["verdict"] in ("identical", "differs", "failed"):
                print(f"  {entry['verdict']}, {entry['cpu_s']:.0f} CPU s: {ledger.summary(entry)}", flush=True)
            worst = max(worst, {"differs": 1, "failed": 1}.get(entry["verdict"], 0))
    return worst


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
    check = sub.add_parser("verify", help="rerun steps in a scratch checkout of HEAD and compare their outputs with "
                           "the committed ones; the verdicts go to results/lab/verified.json")
    check.add_argument("experiment", nargs="?", help="its name (default: every experiment)")
    check.add_argument("step", nargs="?", help="one step (default: every step of known cost)")
    check.add_argument("--max-minutes", type=float, help="skip the steps that cost more CPU minutes than this")
    check.add_argument("--timeout", type=float, metavar="MINUTES", help="stop a step after this many minutes")
    check.add_argument("--list", action="store_true", help="say what would run and why not, run nothing")
    check.add_argument("--keep", action="store_true", help="leave the scratch checkout and the step's output")
    check.add_argument("--table", action="store_true", help="print the ledger's checks as a markdown table")
    check.add_argument("--all", action="store_true", help="with --table: the steps not run too, and why")
    readme = sub.add_parser("readme", help="write results/README.md from the specs")
    readme.add_argument("--check", action="store_true", help="only say whether it is in sync (exit 1 if not)")
    args = parser.parse_args(argv)
    if args.command == "readme":
        return _readme(args)
    if args.command == "verify":
        return _verify(args)
    return _run(args, extra)


if __name__ == "__main__":
    raise SystemExit(main())
