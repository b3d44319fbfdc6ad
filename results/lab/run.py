"""Running a step, or printing what it would run: ``python`` is this interpreter and ``simdist`` the installed
command; a ``python -m`` step with its own dry run (``Step.dry``) prints its commands itself, in this process."""

from __future__ import annotations

import os
import runpy
import shlex
import subprocess
import sys
from collections.abc import Sequence

from results.lab.spec import Step
from results.runner import ROOT, simdist_command


def resolve(argv: Sequence[str]) -> list[str]:
    """``argv`` with its first ``python`` replaced by this interpreter and its first ``simdist`` by the command of
    this interpreter's environment."""
    for i, token in enumerate(argv):
        if token in ("python", "simdist"):
            return [*argv[:i], *([sys.executable] if token == "python" else simdist_command()), *argv[i + 1:]]
    return list(argv)


def _exit_code(code: object) -> int:
    """The exit status of a ``SystemExit`` code (a message counts as 1 and goes to stderr, as Python does)."""
    if code is None or isinstance(code, int):
        return code or 0
    print(code, file=sys.stderr)
    return 1


def run_module(module: str, args: Sequence[str]) -> int:
    """``python -m MODULE ARGS`` in this process (its exit status; cwd and ``sys.argv`` restored)."""
    saved, cwd = sys.argv, os.getcwd()
    sys.argv = [module, *args]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        return _exit_code(stop.code)
    finally:
        sys.argv = saved
        os.chdir(cwd)
    return 0


def missing(step: Step) -> list[str]:
    """The files ``step`` needs that are not there yet (relative to the repository root)."""
    return [need for need in step.needs if not (ROOT / need).exists()]


def dry_run(step: Step, extra: Sequence[str] = ()) -> int:
    """Print the commands ``step`` would run, run nothing: its own dry run where it has one and what it needs is
    there, else its command."""
    argv = [*step.command, *extra]
    if step.dry is None or missing(step) or argv[:2] != ["python", "-m"]:
        print(shlex.join(argv), flush=True)
        return 0
    sys.stdout.flush()
    return run_module(argv[2], [*argv[3:], step.dry])


def execute(step: Step, extra: Sequence[str] = ()) -> int:
    """Run ``step`` from the repository root; its exit status (2, saying which, when a file it needs is missing)."""
    absent = missing(step)
    if absent:
        print(f"{step.name} needs {', '.join(absent)}: run the step that writes it first", file=sys.stderr)
        return 2
    return subprocess.call(resolve([*step.command, *extra]), cwd=ROOT)
