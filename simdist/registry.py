"""Component registry: ``register(kind, name)``, ``create``, ``get``, ``list_components``.

Built-in components live in :mod:`simdist.components` and register themselves at import.
Third-party packages add components through the entry-point group ``simdist.components``:
each entry point names a module (or callable) that is imported on the first registry miss.
"""

from __future__ import annotations

import fnmatch
import importlib
import pkgutil
from collections.abc import Callable
from importlib import metadata
from typing import Any, TypeVar

T = TypeVar("T")

#: The kinds of component simdist knows about. ``register`` accepts only these.
KINDS: tuple[str, ...] = (
    "encoder",
    "dynamics",
    "reward_head",
    "value_head",
    "policy_head",
    "decoder_head",
    "planner",
    "freeze_policy",
    "env",
    "task",
    "agent",
    "official_model",
)

ENTRY_POINT_GROUP = "simdist.components"

_REGISTRY: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
#: per kind, ``{prefix: factory}``: a name ``PREFIX:REST`` that no component took is built by ``factory(REST)``
_FAMILIES: dict[str, dict[str, Callable[[str], Any]]] = {kind: {} for kind in KINDS}
_plugins_loaded = False
_builtins_loaded: set[str] = set()  # modules imported by load_builtins


class RegistryError(KeyError):
    """Raised for unknown kinds or names, and for names registered twice; ``kind`` is the component kind and
    ``name`` the unknown name."""

    def __init__(self, message: str, kind: str | None = None, name: str | None = None) -> None:
        super().__init__(message)
        self.kind, self.name = kind, name

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable.
        return str(self.args[0]) if self.args else ""


def _check_kind(kind: str) -> None:
    if kind not in _REGISTRY:
        raise RegistryError(f"unknown component kind {kind!r}; known kinds: {', '.join(KINDS)}")


def register(kind: str, name: str) -> Callable[[T], T]:
    """Class decorator that registers ``cls`` as component ``name`` of ``kind``.

    Raises :class:`RegistryError` if the name is already taken for that kind.
    """
    _check_kind(kind)

    def decorator(obj: T) -> T:
        table = _REGISTRY[kind]
        if name in table and table[name] is not obj:
            raise RegistryError(
                f"{kind} {name!r} is already registered by {_qualname(table[name])}; "
                f"choose another name for {_qualname(obj)}"
            )
        table[name] = obj
        obj._simdist_registry_key = (kind, name)  # type: ignore[attr-defined]
        return obj

    return decorator


def register_family(kind: str, prefix: str) -> Callable[[Callable[[str], T]], Callable[[str], T]]:
    """Decorator registering ``factory(rest) -> component`` for the names ``PREFIX:REST`` of ``kind``: a lookup of
    such a name that no component took calls the factory once and registers what it returns under the full name
    (e.g. a family of tasks built from another library's environment ids). Raises if ``prefix`` is taken."""
    _check_kind(kind)
    if not prefix or ":" in prefix:
        raise RegistryError(f"{kind} family prefix {prefix!r}: must be non-empty and hold no ':'", kind, prefix)

    def decorator(factory: Callable[[str], T]) -> Callable[[str], T]:
        table = _FAMILIES[kind]
        if prefix in table and table[prefix] is not factory:
            raise RegistryError(f"{kind} family {prefix!r} is already registered by {_qualname(table[prefix])}",
                                kind, prefix)
        table[prefix] = factory
        return factory

    return decorator


def list_families(kind: str) -> list[str]:
    """The family prefixes of ``kind`` (names ``PREFIX:...`` built on demand, :func:`register_family`)."""
    _check_kind(kind)
    load_builtins(kind)
    load_plugins()
    return sorted(_FAMILIES[kind])


def family_doc(kind: str, prefix: str) -> str:
    """The first line of family ``prefix``'s factory docstring (what ``PREFIX:ID`` builds)."""
    factory = _FAMILIES[kind][prefix]
    return (factory.__doc__ or "").strip().splitlines()[0] if factory.__doc__ else ""


def _from_family(kind: str, name: str) -> Any | None:
    prefix, sep, rest = name.partition(":")
    factory = _FAMILIES[kind].get(prefix) if sep else None
    if factory is None:
        return None
    if not rest:
        raise RegistryError(f"{kind} {name!r}: give an id after {prefix + ':'!r}", kind, name)
    return register(kind, name)(factory(rest))


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


#: The modules whose imports register each kind's built-ins; only what a lookup needs is imported, so
#: building a world model or a planner does not import MuJoCo (the tasks).
_BUILTIN_MODULES: dict[str, tuple[str, ...]] = {
    "env": ("simdist.components.tasks.envs",), "task": ("simdist.components.tasks",),
    "agent": ("simdist.components.agents",), "freeze_policy": ("simdist.components.freeze_policies",),
    "official_model": ("simdist.components.tasks",),
}
_DEFAULT_MODULES = ("simdist.components",)


def import_submodules(package: str, path: list[str], packages_only: bool = False) -> list[str]:
    """Import every module (or, with ``packages_only``, every sub-package) of ``package`` found on ``path`` (its
    ``__path__``), so that their decorators register them; returns their names, sorted. A package whose
    ``__init__`` calls this finds a new component file or folder without naming it anywhere."""
    names = sorted(info.name for info in pkgutil.iter_modules(path) if info.ispkg or not packages_only)
    for name in names:
        importlib.import_module(f"{package}.{name}")
    return names


def load_builtins(kind: str | None = None) -> None:
    """Import the built-in components of ``kind`` (every kind if None) so that their decorators run."""
    kinds = KINDS if kind is None else (kind,)
    for k in kinds:
        for module in _BUILTIN_MODULES.get(k, _DEFAULT_MODULES):
            if module not in _builtins_loaded:
                _builtins_loaded.add(module)
                importlib.import_module(module)


def load_plugins(force: bool = False) -> list[str]:
    """Import every entry point of group ``simdist.components``; returns their names."""
    global _plugins_loaded
    if _plugins_loaded and not force:
        return []
    _plugins_loaded = True
    loaded = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        target = ep.load()
        if callable(target) and not isinstance(target, type):
            target()
        loaded.append(ep.name)
    return loaded


def get(kind: str, name: str) -> Any:
    """Return the class registered as ``name`` of ``kind``."""
    _check_kind(kind)
    load_builtins(kind)
    table = _REGISTRY[kind]
    if name not in table:
        load_plugins()
    if name not in table and _from_family(kind, name) is not None:
        return table[name]
    if name not in table:
        families = "".join(f", {p}:ID" for p in sorted(_FAMILIES[kind]))
        known = ", ".join(sorted(table)) or "(none)"
        raise RegistryError(f"unknown {kind} {name!r}; known {kind} names: {known}{families}", kind, name)
    return table[name]


def create(kind: str, name: str, /, **kwargs: Any) -> Any:
    """Instantiate the component ``name`` of ``kind`` with ``kwargs``."""
    return get(kind, name)(**kwargs)


def list_components(kind: str | None = None, pattern: str = "*") -> dict[str, list[str]] | list[str]:
    """Registered names: a sorted list for one kind, or a dict of kind to names."""
    load_builtins(kind)
    load_plugins()
    if kind is not None:
        _check_kind(kind)
        return sorted(n for n in _REGISTRY[kind] if fnmatch.fnmatch(n, pattern))
    return {k: sorted(n for n in names if fnmatch.fnmatch(n, pattern)) for k, names in _REGISTRY.items()}


def registered_name(obj: Any) -> tuple[str, str] | None:
    """``(kind, name)`` under which ``obj``'s class was registered, if any."""
    return getattr(type(obj) if not isinstance(obj, type) else obj, "_simdist_registry_key", None)
