"""The planner flags and ``AdaptConfig`` fields that named planner settings before ``--planner.KEY VALUE``
(deprecated in 0.9, removed in the next release), in one table: each maps to an override of the same
``planner.json`` key. Also how adaptation runs recorded those settings, so that runs recorded before keep resuming.
This is the one module of the core that names settings of a particular planner (the paper's MPPI)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

#: deprecated flag -> the ``planner.json`` key it overrides (``--planner.KEY``); ``--samples`` was deprecated earlier
FLAGS: dict[str, str] = {"--num-samples": "num_samples", "--samples": "num_samples", "--iterations": "iterations",
                         "--init-std": "init_std", "--warm-start": "warm_start",
                         "--temporal-ensemble": "temporal_ensemble", "--score-chunk": "score_chunk"}
#: the flags of a command that acts with a planning agent (``--score-chunk`` is ``simdist bench``'s)
ACTING_FLAGS = ("--num-samples", "--samples", "--iterations", "--init-std", "--warm-start", "--temporal-ensemble")
#: the settings adaptation runs recorded by name (``AdaptConfig`` fields before ``planner_overrides``)
RECORDED = ("num_samples", "iterations", "init_std", "warm_start", "temporal_ensemble")
#: what a preset run recorded always (the preset's values unless given), the others only where they differ
ALWAYS_RECORDED = ("num_samples", "iterations")
#: old ``AdaptConfig`` field -> override key
FIELDS: dict[str, str] = {**{key: key for key in RECORDED}, "samples": "num_samples"}


#: each deprecated flag's value type, as it had it (values checked as before): a type of :mod:`simdist.arguments`
FLAG_TYPES: dict[str, str] = {"--num-samples": "positive_int", "--samples": "positive_int",
                              "--iterations": "positive_int", "--init-std": "positive_float", "--warm-start": "str",
                              "--temporal-ensemble": "decay", "--score-chunk": "positive_int"}


def warn(old: str, key: str, prog: str) -> None:
    warnings.warn(f"{prog}: {old} is deprecated; use --planner.{key}", FutureWarning, stacklevel=3)


def dotted_argv(argv: Sequence[str], prog: str) -> list[str]:
    """``argv`` with each deprecated flag (dashes or underscores, ``=`` or not) spelt ``--planner.KEY``, warning
    once per flag (for parsers that cannot declare the aliases, such as ``simdist adapt``'s)."""
    spellings = {spelling: FLAGS[flag] for flag in ACTING_FLAGS
                 for spelling in (flag, "--" + flag[2:].replace("-", "_"))}
    out = []
    for arg in argv:
        flag, eq, value = arg.partition("=")
        if flag in spellings:
            warn(flag, spellings[flag], prog)
            out.append(f"--planner.{spellings[flag]}{eq}{value}")
        else:
            out.append(arg)
    return out


def from_fields(given: Mapping[str, Any], prog: str = "AdaptConfig") -> dict[str, Any]:
    """The overrides the old ``AdaptConfig`` fields in ``given`` set (None: not given), warning for each."""
    out: dict[str, Any] = {}
    for name, key in FIELDS.items():
        if given.get(name) is not None:
            warnings.warn(f"{prog}: {name} is deprecated; use planner_overrides={{{key!r}: ...}}", FutureWarning,
                          stacklevel=4)
            out.setdefault(key, given[name])
    return out


def recorded_budget(preset: str, base: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The budget a ``--planner-preset`` run recorded (:data:`RECORDED`): each value of ``given`` that is not None,
    else the preset's (:data:`ALWAYS_RECORDED` always; the others where the preset differs from the task's own
    preset ``base``, else None)."""
    from simdist.planning.base import planner_preset

    named, own = planner_preset(preset), planner_preset(base)
    budget = {}
    for key in RECORDED:
        value = given.get(key)
        if value is None and (key in ALWAYS_RECORDED or named.get(key) != own.get(key)):
            value = named.get(key)
        budget[key] = value
    return budget


def recorded_settings(config: dict[str, Any], task_preset: str) -> dict[str, Any]:
    """An adaptation run's recorded config (``asdict(AdaptConfig)`` less its defaults) in the form runs recorded
    it before ``planner_overrides``: the overrides of :data:`RECORDED` under their own names (None: not given), with
    a preset their budget (``samples`` for ``num_samples``); any other override, and a ``planner``, as given."""
    config = dict(config)
    overrides = dict(config.pop("planner_overrides", None) or {})
    if config.get("planner") is None:
        config.pop("planner", None)
    old = {key: overrides.pop(key, None) for key in RECORDED}
    if config.get("planner_preset") is not None:
        budget = recorded_budget(config.pop("planner_preset"), task_preset, old)
        old = {("samples" if key == "num_samples" else key): value for key, value in budget.items()}
    config |= old
    if overrides:
        config["planner_overrides"] = overrides
    return config
