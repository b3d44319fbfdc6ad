"""Command-line argument helpers for tools and plug-ins: parsers named ``simdist <command>``, checked number
types, the planner options (partial overrides of an agent's ``planner.json``), and progress logging. Tasks and
agents that add options to a ``simdist`` command import them from here (never from :mod:`simdist.cli`)."""

from __future__ import annotations

import argparse
import logging
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
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


class IntRange:
    """argparse type: an integer in ``[low, high]``; the bounds are attributes, so ``--help`` texts and tests read
    them from the option itself (``int_range(1, 4096)``)."""

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high
        self.__name__ = f"integer in [{low}, {high}]"  # argparse names a type by it

    def __call__(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not self.low <= value <= self.high:
            raise argparse.ArgumentTypeError(f"must be an integer in [{self.low}, {self.high}], got {text!r}")
        return value

    def __repr__(self) -> str:
        return f"int_range({self.low}, {self.high})"


def int_range(low: int, high: int) -> IntRange:
    """argparse type: an integer in ``[low, high]``."""
    return IntRange(low, high)


class FloatRange:
    """argparse type: a finite number in ``(low, high]`` (``[low, high]`` with ``closed``); bounds as attributes."""

    def __init__(self, low: float, high: float, closed: bool = False) -> None:
        self.low, self.high, self.closed = low, high, closed
        self.__name__ = f"number in {'[' if closed else '('}{low:g}, {high:g}]"

    def __call__(self, text: str) -> float:
        value = float(_number(float, text, self.low, not self.closed))
        if value > self.high:
            raise argparse.ArgumentTypeError(f"must be at most {self.high:g}, got {text!r}")
        return value

    def __repr__(self) -> str:
        return f"FloatRange({self.low:g}, {self.high:g}, closed={self.closed})"


class IntList:
    """argparse type: a comma list of integers, each in ``[low, high]`` (``"1,8,32"``)."""

    def __init__(self, low: int, high: int) -> None:
        self.item = IntRange(low, high)
        self.low, self.high = low, high
        self.__name__ = f"comma list of integers in [{low}, {high}]"

    def __call__(self, text: str) -> list[int]:
        items = [x.strip() for x in text.split(",")]
        if not items or any(not x for x in items):
            raise argparse.ArgumentTypeError(f"expected a comma list of integers in [{self.low}, {self.high}], "
                                             f"got {text!r}")
        try:
            return [self.item(x) for x in items]
        except argparse.ArgumentTypeError as err:
            raise argparse.ArgumentTypeError(f"each item {err}") from None

    def __repr__(self) -> str:
        return f"IntList({self.low}, {self.high})"


#: the seeds every command takes: what numpy's and torch's generators and the simulators accept
SEED_LIMIT = INT_LIMIT
#: argparse type of ``--seed``: an integer in [0, SEED_LIMIT]
seed_int = int_range(0, SEED_LIMIT)


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
    with a preset's budget instead of ``planner.json`` (:func:`acting_settings` turns them into the agent's
    settings)."""
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


#: the ``planner.json`` settings the command line (``--num-samples``, ...) and ``AdaptConfig`` override, by name
PLANNER_FLAGS = ("num_samples", "iterations", "init_std", "warm_start", "temporal_ensemble")


def preset_budget(preset: str, base: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The budget (:data:`PLANNER_FLAGS`) planner preset ``preset`` acts with on a task whose own preset is ``base``:
    each value of ``given`` that is not None, else the preset's (``num_samples`` and ``iterations`` always; the others
    where the preset differs from ``base``, else None: ``base``'s own)."""
    from simdist.planning.base import planner_preset

    named, own = planner_preset(preset), planner_preset(base)
    budget = {}
    for key in PLANNER_FLAGS:
        value = given.get(key)
        if value is None and (key in ("num_samples", "iterations") or named.get(key) != own.get(key)):
            value = named.get(key)
        budget[key] = value
    return budget


def acting_settings(task: Any = None, *, planner: str | None = None, current: str | None = None,
                    preset: str | None = None, seed: int | None = None, **given: Any) -> dict[str, Any]:
    """The keywords of :meth:`~simdist.agents.Agent.with_settings` a planning agent acts with, from the command line's
    planner options (``given``: :data:`PLANNER_FLAGS` by name, None: not given):

    * by default (``planner`` None, ``"agent"`` or the agent's own, ``current``): the agent's ``planner.json`` with
      the ``given`` settings replaced;
    * ``planner`` another registered planner: that planner with its defaults and ``given`` (MPPI; others take only
      ``temporal_ensemble``);
    * ``preset`` a planner preset: its budget (:func:`preset_budget`) on ``task``'s planner preset
      (``Task.planner_preset``, without a task ``paper``), the policy samples and elites scaled to it, with the
      task's ``planner_defaults``, instead of ``planner.json`` (how the tools planned before an agent's own settings
      became the default).

    ``seed`` reseeds the planner. TypeError for a setting outside :data:`PLANNER_FLAGS`."""
    unknown = sorted(set(given) - set(PLANNER_FLAGS))
    if unknown:
        raise TypeError(f"acting_settings got unknown planner settings {unknown}")
    given = {k: v for k, v in given.items() if v is not None}
    if planner == "agent" and preset is not None:
        raise ValueError(f"--planner agent keeps the agent's planner.json; --planner-preset {preset} replaces it: "
                         "give one of them")
    if preset is not None:
        from simdist.planning.base import preset_settings

        base = task.planner_preset if task is not None else "paper"
        budget = preset_budget(preset, base, given)
        name = planner or "mppi"
        if not name.startswith("mppi"):
            return {"planner": name, "temporal_ensemble": budget["temporal_ensemble"], "seed": seed}
        defaults = task.planner_defaults if task is not None else {}
        settings = preset_settings(base, budget["num_samples"], budget["iterations"], init_std=budget["init_std"],
                                   warm_start=budget["warm_start"], **defaults)
        return {**settings, "planner": name, "temporal_ensemble": budget["temporal_ensemble"], "seed": seed}
    if planner in (None, "agent", current):
        mppi_only = sorted(k for k in given if k != "temporal_ensemble")
        if current is not None and not current.startswith("mppi") and mppi_only:
            raise ValueError(f"{', '.join('--' + k.replace('_', '-') for k in mppi_only)}: the agent plans with "
                             f"{current!r} (its planner.json), which takes no MPPI settings; add --planner mppi")
        return {**given, "seed": seed}
    if not planner.startswith("mppi"):
        given = {k: v for k, v in given.items() if k == "temporal_ensemble"}
    return {"planner": planner, **given, "seed": seed}


def planner_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The planner options of :func:`add_mppi_arguments` in ``args``, by their ``planner.json`` names (None: not
    given), with ``planner_preset`` as ``preset``: the keywords of :func:`acting_settings`."""
    return {"preset": args.planner_preset, **{name: getattr(args, name) for name in PLANNER_FLAGS}}
