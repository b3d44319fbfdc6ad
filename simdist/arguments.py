"""Command-line argument helpers for tools and plug-ins: parsers named ``simdist <command>``, checked number
types, the planner options (partial overrides of an agent's ``planner.json``), and progress logging. Tasks and
agents that add options to a ``simdist`` command import them from here (never from :mod:`simdist.cli`)."""

from __future__ import annotations

import argparse
import logging
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (``PROG: error: MESSAGE``, exit status 2), without the usage
    block above it (``--help`` shows that)."""

    def error(self, message: str) -> NoReturn:
        from simdist.errors import joined

        self.exit(2, f"{self.prog}: error: {joined(str(message))}\n")


def tool_parser(name: str, description: str) -> argparse.ArgumentParser:
    """An argparse parser named ``simdist <name>`` for a tool subcommand (errors on one line)."""
    return OneLineParser(prog=f"simdist {name}", description=description)


#: the largest integer an option takes (what a 32-bit count holds: torch threads, seeds, env counts, budgets)
INT_LIMIT = 2**31 - 1


def _number(kind: type, text: str, low: float | None, strict: bool) -> float | int:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, got {text!r}") \
            from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    if kind is int and abs(value) > INT_LIMIT:
        raise argparse.ArgumentTypeError(f"must be at most {INT_LIMIT} in size, got {text!r}")
    if low is not None and (value <= low if strict else value < low):
        raise argparse.ArgumentTypeError(f"must be {'>' if strict else '>='} {low:g}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (0 never means "use the default")."""
    return int(_number(int, text, 0, True))


def nonnegative_int(text: str) -> int:
    return int(_number(int, text, 0, False))


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    return float(_number(float, text, 0.0, True))


def nonnegative_float(text: str) -> float:
    return float(_number(float, text, 0.0, False))


def unit_interval(text: str) -> float:
    """argparse type: a number in [0, 1] (a probability or a difficulty)."""
    value = float(_number(float, text, 0.0, False))
    if value > 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {text!r}")
    return value


def decay(text: str) -> float:
    """argparse type: a decay in [0, 1) (0: off)."""
    value = float(_number(float, text, 0.0, False))
    if value >= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text!r}")
    return value


def jsonargparse_parser(name: str, description: str) -> Any:
    """A jsonargparse parser named ``simdist <name>`` with ``--config FILE`` (YAML of its options); its errors are
    one line, as :class:`OneLineParser`'s."""
    from jsonargparse import ActionConfigFile, ArgumentParser

    class Parser(ArgumentParser):
        def error(self, message: str, ex: Exception | None = None) -> NoReturn:
            OneLineParser.error(self, message)  # type: ignore[arg-type]

    parser = Parser(prog=f"simdist {name}", description=description, exit_on_error=True)
    parser.add_argument("--config", action=ActionConfigFile, help="YAML file of these options")
    return parser


def dashes_to_underscores(argv: Sequence[str], names: Iterable[str]) -> list[str]:
    """``--episodes-per-eval 4`` → ``--episodes_per_eval 4`` for the dataclass fields ``names`` (jsonargparse
    names options after the fields; both spellings are accepted)."""
    dashed = {f"--{n.replace('_', '-')}": f"--{n}" for n in names if "_" in n}
    out = []
    for arg in argv:
        flag, eq, value = arg.partition("=")
        out.append(dashed.get(flag, flag) + eq + value if flag in dashed else arg)
    return out


def setup_logging(level: int = logging.INFO) -> None:
    """Show simdist's progress messages (library code logs; commands print them like this)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=level, format="%(message)s")
    logging.getLogger("simdist").setLevel(level)


class DeprecatedAlias(argparse.Action):
    """An old spelling of an option: stores into the new option's destination and warns, naming the new one."""

    def __init__(self, *args: Any, new: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.new = new

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        warnings.warn(f"{parser.prog}: {option_string} is deprecated; use {self.new}", FutureWarning, stacklevel=2)
        setattr(namespace, self.dest, values)


def add_mppi_arguments(parser: argparse.ArgumentParser, *, preset: str | None = None) -> None:
    """The planner options of a command that runs a planning agent, each a partial override of the agent's own
    ``planner.json`` named as its key there (``--num-samples`` sets ``num_samples``; ``--samples`` is the
    deprecated spelling): ``--num-samples``, ``--iterations``, ``--init-std``, ``--warm-start``,
    ``--temporal-ensemble`` (unset: the agent's own value), and ``--planner-preset NAME`` (default ``preset``) to act
    with a preset's budget instead of ``planner.json`` (:func:`simdist.agents.acting_settings` turns them into
    the agent's settings)."""
    from simdist.planning.base import WARM_STARTS, planner_presets

    parser.add_argument("--planner-preset", default=preset, choices=sorted(planner_presets()),
                        help="act with this preset's budget instead of the agent's planner.json (paper: 450+22 "
                             "samples x 8 iterations; realtime: the 50 Hz CPU setting with temporal ensembling); "
                             "the options below replace its values, the other settings are the task's preset "
                             "scaled to the budget")
    parser.add_argument("--num-samples", type=positive_int, default=None,
                        help="MPPI samples per iteration (planner.json's num_samples)")
    parser.add_argument("--samples", dest="num_samples", type=positive_int, action=DeprecatedAlias,
                        new="--num-samples", help=argparse.SUPPRESS)
    parser.add_argument("--iterations", type=positive_int, default=None, help="MPPI iterations per tick")
    parser.add_argument("--init-std", type=positive_float, default=None,
                        help="MPPI initial sampling std (paper: 2.0, meant for 8 iterations)")
    parser.add_argument("--warm-start", default=None, choices=WARM_STARTS,
                        help="MPPI initial mean (paper: shift; policy: the base policy's action chunk)")
    parser.add_argument("--temporal-ensemble", type=decay, default=None, metavar="DECAY",
                        help="execute the decay^k-weighted mean of what the plans of the last ticks say for now "
                             "(k ticks old; ACT's temporal ensembling, newest first; 0: off, as the paper)")


def planner_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The planner options of :func:`add_mppi_arguments` in ``args``, by their ``planner.json`` names (None: not
    given), with ``planner_preset``: the keywords of :func:`simdist.agents.acting_settings`."""
    from simdist.agents import PLANNER_FLAGS

    return {"preset": args.planner_preset, **{name: getattr(args, name) for name in PLANNER_FLAGS}}
