"""Bad inputs drawn from the definitions themselves (Hypothesis): the argparse parser of every ``simdist`` tool
command, its subcommands' parsers, :class:`~simdist.workflows.adaptation.AdaptConfig`'s fields and bounds, and the
reality-profile schemas of the tasks.

* Options: every option whose declared type has a domain (:func:`domain`: ``positive_int``, ``int_range(1, N)``,
  ``unit_interval``, comma lists, ...) or choices gets values outside it (below, above, ill-typed text, NaN,
  infinities, an unknown choice). An option with a type this module does not know fails the test (:data:`OPAQUE`
  lists the types that take any text), so a new option joins without an edit here. The command must refuse at
  parse time: its ``parse_args`` returning is the work (``simdist adapt`` checks its fields after parsing: its work
  is :data:`input_matrix.WORK`'s trap).
* Profile files: a YAML mapping with one key of a task's schema set outside its declared range or type, an unknown
  key, or not a mapping.

The contract each input must meet: exit status 2, one line naming the option (or the file and the key), no
traceback, and no file of the working folder changed.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import input_matrix as im
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdist import arguments as a

#: command (with its subcommand) → a command line that reaches the parser (placeholders as input_matrix's)
COMMANDS: dict[str, list[str]] = {
    **{name: argv for name, argv in im.COMMANDS.items() if name != "export"},
    "bench": ["--sections", "mppi"],
    "train-expert": ["--task", "go2", "--out", "{work}/expert"],
    "value-rank collect": ["--task", "toy-reach", "--agent", "{model}", "--profile", "real", "--out",
                           "{work}/set.safetensors"],
    "value-rank fit": ["--agent", "{model}", "--data", "{work}/set.safetensors", "--out", "{work}/ranked"],
    "value-rank score": ["--model", "m={model}", "--data", "{work}/set.safetensors"],
    "convert": ["official", "--checkpoint", "{work}/no-such-run", "--out", "{work}/converted"],
    "zoo": ["list"],
}
#: tool commands without an option of a declared domain (their arguments are names, checked with one-line errors)
UNTYPED = ("tasks", "components", "export")
#: the draws are the same on every run (a failure is reproduced by rerunning), nothing is stored
SETTINGS = settings(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
#: argument types that take any text (a name, a path, a spec parsed later with its own one-line errors)
OPAQUE: tuple[Any, ...] = (None, str)
#: (command, destination) of options whose type takes free text by design, checked after parsing
FREE_TEXT = {("demo", "option")}


@dataclass(frozen=True)
class Domain:
    """What a number option accepts: ``kind`` int or float, within ``[low, high]`` (an open end: ``open_low``,
    ``open_high``); ``items``: a comma list of such numbers."""

    kind: type
    low: float = -math.inf
    high: float = math.inf
    open_low: bool = False
    open_high: bool = False
    items: bool = False


def domain(kind: Any) -> Domain | None:
    """The domain a declared argparse type accepts (None: not a number type)."""
    limit = a.INT_LIMIT
    known: dict[Any, Domain] = {
        int: Domain(int), float: Domain(float),
        a.positive_int: Domain(int, 1, limit), a.nonnegative_int: Domain(int, 0, limit),
        a.positive_float: Domain(float, 0.0, open_low=True), a.nonnegative_float: Domain(float, 0.0),
        a.unit_interval: Domain(float, 0.0, 1.0), a.decay: Domain(float, 0.0, 1.0, open_high=True),
    }
    if isinstance(kind, a.IntRange):
        return Domain(int, kind.low, kind.high)
    if isinstance(kind, a.IntList):
        return Domain(int, kind.low, kind.high, items=True)
    if isinstance(kind, a.FloatRange):
        return Domain(float, kind.low, kind.high, open_low=not kind.closed)
    try:
        return known.get(kind)
    except TypeError:  # unhashable
        return None


# ------------------------------------------------------------------------------------------------ strategies
_WORDS = st.text(st.sampled_from("abcxyz_.,:/ -+eE"), min_size=1, max_size=8)
_NON_FINITE = st.sampled_from(["nan", "inf", "-inf", "NaN", "infinity", "1e400", "-1e400"])


def _int_text(text: str) -> bool:
    return re.fullmatch(r"\s*[+-]?\d+\s*", text) is not None


def _float_text(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def bad_numbers(d: Domain) -> st.SearchStrategy[str]:
    """Text outside domain ``d``: below or above it, not a number of its kind, not finite."""
    outside: list[st.SearchStrategy[str]] = []
    if d.kind is int:
        if d.low > -math.inf:
            outside.append(st.integers(max_value=int(d.low) - 1).map(str))
        if d.high < math.inf:
            outside.append(st.integers(min_value=int(d.high) + 1).map(str))
        if d.low == -math.inf and d.high == math.inf:  # any integer: only ill-typed values are bad
            outside.append(st.integers(min_value=2**31).map(str))
        fractional = st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != int(x)).map(repr)
        outside += [fractional, _NON_FINITE, _WORDS.filter(lambda t: not _int_text(t))]
    else:
        finite = {"allow_nan": False, "allow_infinity": False}
        if d.low > -math.inf:
            below = st.floats(max_value=d.low, exclude_max=not d.open_low, **finite)
            outside.append(below.map(repr))
        if d.high < math.inf:
            above = st.floats(min_value=d.high, exclude_min=not d.open_high, **finite)
            outside.append(above.map(repr))
        outside += [_NON_FINITE, _WORDS.filter(lambda t: not _float_text(t))]
    values = st.one_of(*outside)
    if d.items:  # one bad item among good ones, or an empty item
        good = st.integers(int(max(d.low, 1)), int(min(d.high, 64))).map(str)
        values = st.one_of(
            st.tuples(st.lists(good, max_size=2), values, st.lists(good, max_size=2)).map(
                lambda t: ",".join([*t[0], t[1], *t[2]])),
            st.lists(good, min_size=1, max_size=2).map(lambda xs: ",".join(xs) + ","))
    return values


def bad_choices(choices: Any) -> st.SearchStrategy[str]:
    names = {str(c) for c in choices}
    return _WORDS.filter(lambda t: t not in names and t.strip() not in names)


def bad_value(action: argparse.Action) -> st.SearchStrategy[str] | None:
    """The bad values of ``action`` by its declaration (None: it takes any text)."""
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return bad_choices(action.choices)
    d = domain(action.type)
    if d is not None:
        return bad_numbers(d)
    return None


# ------------------------------------------------------------------------------------------------ parsers
class _Captured(BaseException):  # noqa: N818 (a signal)
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


class Parsed(im.WorkStarted):
    """Raised when a parser accepted its command line: the point where the work would start."""


def split(command: str) -> tuple[str, list[str]]:
    """``"value-rank fit"`` → ``("value-rank", ["fit"])``."""
    head, *rest = command.split()
    return head, rest


def capture_parser(command: str, values: dict[str, str]) -> argparse.ArgumentParser:
    """The (sub)parser ``simdist COMMAND`` builds for its command line."""
    import jsonargparse

    from simdist.cli import main

    def grab(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise _Captured(self)

    head, sub = split(command)
    with im._patched(argparse.ArgumentParser, "parse_args", grab), \
            im._patched(jsonargparse.ArgumentParser, "parse_args", grab):
        try:
            main([head, *sub, *im.fill(COMMANDS[command], values)])
        except _Captured as got:
            parser = got.parser
        else:
            raise AssertionError(f"simdist {command} built no parser")
    return parser


@dataclass(frozen=True)
class Target:
    """One option of one command and its bad values."""

    command: str
    flag: str
    dest: str
    values: st.SearchStrategy[str]


def targets(command: str, parser: argparse.ArgumentParser) -> list[Target]:
    """Every option of ``parser`` with a declared domain; AssertionError for one of a type not known here."""
    out = []
    hints = adapt_hints() if command == "adapt" else {}
    for action in parser._actions:
        flags = [o for o in action.option_strings if o.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            out.append(Target(command, "", action.dest, bad_choices(action.choices)))
            continue
        if action.nargs == 0 or isinstance(action, argparse._HelpAction):
            continue
        if not flags:  # a positional: only its choices are declared
            if action.choices is not None:
                out.append(Target(command, "", action.dest, bad_choices(action.choices)))
            continue
        values = hints[action.dest] if action.dest in hints else bad_value(action)
        if values is None:
            kind = action.type
            assert kind in OPAQUE or (command, action.dest) in FREE_TEXT or command == "adapt", \
                f"simdist {command} {flags[0]}: type {kind!r} has no known domain (add it to generated_inputs.domain)"
            continue
        out.append(Target(command, flags[0], action.dest, values))
    return out


def adapt_hints() -> dict[str, st.SearchStrategy[str]]:
    """Bad values of ``simdist adapt``'s AdaptConfig fields, from their declared types and bounds."""
    from simdist.resources import MAX_SCHEDULE_MINUTES, MAX_STAGES
    from simdist.workflows.adaptation import AdaptConfig

    hints = im.adapt_hints()
    out: dict[str, st.SearchStrategy[str]] = {}
    for name, hint in hints.items():
        args = [x for x in typing.get_args(hint) if x is not type(None)] or [hint]
        if args == [int]:
            low, high = AdaptConfig.int_bounds(name)
            out[name] = bad_numbers(Domain(int, low, high))
    many = st.integers(MAX_STAGES + 1, MAX_STAGES + 20).map(lambda n: ",".join(str(i) for i in range(n)))
    late = st.floats(MAX_SCHEDULE_MINUTES, 1e300, exclude_min=True).map(lambda x: f"0,{x!r}")
    shuffled = st.lists(st.integers(0, 50), min_size=2, max_size=5).filter(
        lambda xs: xs[0] != 0 or any(b <= c for c, b in zip(xs, xs[1:]))).map(lambda xs: ",".join(map(str, xs)))
    out["schedule"] = st.one_of(many, late, shuffled, st.sampled_from(["0,nan", "0,inf", "-1,2", "0,1e9"]))
    return out


def bounded_options(values: dict[str, str]) -> list[dict[str, Any]]:
    """Every count option with an upper limit below the integer limit (AdaptConfig's fields too), its range and
    whether its help (``simdist adapt``: the AdaptConfig docstring ``--help`` shows) states the limit."""
    from simdist.workflows.adaptation import INT_LIMITS, AdaptConfig
    from simdist.workflows.loop_parts import CollectionConfig, EvaluationConfig

    rows = []
    for command in COMMANDS:
        for action in capture_parser(command, values)._actions:
            d = domain(action.type)
            if d is None or not action.option_strings or d.high >= a.INT_LIMIT or d.kind is not int and \
                    not isinstance(action.type, a.FloatRange):
                continue
            high = f"{d.high:g}" if d.kind is float else str(int(d.high))
            rows.append({"command": command, "option": action.option_strings[0],
                         "range": f"{'(' if d.open_low else '['}{d.low:g}, {high}]",
                         "help_states_it": high in (action.help or "")})
    for name in INT_LIMITS:
        low, high = AdaptConfig.int_bounds(name)
        part, _, key = name.rpartition(".")
        owner = {"evaluation": EvaluationConfig, "collection": CollectionConfig}.get(part, AdaptConfig)  # its --help
        doc = (owner.__doc__ or "").split(f"{key}:", 1)[-1].split(":", 1)[0]
        rows.append({"command": "adapt", "option": f"--{name}", "range": f"[{low}, {high}]",
                     "help_states_it": str(high) in doc})
    return rows


# ------------------------------------------------------------------------------------------------ running
@contextlib.contextmanager
def parse_trap() -> Iterator[None]:
    """A parser that accepts its command line raises :class:`Parsed` (the work would start after it)."""
    real = argparse.ArgumentParser.parse_args

    def trapped(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        real(self, *args, **kwargs)
        raise Parsed(self.prog)

    with im._patched(argparse.ArgumentParser, "parse_args", trapped):
        yield


def run(command: str, argv: list[str]) -> tuple[int | str, str]:
    """``simdist COMMAND ARGV`` in this process: (exit status, or "work" where it went past the refusal point,
    output). ``adapt``: input_matrix's work trap; the others: :func:`parse_trap`."""
    if command == "adapt":
        return im.run(command, argv)
    head, sub = split(command)
    with parse_trap():
        return im.call([head, *sub, *argv])


def with_option(argv: list[str], target: Target, value: str) -> list[str]:
    """``argv`` with ``target`` set to ``value`` (``--flag=value``, so a value that starts with - stays one)."""
    if not target.flag:  # a positional: the first word
        return [value, *argv[1:]]
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == target.flag:
            skip = True
            continue
        out.append(arg)
    return [*out, f"{target.flag}={value}"]


def attempt(command: str, target: Target, base: list[str], root: Path, value: str) -> dict[str, Any]:
    """Run ``simdist COMMAND`` with ``target`` set to ``value``: what happened, ``problems`` empty when it was
    refused as it should be (``root``: the folder no file of which may change)."""
    before = im.digest(root)
    code, output = run(command, with_option(base, target, value))
    problems = im.contract(code, output, option_names(target, value))
    if im.digest(root) != before:
        problems.append("changed a file")
    lines = [ln for ln in output.splitlines() if ln.strip()]
    return {"command": command, "option": target.flag or target.dest, "value": value, "code": code,
            "message": lines[-1] if lines else "", "output": output, "problems": problems}


def draw(values: st.SearchStrategy[Any], examples: int) -> list[Any]:
    """``examples`` values of a strategy, the same on every run."""
    drawn: list[Any] = []

    @settings(SETTINGS, max_examples=examples)
    @given(values)
    def collect(value: Any) -> None:
        drawn.append(value)

    collect()
    return drawn


def explore(values: dict[str, str], root: Path, examples: int) -> list[dict[str, Any]]:
    """Every command's options, ``examples`` bad values each: the attempts (the documentation's table)."""
    results = []
    for command in COMMANDS:
        base = im.fill(COMMANDS[command], values)
        for target in targets(command, capture_parser(command, values)):
            results += [attempt(command, target, base, root, v) for v in draw(target.values, examples)]
    return results


def option_names(target: Target, value: str) -> list[str]:
    return [target.flag, target.dest, target.dest.replace("_", "-"), value.strip()] if target.flag else \
        [value.strip(), target.dest]


# ------------------------------------------------------------------------------------------------ profiles
#: task → a command line that loads ``{profile}`` (its work trapped) and the command
PROFILE_COMMANDS: dict[str, tuple[str, list[str]]] = {
    "toy-reach": ("evaluate", ["--task", "toy-reach", "--agent", "expert", "--trials", "1", "--profile", "{profile}"]),
}


def profile_corruptions(task: str) -> st.SearchStrategy[tuple[str, dict[str, Any] | str]]:
    """(key named in the error, the YAML document) of a profile of ``task`` with one key outside its schema."""
    from simdist.profiles import Range
    from simdist.tasks import task_class

    schema = task_class(task).profile_schema()
    assert schema is not None
    options: list[st.SearchStrategy[tuple[str, dict[str, Any] | str]]] = []
    for key in schema.keys:
        if key.type in ("float", "int") and key.range is not None:
            r = Range.parse(key.range)
            d = Domain(float if key.type == "float" else int, r.low, r.high, not r.low_closed, not r.high_closed)
            bad = bad_numbers(d).map(_yaml_scalar)
            options.append(bad.map(lambda v, k=key.name: (k, {k: v})))
        if key.type in ("float", "int", "bool"):
            options.append(st.sampled_from(["fast", "[1, 2]", "{a: 1}"]).map(lambda v, k=key.name: (k, {k: v})))
        if key.choices is not None:
            options.append(bad_choices(key.choices).map(lambda v, k=key.name: (k, {k: v})))
    unknown = st.text(st.sampled_from("abcdefghij_"), min_size=3, max_size=10).filter(
        lambda k: k not in schema.names)
    options.append(unknown.map(lambda k: (k, {k: 1})))
    return st.one_of(*options)


def _yaml_scalar(text: str) -> Any:
    """A drawn bad value as the YAML scalar a user would write (numbers stay numbers)."""
    import yaml

    try:
        return yaml.safe_load(text) if text.strip() else text
    except yaml.YAMLError:
        return text


def write_profile(folder: Path, document: dict[str, Any] | str, index: int) -> Path:
    import yaml

    path = folder / f"profile-{index}.yaml"
    path.write_text(document if isinstance(document, str) else yaml.safe_dump(document))
    return path

