"""Reality profiles, for any task: a task declares its keys once and every profile is checked against them.

A task's :class:`ProfileSchema` lists its :class:`ProfileKey` s (type, accepted range or choices, unit, doc,
default = the training simulator's value). :func:`load_profile_data` reads a profile from a built-in name
(``<builtin_dir>/<name>.yaml``), a YAML path or a mapping, layers it over the defaults and type- and
range-checks every key; an error names the file, the key, the value and what is accepted, e.g.
``slippery.yaml: friction = -0.2 is out of range (0, 5]``. Unknown keys are refused with the known keys listed.

Every schema has the keys ``name`` (default: the file's stem) and ``description``. A profile may start
from another one with ``base: OTHER`` (a built-in name or a path, relative to the file's folder): the base's
keys apply first, then the file's own (a list or a nested mapping replaces the base's whole); ``name`` and
``description`` are never inherited.

Key types: ``float``, ``int``, ``bool``, ``str``, ``list[float]``, ``list[int]``, and ``list[mapping]`` (a
list of nested mappings with their own schema, e.g. surface patches); ranges are interval strings such as
``"(0, 5]"`` or ``"[0, inf)"``.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simdist.errors import InputError

__all__ = ["MISSING", "ProfileError", "ProfileKey", "ProfileSchema", "Range", "builtin_names",
           "load_profile_data", "profile_table"]

TYPES = ("float", "int", "bool", "str", "list[float]", "list[int]", "list[mapping]")
#: keys every schema has (added when a schema does not declare them)
META_KEYS = ("name", "description")
#: the key that layers a profile over another one
BASE_KEY = "base"
_META_DOCS = {"name": "the profile's name (default: the file's stem)", "description": "one line on what it models"}


class ProfileError(InputError):
    """A reality profile cannot be loaded: the message names the file, the key, the value and what is accepted."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: default of a key that a profile must give (nested mappings' required keys)
MISSING: Any = _Missing()

_RANGE = re.compile(r"^\s*([\[(])\s*([^,\s]+)\s*,\s*([^\])\s]+)\s*([\])])\s*$")


@dataclass(frozen=True)
class Range:
    """A numeric interval; ``str`` gives it back in the notation it was parsed from, e.g. ``(0, 5]``."""

    low: float
    high: float
    low_closed: bool = True
    high_closed: bool = True

    @classmethod
    def parse(cls, text: str) -> Range:
        m = _RANGE.match(text)
        if m is None:
            raise ValueError(f"bad range {text!r}; write e.g. '(0, 5]' or '[0, inf)'")
        low, high = float(m.group(2)), float(m.group(3))
        if not low <= high:
            raise ValueError(f"bad range {text!r}: low > high")
        return cls(low, high, m.group(1) == "[", m.group(4) == "]")

    def __contains__(self, value: float) -> bool:
        above = value >= self.low if self.low_closed else value > self.low
        below = value <= self.high if self.high_closed else value < self.high
        return bool(above and below)

    def __str__(self) -> str:
        return (f"{'[' if self.low_closed else '('}{_num(self.low)}, {_num(self.high)}"
                f"{']' if self.high_closed else ')'}")


def _num(v: float) -> str:
    return "inf" if v == math.inf else "-inf" if v == -math.inf else f"{v:g}"


@dataclass(frozen=True)
class ProfileKey:
    """One profile key.

    Args:
        name: the key as written in YAML.
        type: one of :data:`TYPES`.
        default: the training simulator's value (:data:`MISSING`: the profile must give it).
        doc: one line on what it does.
        unit: physical unit (``m``, ``kg``, ``rad``, ``-``), shown in the key table.
        range: accepted interval of a number, or of every element of a numeric list.
        ranges: per-position intervals of a fixed-length numeric list (overrides ``range``).
        choices: accepted values of a ``str`` key.
        length: exact length of a list; ``min_length``: its minimum length.
        increasing: a numeric list's values must increase strictly (e.g. an ``[x0, x1]`` span).
        nullable: ``null`` (None) is accepted, meaning what ``doc`` says.
        schema: the schema of each element of a ``list[mapping]`` key.
    """

    name: str
    type: str
    default: Any = MISSING
    doc: str = ""
    unit: str = ""
    range: str | None = None
    ranges: tuple[str, ...] | None = None
    choices: tuple[Any, ...] | None = None
    length: int | None = None
    min_length: int = 0
    increasing: bool = False
    nullable: bool = False
    schema: ProfileSchema | None = None

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"profile key {self.name!r}: type must be one of {TYPES}, got {self.type!r}")
        if (self.type == "list[mapping]") != (self.schema is not None):
            raise ValueError(f"profile key {self.name!r}: a schema goes with (and only with) type list[mapping]")
        if self.ranges is not None and len(self.ranges) != self.length:
            raise ValueError(f"profile key {self.name!r}: ranges needs length = {len(self.ranges)}")
        for text in (self.range, *(self.ranges or ())):
            if text is not None:
                Range.parse(text)

    @property
    def required(self) -> bool:
        return self.default is MISSING

    def element_range(self, i: int | None) -> Range | None:
        text = self.ranges[i] if (self.ranges is not None and i is not None) else self.range
        return Range.parse(text) if text is not None else None

    def accepted(self) -> str:
        """What the key accepts, in words (for errors and the key table)."""
        parts: list[str] = []
        if self.choices is not None:
            parts.append("one of " + ", ".join(str(c) for c in self.choices))
        elif self.type.startswith("list["):
            if self.length is not None:
                parts.append(f"{self.length} values")
            elif self.min_length:
                parts.append(f"at least {self.min_length} value{'s' if self.min_length > 1 else ''}")
            if self.schema is not None:
                parts.append("mappings with the keys below")
            if self.ranges is not None:
                parts.append("in " + " x ".join(str(Range.parse(r)) for r in self.ranges))
            elif self.range is not None:
                parts.append(f"each in {self.element_range(None)}")
            if self.increasing:
                parts.append("increasing")
        elif self.range is not None:
            parts.append(str(self.element_range(None)))
        if self.nullable:
            parts.append("or null")
        return ", ".join(parts) or "any"


@dataclass(frozen=True)
class ProfileSchema:
    """A task's profile keys; ``checks`` see the whole checked profile and return error messages (cross-key
    rules such as "patches must not overlap"); ``factory`` (e.g. a dataclass) builds the task's profile
    object from the checked mapping (:meth:`build`)."""

    keys: tuple[ProfileKey, ...]
    checks: tuple[Callable[[dict[str, Any]], list[str]], ...] = ()
    factory: Callable[..., Any] | None = None
    nested: bool = False  # the element schema of a list[mapping] key: no meta keys

    def __post_init__(self) -> None:
        names = [k.name for k in self.keys]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate profile keys in {names}")
        if not self.nested:
            meta = [ProfileKey(n, "str", "custom" if n == "name" else "", _META_DOCS[n])
                    for n in META_KEYS if n not in names]
            object.__setattr__(self, "keys", (*meta, *self.keys))
        if BASE_KEY in names and not self.nested:
            raise ValueError(f"{BASE_KEY!r} is reserved for layering profiles")

    @classmethod
    def from_dataclass(cls, dc: type, keys: Sequence[ProfileKey],
                       checks: Sequence[Callable[[dict[str, Any]], list[str]]] = ()) -> ProfileSchema:
        """A schema whose defaults are ``dc``'s field defaults; its keys must be exactly ``dc``'s fields."""
        fields = {f.name: f for f in dataclasses.fields(dc)}
        declared = {k.name for k in keys}
        meta = [ProfileKey(n, "str", doc=_META_DOCS[n]) for n in META_KEYS if n in fields and n not in declared]
        filled = []
        for k in (*meta, *keys):
            if k.name not in fields:
                raise ValueError(f"profile key {k.name!r} is not a field of {dc.__name__}")
            f = fields[k.name]
            default = (f.default_factory() if f.default_factory is not dataclasses.MISSING
                       else f.default if f.default is not dataclasses.MISSING else MISSING)
            filled.append(dataclasses.replace(k, default=default))
        schema = cls(tuple(filled), tuple(checks), factory=dc)
        if set(fields) != set(schema.names):
            raise ValueError(f"{dc.__name__}'s fields and its profile keys differ: "
                             f"{', '.join(sorted(set(fields) ^ set(schema.names)))}")
        return schema

    @property
    def names(self) -> list[str]:
        return [k.name for k in self.keys]

    def __getitem__(self, name: str) -> ProfileKey:
        for k in self.keys:
            if k.name == name:
                return k
        raise KeyError(name)

    def defaults(self) -> dict[str, Any]:
        """The simulator's values of the keys that have one (deep copies)."""
        return {k.name: copy.deepcopy(k.default) for k in self.keys if not k.required}

    def validate(self, data: Mapping[str, Any], source: str = "<dict>") -> dict[str, Any]:
        """``data`` over the defaults, checked and normalised (ints of float keys become floats, lists are
        copied); raises :class:`ProfileError` listing every problem, each prefixed with ``source``."""
        errors: list[str] = []
        out = self._validate(data, "", errors)
        if not errors:
            for check in self.checks:
                errors.extend(check(out))
        if errors:
            raise ProfileError("\n".join(f"{source}: {e}" for e in errors))
        return out

    def build(self, data: Mapping[str, Any]) -> Any:
        """The task's profile object from a checked mapping (the mapping itself without a factory)."""
        return self.factory(**data) if self.factory is not None else dict(data)

    def table(self) -> str:
        """The keys as a Markdown table (key, type, accepted, default, unit, meaning); nested keys indented."""
        rows = ["| key | type | accepted | default | unit | meaning |", "|---|---|---|---|---|---|"]
        self._rows(rows, "")
        return "\n".join(rows)

    # -- internals ---------------------------------------------------------------------------------
    def _rows(self, rows: list[str], prefix: str) -> None:
        for k in self.keys:
            default = "required" if k.required else f"`{_yaml_value(k.default)}`"
            rows.append(f"| `{prefix}{k.name}` | {k.type} | {k.accepted()} | {default} | {k.unit or ''} | "
                        f"{k.doc} |")
            if k.schema is not None:
                k.schema._rows(rows, f"{prefix}{k.name}[].")

    def _validate(self, data: Mapping[str, Any], prefix: str, errors: list[str]) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            errors.append(f"{prefix.rstrip('.') or 'the profile'} must be a mapping, got {_show(data)}")
            return {}
        known = self.names
        for key in data:
            if key not in known:
                where = f"{prefix.rstrip('.')}: " if prefix else ""
                errors.append(f"{where}unknown key {key!r}; known keys: {', '.join(known)}")
        out = self.defaults()
        for k in self.keys:
            if k.name in data:
                out[k.name] = _check_value(k, data[k.name], prefix + k.name, errors)
            elif k.required:
                errors.append(f"{prefix}{k.name} is required ({k.type}, {k.accepted()})")
        return out


def _yaml_value(v: Any) -> str:
    return yaml.safe_dump(v, default_flow_style=True, width=10_000).strip().removesuffix("...").strip() \
        .replace("|", "\\|")


def _show(v: Any) -> str:
    return repr(v) if isinstance(v, str) else _yaml_value(v)


def _check_value(k: ProfileKey, v: Any, path: str, errors: list[str]) -> Any:
    if v is None:
        if not k.nullable:
            errors.append(f"{path} = null is not accepted ({k.type}, {k.accepted()})")
        return None
    if k.type == "str":
        if not isinstance(v, str):
            errors.append(f"{path} = {_show(v)} is not a string")
        elif k.choices is not None and v not in k.choices:
            errors.append(f"{path} = {v!r} is not one of {', '.join(str(c) for c in k.choices)}")
        return v
    if k.type == "bool":
        if not isinstance(v, bool):
            errors.append(f"{path} = {_show(v)} is not true or false")
        return v
    if k.type in ("float", "int"):
        return _check_number(k, v, path, k.type, k.element_range(None), errors)
    # lists
    if not isinstance(v, (list, tuple)):
        errors.append(f"{path} = {_show(v)} is not a list ({k.accepted()})")
        return v
    if k.length is not None and len(v) != k.length:
        errors.append(f"{path} = {_show(list(v))} needs {k.length} values, got {len(v)}")
        return list(v)
    if len(v) < k.min_length:
        errors.append(f"{path} = {_show(list(v))} needs at least {k.min_length} value(s)")
    if k.type == "list[mapping]":
        assert k.schema is not None
        return [k.schema._validate(item, f"{path}[{i}].", errors) for i, item in enumerate(v)]
    item_type = k.type[5:-1]
    before = len(errors)
    out = [_check_number(k, x, f"{path}[{i}]", item_type, k.element_range(i), errors) for i, x in enumerate(v)]
    if k.increasing and len(errors) == before and any(b <= a for a, b in zip(out, out[1:])):
        errors.append(f"{path} = {_show(out)} must be increasing")
    return out


def _check_number(k: ProfileKey, v: Any, path: str, kind: str, rng: Range | None, errors: list[str]) -> Any:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        errors.append(f"{path} = {_show(v)} is not {'an integer' if kind == 'int' else 'a number'}")
        return v
    if kind == "int" and not isinstance(v, int):
        errors.append(f"{path} = {_show(v)} is not an integer")
        return v
    value = int(v) if kind == "int" else float(v)
    if kind == "float" and math.isnan(value):
        errors.append(f"{path} = {_show(v)} is not a number")
    elif rng is not None and value not in rng:
        errors.append(f"{path} = {_show(v)} is out of range {rng}")
    return value


# ---- loading ---------------------------------------------------------------------------------------


def builtin_names(builtin_dir: str | Path | None) -> list[str]:
    """Names of the profiles shipped in ``builtin_dir`` (``*.yaml`` stems, sorted)."""
    if builtin_dir is None:
        return []
    return sorted(p.stem for p in Path(builtin_dir).glob("*.yaml"))


def load_profile_data(source: str | Path | Mapping[str, Any], schema: ProfileSchema,
                      builtin_dir: str | Path | None = None) -> dict[str, Any]:
    """A checked profile mapping from a built-in name, a YAML path or a mapping, over ``schema``'s defaults.

    A mapping's own ``base`` resolves against ``builtin_dir``; a file's against its folder, then
    ``builtin_dir``. Raises :class:`ProfileError` (file, key, value, accepted range) on any problem.
    """
    if isinstance(source, Mapping):
        label = f"profile {source['name']!r}" if isinstance(source.get("name"), str) else "<dict>"
        data = _layered(dict(source), label, None, builtin_dir, schema, ())
        return schema.validate(data, label)
    path, label = _resolve(source, None, builtin_dir)
    data = _read(path, label)
    data.setdefault("name", path.stem)
    data = _layered(data, label, path.parent, builtin_dir, schema, (path.resolve(),))
    return schema.validate(data, label)


def _resolve(source: str | Path, folder: Path | None, builtin_dir: str | Path | None) -> tuple[Path, str]:
    """The file of a profile reference and the label errors name it by (a built-in: its file name)."""
    text = str(source)
    path = Path(source)
    looks_like_file = path.suffix in (".yaml", ".yml") or len(path.parts) > 1
    if folder is not None and not path.is_absolute() and (folder / path).exists():
        return folder / path, text
    if path.exists() and (looks_like_file or path.is_file()):
        return path, text
    if not looks_like_file and builtin_dir is not None:
        builtin = Path(builtin_dir) / f"{text}.yaml"
        if builtin.exists():
            return builtin, builtin.name
    if looks_like_file:
        raise ProfileError(f"reality profile file {text!r} does not exist")
    known = ", ".join(builtin_names(builtin_dir)) or "none"
    raise ProfileError(f"unknown reality profile {text!r}; built-ins: {known} (or give a YAML path)")


def _read(path: Path, label: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise ProfileError(f"{label}: not valid YAML: {' '.join(str(err).split())}") from None
    if data is None:
        raise ProfileError(f"{label}: the file is empty; a reality profile is a YAML mapping of its settings "
                           "(e.g. base: NAME and the keys it changes)")
    if not isinstance(data, dict):
        raise ProfileError(f"{label}: a reality profile must be a YAML mapping, got {type(data).__name__}")
    return data


def _layered(data: dict[str, Any], label: str, folder: Path | None, builtin_dir: str | Path | None,
             schema: ProfileSchema, seen: tuple[Path, ...]) -> dict[str, Any]:
    """``data`` over its ``base`` chain (the base's name and description are not inherited)."""
    base = data.pop(BASE_KEY, None)
    if base is None:
        return data
    if not isinstance(base, (str, Path)):
        raise ProfileError(f"{label}: {BASE_KEY} = {_show(base)} is not a profile name or path")
    try:
        path, base_label = _resolve(base, folder, builtin_dir)
    except ProfileError as err:
        raise ProfileError(f"{label}: {BASE_KEY} = {str(base)!r}: {err}") from None
    if path.resolve() in seen:
        chain = " -> ".join(p.name for p in (*seen, path.resolve()))
        raise ProfileError(f"{label}: {BASE_KEY} = {base!r} makes a cycle ({chain})")
    parent = _layered(_read(path, base_label), base_label, path.parent, builtin_dir, schema,
                      (*seen, path.resolve()))
    for key in META_KEYS:
        parent.pop(key, None)
    return {**parent, **data}


def profile_table(schema: ProfileSchema) -> str:
    """The Markdown key table of ``schema`` (what ``simdist tasks --profile-keys TASK`` prints)."""
    return schema.table()
