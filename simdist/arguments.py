"""Command-line argument helpers for tools and plug-ins: parsers named ``simdist <command>``, checked number
types, the planner options (``--planner NAME``, ``--planner-preset NAME``, ``--planner.KEY VALUE`` overrides of an
agent's ``planner.json``), and progress logging. Tasks and
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
    block above it (``--help`` shows that). With the planner options (:func:`add_planner_overrides`) it also reads
    ``--planner.KEY VALUE`` into ``planner_overrides`` and checks them (:func:`check_planner_options`)."""

    planner_options = False

    def error(self, message: str) -> NoReturn:
        from simdist.errors import joined

        self.exit(2, f"{self.prog}: error: {joined(str(message))}\n")

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        if not self.planner_options:
            return super().parse_known_args(args, namespace)
        import sys

        from simdist.errors import InputError

        try:
            rest, dotted = split_planner_options(sys.argv[1:] if args is None else args)
        except InputError as err:
            self.error(str(err))
        parsed, extras = super().parse_known_args(rest, namespace)
        parsed.planner_overrides = {**(parsed.planner_overrides or {}), **dotted}
        try:
            check_planner_options(parsed)
        except InputError as err:
            self.error(str(err))
        return parsed, extras


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


class PlannerAlias(argparse.Action):
    """A deprecated planner flag (:data:`simdist.planning.legacy.FLAGS`): stores its value as the override
    ``--planner.KEY`` and warns."""

    def __init__(self, *args: Any, key: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key = key

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from simdist.planning.legacy import warn

        warn(str(option_string), self.key, parser.prog)
        setattr(namespace, self.dest, {**(getattr(namespace, self.dest, None) or {}), self.key: values})


def yaml_value(text: str) -> Any:
    """A command-line value read as a YAML scalar or flow value (``7``, ``0.5``, ``true``, ``null``, ``shift``,
    ``[6]``), as jsonargparse reads the options it has no type for."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def split_planner_options(argv: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
    """``argv`` without its ``--planner.KEY VALUE`` and ``--planner.KEY=VALUE`` options, and those as a mapping of
    overrides (values read by :func:`yaml_value`). InputError naming the option for one without a key or value."""
    from simdist.errors import InputError

    rest: list[str] = []
    found: dict[str, Any] = {}
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--planner."):
            rest.append(arg)
            i += 1
            continue
        flag, eq, text = arg.partition("=")
        key = flag[len("--planner."):]
        if not key.isidentifier():
            raise InputError(f"{flag}: expected --planner.KEY VALUE with KEY a setting name")
        if not eq:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise InputError(f"{flag}: expected a value")
            text, i = args[i + 1], i + 1
        found[key] = yaml_value(text)
        i += 1
    return rest, found


def add_planner_overrides(parser: argparse.ArgumentParser, aliases: Sequence[str] = ()) -> None:
    """``--planner.KEY VALUE`` (repeatable; also ``--planner.KEY=VALUE``): overrides of single settings, by their
    ``planner.json`` names, checked against the planner's schema (``args.planner_overrides``, a dict), and the
    deprecated flags ``aliases`` (:data:`simdist.planning.legacy.FLAGS`) that set them. Only a
    :func:`tool_parser` reads the dotted options."""
    from simdist.planning.legacy import FLAG_TYPES, FLAGS

    types: dict[str, Any] = {"positive_int": positive_int, "positive_float": positive_float, "decay": decay,
                             "str": str}

    parser.set_defaults(planner_overrides=None)
    parser.add_argument("--planner.KEY", dest="planner_overrides_help", metavar="VALUE", default=None,
                        help="replace one setting of the planner (a key of its planner.json, checked against the "
                             "planner's schema; repeatable; the value is read as YAML: 64, 0.5, true, null, shift)")
    for flag in aliases:
        parser.add_argument(flag, dest="planner_overrides", type=types[FLAG_TYPES[flag]], action=PlannerAlias,
                            key=FLAGS[flag], default=None, metavar=FLAGS[flag].upper(),
                            help=f"deprecated: --planner.{FLAGS[flag]}")
    if isinstance(parser, OneLineParser):
        parser.planner_options = True


def add_planner_arguments(parser: argparse.ArgumentParser, *, preset: str | None = None,
                          choose: bool = True) -> None:
    """The planner options of a command that acts with a planning agent: ``--planner NAME`` (with ``choose``;
    default: the agent's own, its ``planner.json``), ``--planner-preset NAME`` (default ``preset``) to act with a
    preset's budget instead of ``planner.json``, and ``--planner.KEY VALUE`` overrides
    (:func:`add_planner_overrides`, with the deprecated flags ``--num-samples``, ...). :func:`acting_settings`
    turns them into the agent's settings."""
    from simdist.planning.base import planner_presets
    from simdist.planning.legacy import ACTING_FLAGS

    if choose:
        parser.add_argument("--planner", default=None,
                            help="planning agents: another registered planner to act with (mppi, policy, ...; "
                                 "default and agent: the one in its planner.json)")
    parser.add_argument("--planner-preset", default=preset, choices=sorted(planner_presets()),
                        help="act with this preset's budget instead of the agent's planner.json (paper: 450+22 "
                             "samples x 8 iterations; realtime: the 50 Hz CPU setting with temporal ensembling); "
                             "--planner.KEY replaces its values, the other settings are the task's preset "
                             "scaled to the budget")
    add_planner_overrides(parser, ACTING_FLAGS)


def add_mppi_arguments(parser: argparse.ArgumentParser, *, preset: str | None = None) -> None:
    """Deprecated name of :func:`add_planner_arguments` without ``--planner``."""
    warnings.warn("add_mppi_arguments is deprecated; use add_planner_arguments", FutureWarning, stacklevel=2)
    add_planner_arguments(parser, preset=preset, choose=False)


def check_planner_options(args: Any) -> None:
    """Check ``args``' planner options before any work: ``--planner NAME`` registered, each ``--planner.KEY`` a
    setting of the planner that will act (``--planner``'s, else the preset's, else some registered planner's)
    with a value its schema takes. InputError naming the option."""
    from simdist.planning.settings import check_overrides, planner_class, preset_of

    args.planner_overrides = dict(getattr(args, "planner_overrides", None) or {})
    vars(args).pop("planner_overrides_help", None)
    name = getattr(args, "planner", None)
    if name not in (None, "agent"):
        planner_class(name)
    elif getattr(args, "planner_preset", None) is not None and name is None:
        name = preset_of(args.planner_preset)[0]
    check_overrides(None if name == "agent" else name, args.planner_overrides)


def acting_settings(task: Any = None, *, planner: str | None = None, current: str | None = None,
                    preset: str | None = None, seed: int | None = None,
                    overrides: Mapping[str, Any] | None = None, **given: Any) -> dict[str, Any]:
    """The keywords of :meth:`~simdist.agents.Agent.with_settings` a planning agent acts with, from the planner
    options: ``overrides`` (and ``given``, the same as keywords; None values: not given), checked against the acting
    planner's schema (:func:`~simdist.planning.settings.check_overrides`):

    * by default (``planner`` None, ``"agent"`` or the agent's own, ``current``): the agent's ``planner.json`` with
      the overrides replacing single settings;
    * ``planner`` another registered planner: that planner with its defaults and the overrides;
    * ``preset`` a planner preset: its budget on ``task``'s planner preset (``Task.planner_preset``, without a
      task ``paper``), with the task's ``planner_defaults`` and the overrides, instead of ``planner.json``
      (:func:`~simdist.planning.settings.preset_acting`).

    ``seed`` reseeds the planner."""
    from simdist.planning.settings import check_overrides, preset_acting, preset_of

    merged = {k: v for k, v in {**given, **(overrides or {})}.items() if v is not None}
    if planner == "agent" and preset is not None:
        raise ValueError(f"--planner agent keeps the agent's planner.json; --planner-preset {preset} replaces it: "
                         "give one of them")
    if preset is not None:
        check_overrides(planner or preset_of(preset)[0], merged)
        base = task.planner_preset if task is not None else "paper"
        defaults = task.planner_defaults if task is not None else {}
        settings = preset_acting(preset, planner=planner, base=base, defaults=defaults, overrides=merged)
        return {**settings, "seed": seed}
    if planner in (None, "agent", current):
        check_overrides(current, merged)
        return {**merged, "seed": seed}
    check_overrides(planner, merged)
    return {"planner": planner, **merged, "seed": seed}


def planner_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The planner options of :func:`add_planner_arguments` in ``args`` as the keywords of
    :func:`simdist.agents.build_controller` (``planner``, ``preset``, ``overrides``)."""
    return {"planner": getattr(args, "planner", None), "preset": args.planner_preset,
            "overrides": dict(args.planner_overrides or {})}
