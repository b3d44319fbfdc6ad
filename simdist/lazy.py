"""Lazy package attributes: names that load their module on first access (keeps imports light)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, names: Mapping[str, str], namespace: dict[str, Any],
                 base: str | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``names`` maps an attribute to the module (relative to ``base``,
    default ``package``) defining it; the first access imports it and caches the value in ``namespace``."""

    def __getattr__(name: str) -> Any:
        if name in names:
            value = getattr(importlib.import_module(f"{base or package}.{names[name]}"), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
