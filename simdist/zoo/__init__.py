"""The model zoo: the index of official task models (``models.yaml``), the model copies bundled with simdist
and the bundled PPO expert sets.

The zoo root is the folder named by the environment variable ``SIMDIST_ZOO`` if set, else the installed data
package ``simdist.zoo_files`` (the repository's top-level ``hub/`` folder, mapped into the package for both
editable and regular installs), else ``hub/`` next to the package in a source checkout. A bundled model lives
in ``<root>/<folder>`` as the Hub-ready files ``config.json``, ``model.safetensors`` and ``README.md``;
:func:`simdist.hub.resolve_folder` falls back to it when the Hub cannot be reached. An expert set lives in
``<root>/experts/<name>`` (``manifest.json`` and its safetensors files); :func:`expert_set` finds it by name.

This module depends only on :mod:`simdist.hub.files`; the Hub resolver depends on it, not the other way round.
Publishing a zoo model (:mod:`simdist.zoo.publish`, ``simdist zoo publish``) sits above the models and agents it
checks; importing this package does not load it.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import os
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id

import simdist
from simdist.hub.files import CONFIG_NAME, WEIGHTS_NAME

__all__ = [
    "ZooEntry", "zoo_root", "load_index", "find", "bundled_folder", "expert_sets", "expert_set", "resolve_experts",
    "INDEX_NAME", "ENV_VAR", "DATA_PACKAGE", "EXPERTS_DIR",
]

INDEX_NAME = "models.yaml"
ENV_VAR = "SIMDIST_ZOO"
#: The package the zoo's files are installed as (``hub/`` in the repository).
DATA_PACKAGE = "simdist.zoo_files"
#: Folder of the expert sets under the zoo root; each set holds :data:`EXPERT_MANIFEST`.
EXPERTS_DIR = "experts"
EXPERT_MANIFEST = "manifest.json"  # simdist.experts.MANIFEST (not imported: it pulls in torch)
SCHEMA_VERSION = 1
STATUSES = ("planned", "available")
_REQUIRED = ("name", "repo_id", "task", "architecture", "recipe", "status")
_OPTIONAL = ("finetune_recipe", "folder", "base_model", "profile", "agent_type")


@dataclasses.dataclass(frozen=True)
class ZooEntry:
    """One model of the index; ``folder`` is relative to ``root``, the zoo root the index was read from."""

    name: str
    repo_id: str
    task: str
    architecture: str
    recipe: str
    status: str
    finetune_recipe: str | None = None
    folder: str | None = None
    base_model: str | None = None
    profile: str | None = None
    agent_type: str | None = None  # the agent class of the model (default: read from its config.json)
    root: Path | None = dataclasses.field(default=None, compare=False, repr=False)

    def bundled(self) -> Path | None:
        """The bundled folder if it holds ``config.json`` and ``model.safetensors``, else None."""
        if self.folder is None or self.root is None:
            return None
        path = self.root / self.folder
        return path if all((path / name).is_file() for name in (CONFIG_NAME, WEIGHTS_NAME)) else None

    def to_dict(self) -> dict[str, Any]:
        """The index fields (without ``root``), as in ``models.yaml``."""
        return {key: getattr(self, key) for key in (*_REQUIRED, *_OPTIONAL)}


def zoo_root() -> Path | None:
    """``$SIMDIST_ZOO`` if set (None when it is not a folder), else the installed zoo files (the data package
    :data:`DATA_PACKAGE`) or a source checkout's ``hub/`` folder, whichever holds ``models.yaml`` first;
    None (an empty zoo) when neither does."""
    override = os.environ.get(ENV_VAR)
    if override:
        path = Path(override).expanduser()
        return path if path.is_dir() else None
    for root in (_installed_root(), Path(simdist.__file__).resolve().parents[1] / "hub"):
        if root is not None and (root / INDEX_NAME).is_file():
            return root
    return None


def _installed_root() -> Path | None:
    """The folder of :data:`DATA_PACKAGE`, or None when it is not installed (or not a plain folder)."""
    try:
        files = importlib.resources.files(DATA_PACKAGE)
    except ModuleNotFoundError:  # an editable install made before the package existed: use the checkout
        return None
    return files if isinstance(files, Path) else None


def load_index(root: Path | None = None) -> list[ZooEntry]:
    """Parse ``<root>/models.yaml`` (root: :func:`zoo_root`); [] when there is no zoo or no index.

    Raises ``ValueError`` naming the file and the problem for a malformed index.
    """
    root = zoo_root() if root is None else Path(root)
    path = None if root is None else root / INDEX_NAME
    if root is None or path is None or not path.is_file():
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: expected a mapping with schema_version: {SCHEMA_VERSION}")
    models = data.get("models") or []
    if not isinstance(models, list):
        raise ValueError(f"{path}: 'models' must be a list of entries")
    entries = [_parse_entry(raw, i, path, root) for i, raw in enumerate(models)]
    for key in ("name", "repo_id"):
        values = [getattr(e, key) for e in entries]
        duplicates = sorted({v for v in values if values.count(v) > 1})
        if duplicates:
            raise ValueError(f"{path}: duplicate {key} {', '.join(map(repr, duplicates))}")
    return entries


def _parse_entry(raw: Any, index: int, path: Path, root: Path) -> ZooEntry:
    where = f"{path}: models[{index}]"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be a mapping, got {type(raw).__name__}")
    where += f" ({raw['name']!r})" if "name" in raw else ""
    missing = [key for key in _REQUIRED if key not in raw]
    unknown = sorted(set(raw) - {*_REQUIRED, *_OPTIONAL})
    if missing or unknown:
        raise ValueError(f"{where}: " + "; ".join(
            part for part in (missing and f"missing key(s) {', '.join(missing)}",
                              unknown and f"unknown key(s) {', '.join(unknown)}") if part))
    not_str = [key for key, value in raw.items() if not isinstance(value, str)]
    if not_str:
        raise ValueError(f"{where}: {', '.join(not_str)} must be string(s)")
    if raw["status"] not in STATUSES:
        raise ValueError(f"{where}: unknown status {raw['status']!r} (expected one of {', '.join(STATUSES)})")
    for key in ("repo_id", "base_model"):
        if key in raw:
            try:
                validate_repo_id(raw[key])
            except HFValidationError as err:
                raise ValueError(f"{where}: {key} {raw[key]!r} is not a Hub repo id ({err})") from err
    folder = raw.get("folder")
    if folder is not None and (PurePosixPath(folder).is_absolute() or ".." in PurePosixPath(folder).parts):
        raise ValueError(f"{where}: folder {folder!r} must be relative to the zoo root, without '..'")
    return ZooEntry(**raw, root=root)


def find(name_or_repo_id: str, root: Path | None = None) -> ZooEntry | None:
    """The entry whose name or repo id is ``name_or_repo_id``, or None."""
    return next((e for e in load_index(root) if name_or_repo_id in (e.name, e.repo_id)), None)


def bundled_folder(repo_id: str, root: Path | None = None) -> Path | None:
    """The bundled folder of the zoo model ``repo_id`` (holding config.json and model.safetensors), or None."""
    entry = next((e for e in load_index(root) if e.repo_id == repo_id), None)
    return entry.bundled() if entry else None


# ------------------------------------------------------------------------------------------ expert sets
def expert_sets(root: Path | None = None) -> dict[str, Path]:
    """The bundled expert sets by name: ``<root>/experts/<name>`` folders holding ``manifest.json``."""
    root = zoo_root() if root is None else Path(root)
    folder = None if root is None else root / EXPERTS_DIR
    if folder is None or not folder.is_dir():
        return {}
    return {p.name: p for p in sorted(folder.iterdir()) if (p / EXPERT_MANIFEST).is_file()}


def expert_set(name: str, root: Path | None = None) -> Path:
    """The folder of the bundled expert set ``name`` (as under ``experts/<name>``); ``FileNotFoundError`` listing the
    bundled sets when there is no such set."""
    sets = expert_sets(root)
    if name not in sets:
        where = zoo_root() if root is None else root
        known = ", ".join(sets) or "none"
        raise FileNotFoundError(f"no expert set {name!r} in the zoo at {where} (bundled sets: {known})")
    return sets[name]


def resolve_experts(name_or_path: str | os.PathLike[str], root: Path | None = None) -> Path:
    """An expert-set folder from a path (an existing folder) or a bundled set's name (see :func:`expert_set`).

    A string without path separators that is not an existing folder is taken as a name; anything else that
    does not exist raises ``FileNotFoundError``.
    """
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    text = os.fspath(name_or_path)
    if isinstance(name_or_path, os.PathLike) or any(c in text for c in "/\\") or text.startswith((".", "~")):
        known = ", ".join(expert_sets(root)) or "none"
        raise FileNotFoundError(f"no expert set folder {text!r} (bundled sets, usable by name: {known})")
    return expert_set(text, root)
