"""The ``simdist`` command: ``fit``/``validate``/``test`` (LightningCLI recipes) and tools.

Training subcommands hand over to :class:`~simdist.training.cli.SimDistCLI`; the others are small
argparse programs whose modules load only when called, so ``simdist --help`` is quick.
"""

from __future__ import annotations

import argparse
import importlib
import sys

LIGHTNING_COMMANDS = ("fit", "validate", "test", "predict")

#: subcommand → (module, function, one-line help). Each function takes ``argv`` and returns an exit code.
TOOLS: dict[str, tuple[str, str, str]] = {
    "export": ("simdist.tools.export", "main", "turn a Lightning checkpoint into a Hub-ready model folder"),
    "components": ("simdist.tools.components", "main", "list registered components"),
    "demo": ("simdist.tools.go2_demo", "demo_main", "Go2: zero-shot vs adapted planning, videos (--task toy: toy)"),
    "bench": ("simdist.tools.bench", "main", "MPPI tick latency, batched planning and training throughput"),
    "train-expert": ("simdist.tools.train_expert", "main", "train/resume the Go2 PPO expert; export its set"),
    "generate": ("simdist.tools.generate", "main", "generate a pretraining dataset from an expert set"),
    "evaluate": ("simdist.tools.evaluate", "main", "Go2 straight-walk forward-progress protocol"),
    "adapt": ("simdist.tools.adapt", "main", "real-data adaptation curve: collect, finetune, evaluate per stage"),
    "zoo": ("simdist.tools.zoo", "main", "list, show and publish the model zoo"),
}


def _usage() -> str:
    lines = ["usage: simdist <command> [options]", "", "training (LightningCLI, --config recipes/...):"]
    lines += [f"  {c}" for c in LIGHTNING_COMMANDS]
    lines += ["", "tools:"]
    lines += [f"  {name:<12} {help_}" for name, (_, _, help_) in TOOLS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0
    command, rest = argv[0], argv[1:]
    if command in LIGHTNING_COMMANDS:
        from simdist.training.cli import SimDistCLI

        SimDistCLI(args=[command, *rest])
        return 0
    if command in TOOLS:
        module, func, _ = TOOLS[command]
        return int(getattr(importlib.import_module(module), func)(rest) or 0)
    print(f"simdist: unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
    return 2


def tool_parser(name: str, description: str) -> argparse.ArgumentParser:
    """An argparse parser named ``simdist <name>`` for a tool subcommand."""
    return argparse.ArgumentParser(prog=f"simdist {name}", description=description)


def add_collect_speed_argument(parser: argparse.ArgumentParser) -> None:
    """``--collect-speed SPEED|LOW,HIGH`` (Go2): the straight-walk speed of logged proxy-real episodes, a float
    or a (low, high) range drawn per episode; None: the protocol's speed range (``Go2Task``'s default)."""

    def speed(text: str) -> float | tuple[float, float]:
        values = [float(v) for v in text.split(",")]
        if len(values) not in (1, 2):
            raise argparse.ArgumentTypeError(f"expected SPEED or LOW,HIGH, got {text!r}")
        return values[0] if len(values) == 1 else (values[0], values[1])

    parser.add_argument("--collect-speed", type=speed, default=None, metavar="SPEED|LOW,HIGH",
                        help="Go2: straight-walk speed of the logged episodes, or a range drawn per episode "
                             "(default: the protocol's speed range)")


def add_mppi_arguments(parser: argparse.ArgumentParser, *, samples: int | None, iterations: int | None,
                       init_std: float | None = None, warm_start: str | None = None,
                       temporal_ensemble: float | None = None) -> None:
    """``--samples``, ``--iterations``, ``--init-std``, ``--warm-start`` with a tool's defaults (None: the
    official value, see ``simdist.components.planners.mppi.scaled_settings``) and ``--temporal-ensemble``
    (None: off, the official loop)."""
    from simdist.components.planners.mppi import WARM_STARTS

    parser.add_argument("--samples", type=int, default=samples, help="MPPI samples per iteration")
    parser.add_argument("--iterations", type=int, default=iterations, help="MPPI iterations per tick")
    parser.add_argument("--init-std", type=float, default=init_std,
                        help="MPPI initial sampling std (paper: 2.0, meant for 8 iterations)")
    parser.add_argument("--warm-start", default=warm_start, choices=WARM_STARTS,
                        help="MPPI initial mean (paper: shift; policy: the base policy's action chunk)")
    parser.add_argument("--temporal-ensemble", type=float, default=temporal_ensemble, metavar="DECAY",
                        help="execute the decay^k-weighted mean of what the plans of the last ticks say for now "
                             "(k ticks old; ACT's temporal ensembling, newest first; 0 or unset: off, as the paper)")


if __name__ == "__main__":
    raise SystemExit(main())
