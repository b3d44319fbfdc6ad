"""Command-line argument helpers for tools and plug-ins: parsers named ``simdist <command>``, checked number
types, the MPPI planner options with their presets, and progress logging. Tasks and agents that add options to
a ``simdist`` command import them from here (never from :mod:`simdist.cli`)."""

from __future__ import annotations

import argparse
import logging
import math
import weakref
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


#: ``add_mppi_arguments`` destinations and the preset settings (``simdist.planning.presets``) they take.
_MPPI_PRESET_FLAGS = {"samples": "num_samples", "iterations": "iterations", "init_std": "init_std",
                     "warm_start": "warm_start", "temporal_ensemble": "temporal_ensemble"}


class _GivenFlags:
    """The MPPI options given on the command line of the namespace being parsed (so that a preset fills
    only the others, wherever it stands on the command line)."""

    def __init__(self) -> None:
        self._namespace: weakref.ref | None = None
        self._given: set[str] = set()

    def of(self, namespace: argparse.Namespace) -> set[str]:
        if self._namespace is None or self._namespace() is not namespace:
            self._namespace, self._given = weakref.ref(namespace), set()
        return self._given


class _MPPIFlagAction(argparse.Action):
    def __init__(self, *args: Any, given: _GivenFlags, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.given = given

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        self.given.of(namespace).add(self.dest)


class _PlannerPresetAction(_MPPIFlagAction):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        given = self.given.of(namespace)
        for dest, value in _preset_flag_values(values).items():
            if dest not in given:
                setattr(namespace, dest, value)


def _preset_flag_values(name: str) -> dict[str, Any]:
    """The ``add_mppi_arguments`` values of planner preset ``name`` (None: the official value / off)."""
    from simdist.planning.presets import planner_preset

    settings = planner_preset(name)
    return {dest: settings.get(key) for dest, key in _MPPI_PRESET_FLAGS.items()}


def add_mppi_arguments(parser: argparse.ArgumentParser, *, samples: int | None = None,
                       iterations: int | None = None, init_std: float | None = None, warm_start: str | None = None,
                       temporal_ensemble: float | None = None, preset: str | None = None) -> None:
    """``--samples``, ``--iterations``, ``--init-std``, ``--warm-start``, ``--temporal-ensemble`` and
    ``--planner-preset`` with a tool's defaults: those of planner preset ``preset`` if given, replaced by the
    keyword arguments that are not None (else None: the official value, see
    ``simdist.planning.presets.scaled_settings``; ``--temporal-ensemble`` None: off, the official loop).
    ``--planner-preset paper|realtime`` sets every option not given on the command line to the preset's
    value (``simdist.planning.presets``), wherever it stands."""
    from simdist.planning.base import WARM_STARTS
    from simdist.planning.presets import PLANNER_PRESETS

    defaults = _preset_flag_values(preset) if preset is not None else dict.fromkeys(_MPPI_PRESET_FLAGS)
    given = {"samples": samples, "iterations": iterations, "init_std": init_std, "warm_start": warm_start,
             "temporal_ensemble": temporal_ensemble}
    defaults.update({k: v for k, v in given.items() if v is not None})
    flag: dict[str, Any] = {"action": _MPPIFlagAction, "given": _GivenFlags()}
    parser.add_argument("--planner-preset", action=_PlannerPresetAction, given=flag["given"], default=preset,
                        choices=sorted(PLANNER_PRESETS),
                        help="fill the MPPI options not given here from a preset (paper: 450+22 samples x 8 "
                             "iterations, as the paper; realtime: the 50 Hz CPU setting with temporal ensembling)")
    parser.add_argument("--samples", type=positive_int, default=defaults["samples"],
                        help="MPPI samples per iteration", **flag)
    parser.add_argument("--iterations", type=positive_int, default=defaults["iterations"],
                        help="MPPI iterations per tick", **flag)
    parser.add_argument("--init-std", type=positive_float, default=defaults["init_std"],
                        help="MPPI initial sampling std (paper: 2.0, meant for 8 iterations)", **flag)
    parser.add_argument("--warm-start", default=defaults["warm_start"], choices=WARM_STARTS,
                        help="MPPI initial mean (paper: shift; policy: the base policy's action chunk)", **flag)
    parser.add_argument("--temporal-ensemble", type=decay, default=defaults["temporal_ensemble"], metavar="DECAY",
                        help="execute the decay^k-weighted mean of what the plans of the last ticks say for now "
                             "(k ticks old; ACT's temporal ensembling, newest first; 0 or unset: off, as the paper)",
                        **flag)
