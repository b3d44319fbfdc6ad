"""Named architectures (``WorldModel.from_preset``), registered by the tasks that define them.

A task registers its official architecture with ``@preset(name)`` when its folder is imported; lookups
import the registered tasks (and entry-point plug-ins) first; a name ``PREFIX:ID`` of a task family
(:func:`simdist.registry.register_family`), or ``PREFIX:ID+VARIANT``, builds that task, which registers its
presets under its name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simdist.model.config import WorldModelConfig

_PRESETS: dict[str, Callable[..., WorldModelConfig]] = {}


def preset(name: str) -> Callable[[Callable[..., WorldModelConfig]], Callable[..., WorldModelConfig]]:
    def deco(fn: Callable[..., WorldModelConfig]) -> Callable[..., WorldModelConfig]:
        _PRESETS[name] = fn
        return fn

    return deco


def _load_task_presets() -> None:
    from simdist.registry import load_builtins, load_plugins

    load_builtins("task")
    load_plugins()


def preset_config(name: str, **overrides: Any) -> WorldModelConfig:
    if name not in _PRESETS:
        _load_task_presets()
    if name not in _PRESETS and ":" in name:  # a family's task PREFIX:ID registers PREFIX:ID[+VARIANT] when built
        from simdist.registry import RegistryError, get

        try:
            get("task", name.partition("+")[0])
        except RegistryError:
            pass
    if name not in _PRESETS:
        raise KeyError(f"unknown preset {name!r}; known presets: {sorted(_PRESETS)}")
    cfg = _PRESETS[name]()
    return cfg.replace(**overrides) if overrides else cfg


def list_presets() -> list[str]:
    _load_task_presets()
    return sorted(_PRESETS)
