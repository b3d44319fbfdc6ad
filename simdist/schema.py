"""Declared settings: a dataclass is the schema of a settings file, its field metadata the ranges.

    @dataclass
    class Settings(Validated):
        horizon: int = field(default=25, metadata=bounds(ge=1))
        temperature: float = field(default=0.25, metadata=bounds(gt=0))
        mode: str = field(default="fast", metadata=bounds(choices=("fast", "exact")))

``Settings.from_dict(data)`` refuses unknown keys; every field is checked against its type (an ``int`` field takes
integers only: 1.5 and true are refused, not rounded; a ``float`` field takes finite numbers; ``X | None`` also
takes null) and its bounds. Errors are :class:`SettingError` (a ``ValueError`` with the ``key``), which
:func:`simdist.model.config.config_file` prefixes with the file it came from.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import operator
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, Union

from simdist.errors import InputError


class SettingError(InputError):
    """A setting outside its declared type or range; its message starts with ``key 'NAME':`` (``setting``)."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(f"key {setting!r}: {message}")
        self.setting = setting


def bounds(*, ge: float | None = None, gt: float | None = None, le: float | None = None, lt: float | None = None,
           choices: tuple[Any, ...] | None = None) -> dict[str, Any]:
    """Field metadata: the value's range (``ge`` >=, ``gt`` >, ``le`` <=, ``lt`` <) or its allowed ``choices``."""
    return {k: v for k, v in (("ge", ge), ("gt", gt), ("le", le), ("lt", lt), ("choices", choices)) if v is not None}


def _range_text(meta: Mapping[str, Any]) -> str:
    parts = [f"{sym} {meta[k]:g}" for k, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")) if k in meta]
    return " and ".join(parts)


def _kinds(hint: Any) -> tuple[list[Any], bool]:
    """The alternatives of a type hint and whether None is one of them."""
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        args = list(typing.get_args(hint))
    else:
        args = [hint]
    return [a for a in args if a is not type(None)], type(None) in args


def _matches(value: Any, kind: Any) -> bool:
    origin = typing.get_origin(kind) or kind
    if kind is Any:
        return True
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if origin is Literal:
        return value in typing.get_args(kind)
    if origin in (list, tuple):
        return isinstance(value, (list, tuple))
    if origin is dict:
        return isinstance(value, Mapping)
    return isinstance(value, origin) if isinstance(origin, type) else True


def _expected(kinds: list[Any], optional: bool, meta: Mapping[str, Any]) -> str:
    names = {bool: "true or false", int: "an integer", float: "a finite number", str: "a string"}
    words = [names.get(k, getattr(k, "__name__", str(k))) for k in kinds]
    text = " or ".join(words)
    if "choices" in meta:
        text = "one of " + ", ".join(repr(c) for c in meta["choices"])
    elif _range_text(meta):
        text += " " + _range_text(meta)
    return text + (" (or null)" if optional else "")


def check_value(key: str, value: Any, hint: Any, meta: Mapping[str, Any]) -> None:
    """Raise :class:`SettingError` unless ``value`` has the type ``hint`` and lies within ``meta``'s bounds."""
    kinds, optional = _kinds(hint)
    if value is None and optional:
        return
    ok = any(_matches(value, k) for k in kinds)
    if ok and "choices" in meta:
        ok = value in meta["choices"]
    if ok and isinstance(value, numbers.Real) and not isinstance(value, bool):
        ok = all(op(value, meta[k]) for k, op in (("ge", operator.ge), ("gt", operator.gt), ("le", operator.le),
                                                   ("lt", operator.lt)) if k in meta and _number_kind(kinds))
    if not ok:
        raise SettingError(key, f"expected {_expected(kinds, optional, meta)}, got {value!r}")


def _number_kind(kinds: list[Any]) -> bool:
    return any(k in (int, float) for k in kinds)


class Validated:
    """Mix-in for a settings dataclass: its fields are checked on construction (:meth:`validate`) and
    :meth:`from_dict` builds it from a file's mapping, refusing unknown keys."""

    #: keys accepted by :meth:`from_dict` besides the fields (read by the caller)
    extra_keys: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            check_value(f.name, getattr(self, f.name), hints[f.name], f.metadata)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Any:
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        unknown = sorted(set(data) - set(names) - set(cls.extra_keys))
        if unknown:
            raise SettingError(unknown[0], f"unknown setting; known: {', '.join(names)}")
        return cls(**{k: v for k, v in data.items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]
