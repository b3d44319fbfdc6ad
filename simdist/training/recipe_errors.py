"""Recipe mistakes of ``simdist fit`` as one line naming the recipe file, the key and what is allowed.

jsonargparse reports an unknown key or a value of the wrong type in 10 to 80 lines whose first names neither;
a module's constructor refusing a value (an unknown preset) ends in a traceback; two stage recipes given together
(``pretrain.yaml`` and ``finetune.yaml``) merge into a module that fits neither. :func:`parse_error` and
:func:`build_error` turn these into an :class:`InputError`.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from simdist.errors import InputError


def _load(path: str) -> Any:
    import yaml

    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def _lookup(node: Any, key: str) -> tuple[bool, Any]:
    """(found, value) of the dotted ``key`` in a recipe's mapping."""
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def recipe_with_key(recipes: list[str], key: str) -> str | None:
    """The last recipe of ``recipes`` that sets the dotted ``key`` (later recipes override earlier ones)."""
    return next((path for path in reversed(recipes) if _lookup(_load(path), key)[0]), None)


def stage_conflict(recipes: list[str]) -> str | None:
    """``LATER: key 'model.class_path' is B, but EARLIER sets A`` when two of ``recipes`` name different modules:
    legitimate when the later stage's options fit its module (a stage overriding its base), two stage recipes given
    together when the merged options make the module refuse them; None when they agree."""
    seen: tuple[str, Any] | None = None
    for path in recipes:
        found, cls = _lookup(_load(path), "model.class_path")
        if not found:
            continue
        if seen is not None and cls != seen[1]:
            return f"{path}: key 'model.class_path' is {cls}, but {seen[0]} sets {seen[1]}"
        seen = (path, cls)
    return None


def _place(recipes: list[str], key: str, args: list[str]) -> str:
    """The command-line option ``--KEY`` when ``args`` set it (they override recipes), else ``FILE: key 'KEY'``
    of the last recipe that sets it."""
    flags = {f"--{key}", f"--{key.replace('.init_args.', '.')}"}
    if any(a.partition("=")[0] in flags for a in args):
        return f"--{key}"
    path = recipe_with_key(recipes, key)
    return f"{path}: key {key!r}" if path else f"--{key}"


def _options(names: Iterable[str]) -> str:
    shown = sorted(set(names))
    return ", ".join(shown[:30]) + (f" and {len(shown) - 30} more" if len(shown) > 30 else "")


def _init_parameters(class_path: str) -> list[str]:
    """The keyword parameters of ``class_path``'s constructor, its bases' included (empty when unknown)."""
    module, _, name = class_path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        return []
    names: list[str] = []
    for klass in inspect.getmro(cls):
        if "__init__" in vars(klass):
            params = inspect.signature(vars(klass)["__init__"]).parameters.values()
            names += [p.name for p in params if p.name != "self" and p.kind is not p.VAR_POSITIONAL
                      and p.kind is not p.VAR_KEYWORD]
            if not any(p.kind is p.VAR_KEYWORD for p in params):
                break
    return names


def _types(text: str) -> str:
    """``<class 'pkg.Name'>`` as ``Name`` (``NoneType`` as ``None``)."""
    return re.sub(r"<class '(?:[\w.]+\.)?(\w+)'>", r"\1", text).replace("NoneType", "None")


def _reason(block: list[str]) -> str:
    """What jsonargparse's lines after a ``Parser key`` say is wrong: ``expected TYPE(S), got VALUE``."""
    if not block:
        return "invalid value"
    m = re.match(r"Expected a (.+)\. Got value: (.*)$", block[0])
    if m:
        return f"expected {_types(m.group(1))}, got {m.group(2)!r}"
    subtypes = next((ln.partition(": ")[2] for ln in block[:2] if ln.startswith("Subtypes:")), None)
    given = next((ln.partition(": ")[2] for ln in block if ln.startswith("Given value:")), None)
    if subtypes is not None and given is not None:
        return f"expected one of {_types(subtypes).strip('[]')}, got {given!r}"
    return block[0]


def parse_error(message: str, recipes: list[str], top_level: dict[str, list[str]], args: list[str]) -> InputError:
    """The one-line error for jsonargparse's ``message`` (an unknown key, a value of the wrong type) of the
    command line ``args`` with its ``recipes``.

    ``top_level`` maps each option group (``trainer``, ``data``, ``""`` for the top) to its accepted keys."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    m = re.search(r"does not accept option '([^']+)'", message)
    if m:
        key = m.group(1)
        group = key.rpartition(".")[0] if key.rpartition(".")[0] in top_level else ""
        allowed = top_level.get(group, [])
        where = f"under '{group}'" if group else "at the top level"
        return InputError(f"{_place(recipes, key, args)}: unknown key; accepted {where}: {_options(allowed)}")
    keys = re.findall(r'Parser key "([^"]+)"', message)
    classes = re.findall(r"class_path '([^']+)'", message)
    if not keys:
        return InputError(lines[-1] if lines else message)
    key = keys[0]
    unknown = re.search(r"Option '([^']+)' is not accepted", message)
    if classes and unknown:
        key = f"{key}.init_args.{unknown.group(1)}"
        return InputError(f"{_place(recipes, key, args)}: unknown key; {classes[0]} accepts: "
                          f"{_options(_init_parameters(classes[0]))}")
    if classes and len(keys) > 1:
        key = f"{key}.init_args.{keys[-1]}"
    last = max(i for i, ln in enumerate(lines) if ln.startswith("Parser key"))
    return InputError(f"{_place(recipes, key, args)}: {_reason(lines[last + 1:])}")


def build_error(err: BaseException, recipes: list[str]) -> InputError | None:
    """The one-line error for a module or data constructor that refused a recipe's value (a ValueError,
    KeyError or TypeError under jsonargparse's wrapping), naming the recipe key holding the value it quotes;
    None when ``err`` is not that."""
    cause: BaseException | None = err
    while cause is not None and cause.__cause__ is not None:
        cause = cause.__cause__
    if not isinstance(cause, (ValueError, KeyError, TypeError)) or cause is err:
        return None
    text = str(cause.args[0]) if isinstance(cause, KeyError) and cause.args else str(cause)
    conflict = stage_conflict(recipes)
    if conflict:
        return InputError(f"{conflict}: two training stages cannot be combined (their merged options: {text}); give "
                          "one of them after the shared base recipe")
    for value in re.findall(r"'([^']+)'", text):
        hit = where_in_recipes(recipes, value)
        if hit:
            return InputError(f"{hit}: {text}")
    sets = [path for path in recipes if _lookup(_load(path), "model")[0]]
    return InputError(f"{', '.join(sets) or 'the command line'}: key 'model': {text}")


def where_in_recipes(paths: list[str], value: str) -> str | None:
    """``FILE: key 'a.b.c'`` of the last recipe in ``paths`` that sets some key to ``value`` (later recipes
    override earlier ones), or None."""
    def find(node: Any, prefix: str) -> str | None:
        if isinstance(node, dict):
            for key, child in node.items():
                hit = find(child, f"{prefix}.{key}" if prefix else str(key))
                if hit is not None:
                    return hit
        elif isinstance(node, list):
            for k, child in enumerate(node):
                hit = find(child, f"{prefix}[{k}]")
                if hit is not None:
                    return hit
        elif node == value:
            return prefix
        return None

    for path in reversed(paths):
        key = find(_load(path), "")
        if key is not None:
            return f"{path}: key {key!r}"
    return None
