"""The ``simdist`` command: ``fit``/``validate``/``test`` (LightningCLI recipes) and tools.

Training subcommands hand over to :class:`~simdist.training.cli.SimDistCLI`; the others are small
argparse programs whose modules load only when called, so ``simdist --help`` is quick.
"""

from __future__ import annotations

import importlib
import sys

from simdist.arguments import (  # noqa: F401  (moved to simdist.arguments; re-exported for older imports)
    add_mppi_arguments,
    dashes_to_underscores,
    jsonargparse_parser,
    nonnegative_float,
    nonnegative_int,
    positive_float,
    positive_int,
    setup_logging,
    tool_parser,
    unit_interval,
)
from simdist.errors import debug_requested, guarded

LIGHTNING_COMMANDS = ("fit", "validate", "test", "predict")

#: subcommand → (module, function, one-line help). Each function takes ``argv`` and returns an exit code.
TOOLS: dict[str, tuple[str, str, str]] = {
    "export": ("simdist.tools.export", "main", "turn a Lightning checkpoint into a Hub-ready model folder"),
    "components": ("simdist.tools.components", "main", "list registered components"),
    "demo": ("simdist.tools.demo", "main", "a task's end-to-end demo: zero-shot vs adapted (--task NAME)"),
    "bench": ("simdist.tools.bench", "main", "MPPI tick latency, batched planning and training throughput"),
    "train-expert": ("simdist.tools.demo", "train_expert_main", "train a task's privileged expert (--task NAME)"),
    "generate": ("simdist.tools.generate", "main", "generate a pretraining dataset with a task's data engine"),
    "evaluate": ("simdist.tools.evaluate", "main", "evaluate an agent with a task's protocol (mean, 95 % CI)"),
    "tasks": ("simdist.tools.components", "tasks_main", "list the registered tasks, their profiles and metrics"),
    "adapt": ("simdist.tools.adapt", "main", "real-data adaptation curve: collect, finetune, evaluate per stage"),
    "zoo": ("simdist.tools.zoo", "main", "list, show and publish the model zoo"),
    "mechanism": ("simdist.tools.mechanism", "main", "how models rank the planner's candidates on a real profile"),
    "value-rank": ("simdist.tools.value_rank", "main", "fit the value head to the planner's candidates"),
    "diagnose": ("simdist.tools.diagnose", "main", "how much a world model's predictions depend on the actions"),
    "demos": ("simdist.tools.record_demos", "main", "record demonstrations of an agent on a task's real profile"),
    "convert": ("simdist.tools.convert", "main", "import a released official SimDist checkpoint (convert official)"),
}


def _usage() -> str:
    lines = ["usage: simdist <command> [options]  |  simdist --version", "",
             "training (LightningCLI, --config recipes/...):"]
    lines += [f"  {c}" for c in LIGHTNING_COMMANDS]
    lines += ["", "tools:"]
    lines += [f"  {name:<12} {help_}" for name, (_, _, help_) in TOOLS.items()]
    lines += ["", "--debug (or SIMDIST_DEBUG=1): the traceback of an input error too"]
    return "\n".join(lines)


def version_line() -> str:
    """``simdist VERSION``, with ``(commit HASH)`` of the source in a git checkout (none for an installed wheel)."""
    from simdist import __version__
    from simdist.provenance import source_commit

    commit = source_commit()
    return f"simdist {__version__}" + (f" (commit {commit})" if commit else "")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if argv[0] in ("-V", "--version"):
        print(version_line())
        return 0
    command, rest = argv[0], argv[1:]
    if command not in LIGHTNING_COMMANDS and command not in TOOLS:
        print(f"simdist: unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    debug = debug_requested(rest)
    rest = [a for a in rest if a != "--debug"]
    return guarded(f"simdist {command}", lambda: _run(command, rest), debug=debug)


def _run(command: str, rest: list[str]) -> int:
    if command in LIGHTNING_COMMANDS:
        from simdist.training.cli import SimDistCLI

        SimDistCLI(args=[command, *rest])
        return 0
    module, func, _ = TOOLS[command]
    return int(getattr(importlib.import_module(module), func)(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
