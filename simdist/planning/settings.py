"""A planner's settings as the core handles them: a registered planner's name and a mapping of overrides, checked
against the schema the planner declares. Nothing here names a setting of any planner.

The contract of a planner plug-in (docs/extending.md, "a planner"):

* ``config_class`` (needed for overrides): a :class:`~simdist.schema.Validated` dataclass, the only declaration
  of the planner's settings and their defaults (a ``planner.json``'s keys besides ``planner`` and
  ``temporal_ensemble``). Every override (``--planner.KEY VALUE``, ``AdaptConfig.planner_overrides``, a Python
  keyword) is checked against it before any work.
* ``presets`` (optional): ``{name: PlannerPreset(config_class(...), temporal_ensemble)}``; without it the planner
  has no named settings.
* ``config_class.at_budget(**overrides)`` (optional): the config with ``overrides``, the settings that follow a
  budget rescaled (MPPI: the policy samples and elites follow the sample count); without it, plain replacement.
  ``config_class.budget`` (optional): the settings a preset carries onto a task's own preset
  (``--planner-preset NAME``); without it a preset acts on its own.
* ``config_class.stated`` (optional): the settings a preset's ``planner.json`` form always states, besides those
  that differ from the defaults.

``temporal_ensemble`` is the one setting outside every planner: :func:`~simdist.planning.build_planner` wraps any
planner in a :class:`~simdist.planning.ensemble.TemporalEnsemble` with that decay.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simdist.errors import InputError

#: the settings :func:`~simdist.planning.build_planner` applies around any planner (not the planner's own)
WRAPPER_KEYS = ("temporal_ensemble",)

#: how the command line names one override (``--planner.KEY VALUE``)
OPTION = "--planner.{}"


@dataclass(frozen=True)
class PlannerPreset:
    """A planner's named settings: an instance of its ``config_class`` and the temporal-ensemble decay it acts
    with (None: off)."""

    config: Any
    temporal_ensemble: float | None = None

    def settings(self, planner: str) -> dict[str, Any]:
        """The complete :func:`~simdist.planning.build_planner` settings, as a ``planner.json`` holds them."""
        return {"planner": planner, **stated_settings(self.config), "temporal_ensemble": self.temporal_ensemble}


def stated_settings(config: Any) -> dict[str, Any]:
    """A config instance as ``planner.json`` keys: the settings its class always states (``stated``), then every
    other one that differs from its default."""
    stated = tuple(getattr(config, "stated", ()))
    out = {name: getattr(config, name) for name in stated}
    for f in dataclasses.fields(config):
        if f.name in out:
            continue
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        value = getattr(config, f.name)
        if value != default:
            out[f.name] = value
    return out


def planner_class(name: str, option: str = "--planner") -> Any:
    """The registered planner ``name``; an :class:`InputError` naming ``option`` and the known ones otherwise."""
    from simdist.registry import RegistryError, get, list_components

    try:
        return get("planner", name)
    except RegistryError:
        raise InputError(f"{option} {name}: not a registered planner (known: "
                         f"{', '.join(list_components('planner'))})") from None


def config_fields(cls: Any) -> dict[str, dataclasses.Field[Any]]:
    """The settings planner class ``cls`` declares (its ``config_class``'s fields), by name; {} without one."""
    config = getattr(cls, "config_class", None)
    return {f.name: f for f in dataclasses.fields(config)} if config is not None else {}


def check_wrapper(key: str, value: Any) -> None:
    """Refuse a bad value of a wrapper setting (``temporal_ensemble``: a decay in [0, 1) or null)."""
    ok = value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                           and 0 <= value < 1)
    if not ok:
        raise InputError(f"{OPTION.format(key)}: expected a decay in [0, 1) (or null), got {value!r}")


def check_overrides(planner: str | None, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``overrides`` checked key by key against planner ``planner``'s schema (its ``config_class``), or, with
    ``planner`` None (the agent's own, not known yet), against the schemas of the registered planners (a key some
    planner declares, with a value one of them takes). One :class:`InputError` naming ``--planner.KEY`` for an
    unknown key or a bad value; returns a copy."""
    from simdist.registry import list_components

    if not overrides:
        if planner is not None:
            planner_class(planner)
        return {}
    names = list_components("planner") if planner is None else [planner]
    schemas = [config_fields(planner_class(name)) for name in names]
    hints = [typing.get_type_hints(planner_class(name).config_class) if fields else {}
             for name, fields in zip(names, schemas)]
    where = "any registered planner" if planner is None else f"planner {planner!r}"
    for key, value in overrides.items():
        if key in WRAPPER_KEYS:
            check_wrapper(key, value)
            continue
        declaring = [(fields[key], hint[key]) for fields, hint in zip(schemas, hints) if key in fields]
        if not declaring:
            known = sorted({*WRAPPER_KEYS, *(name for fields in schemas for name in fields)})
            raise InputError(f"{OPTION.format(key)}: not a setting of {where} (settings: {', '.join(known)})")
        errors = [_value_error(key, value, hint, f.metadata) for f, hint in declaring]
        if all(errors):
            raise InputError(f"{OPTION.format(key)}: {errors[0]}")
    return dict(overrides)


def _value_error(key: str, value: Any, hint: Any, metadata: Mapping[str, Any]) -> str:
    """Why the schema refuses ``value`` for ``key`` ("" when it takes it)."""
    from simdist.schema import check_value

    try:
        check_value(key, value, hint, metadata)
    except ValueError as err:
        return str(err).split(": ", 1)[-1]
    return ""


def preset_of(name: str) -> tuple[str, PlannerPreset]:
    """Preset ``name`` of some registered planner: (the planner's name, the preset). KeyError for an unknown name."""
    from simdist.registry import get, list_components

    for planner in list_components("planner"):
        cls = get("planner", planner)
        preset = (getattr(cls, "presets", None) or {}).get(name)
        if isinstance(preset, Mapping):  # a plain settings mapping: read through the schema
            rest = {k: v for k, v in preset.items() if k not in ("planner", *WRAPPER_KEYS)}
            preset = PlannerPreset(cls.config_class.from_dict(rest), preset.get("temporal_ensemble"))
        if preset is not None:
            return planner, preset
    raise KeyError(name)


def adjusted(config: Any, overrides: Mapping[str, Any]) -> Any:
    """``config`` with ``overrides``, through its class's ``at_budget`` where it has one (the settings that follow
    a budget rescaled), else replaced."""
    at_budget = getattr(config, "at_budget", None)
    return at_budget(**overrides) if callable(at_budget) else dataclasses.replace(config, **overrides)


def preset_acting(preset: str, *, planner: str | None = None, base: str | None = None,
                  defaults: Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None
                  ) -> dict[str, Any]:
    """The :func:`~simdist.planning.build_planner` settings of acting with preset ``preset``'s budget: its planner
    (or ``planner``, when it shares the preset's schema; another planner gets only its own defaults, ``overrides``
    and the preset's decay); on ``base``'s settings (a task's own preset, ``Task.planner_preset``) where the
    schema names a ``budget`` (the settings a preset carries), else on the preset's own; then ``defaults`` (a
    task's ``planner_defaults``) and ``overrides``. ``temporal_ensemble``: the override's, else the preset's."""
    owner, named = preset_of(preset)
    overrides = dict(overrides or {})
    wrapper = {key: overrides.pop(key) for key in WRAPPER_KEYS if key in overrides}
    decay = wrapper.get("temporal_ensemble", named.temporal_ensemble)
    name = planner or owner
    cls = planner_class(name)
    if getattr(cls, "config_class", None) is not type(named.config):
        return {"planner": name, **overrides, "temporal_ensemble": decay}
    config, given = named.config, {**(defaults or {}), **overrides}
    budget = getattr(config, "budget", None)
    if budget is not None and base is not None:
        own = preset_of(base)[1].config
        if type(own) is type(config):
            config, given = own, {**{key: getattr(named.config, key) for key in budget}, **given}
    config = adjusted(config, given)
    explicit = {key: getattr(config, key) for key in {**(defaults or {}), **overrides}}
    return {"planner": name, **stated_settings(config), **explicit, "temporal_ensemble": decay}
