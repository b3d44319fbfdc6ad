"""The model zoo: the index of official task models (``hub/models.yaml``) and the copies bundled with the repo.

The zoo root is the repository's ``hub/`` folder (found next to the package, as in the editable install),
or the folder named by the environment variable ``SIMDIST_ZOO``. A bundled model lives in
``<root>/<folder>`` as the Hub-ready files ``config.json``, ``model.safetensors`` and ``README.md``;
:func:`simdist.hub.resolve_folder` falls back to it when the Hub cannot be reached.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id

import simdist
from simdist.hub import CONFIG_NAME, WEIGHTS_NAME

__all__ = ["ZooEntry", "zoo_root", "load_index", "find", "bundled_folder", "INDEX_NAME", "ENV_VAR"]

INDEX_NAME = "models.yaml"
ENV_VAR = "SIMDIST_ZOO"
SCHEMA_VERSION = 1
STATUSES = ("planned", "available")
_REQUIRED = ("name", "repo_id", "task", "architecture", "recipe", "status")
_OPTIONAL = ("finetune_recipe", "folder", "base_model", "profile")


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
    """``$SIMDIST_ZOO`` if set (None when it is not a folder), else the repository's ``hub/`` folder if it
    holds ``models.yaml``, else None (an empty zoo)."""
    override = os.environ.get(ENV_VAR)
    if override:
        path = Path(override).expanduser()
        return path if path.is_dir() else None
    path = Path(simdist.__file__).resolve().parents[1] / "hub"
    return path if (path / INDEX_NAME).is_file() else None


def load_index(root: Path | None = None) -> list[ZooEntry]:
    """Parse ``<root>/models.yaml`` (root: :func:`zoo_root`); [] when there is no zoo or no index.

    Raises ``ValueError`` naming the file and the problem for a malformed index.
    """
    root = zoo_root() if root is None else Path(root)
    path = None if root is None else root / INDEX_NAME
    if path is None or not path.is_file():
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


def expert_set(name_or_path: str) -> Path:
    """An expert-set folder: an existing path, or a name under the zoo's ``experts/`` folder."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    root = zoo_root()
    candidate = None if root is None else root / "experts" / str(name_or_path)
    if candidate is not None and candidate.is_dir():
        return candidate
    raise FileNotFoundError(f"--experts {name_or_path!r}: neither a folder nor an expert set of the zoo")
