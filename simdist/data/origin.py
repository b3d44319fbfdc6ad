"""What made a dataset: ``origin.json`` in its folder records the ``simdist generate`` settings (task, seed,
budget, envs, preset, part layout, the task's own options), so a rerun resumes only the same run and never
mixes the episodes of two runs in one folder.

A folder written before this record existed is checked against what its ``generate.json`` or ``dataset.json``
recorded (task, seed, envs, budget) and then adopts the record.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from simdist.errors import InputError
from simdist.fsutil import atomic_write_json, read_json_object

ORIGIN_FILE = "origin.json"
#: options of ``simdist generate`` that do not change the data: where it goes, how it runs, what it prints
NOT_SETTINGS = frozenset({"out", "rank", "world_size", "torch_threads", "no_progress", "json", "debug"})
#: (setting, the key earlier runs recorded it under in generate.json's ``config`` or dataset.json's generator)
_LEGACY_KEYS = (("task", "task"), ("seed", "seed"), ("envs", "num_envs"), ("transitions", "transitions"))


def generate_settings(options: dict[str, Any]) -> dict[str, Any]:
    """The settings that make a dataset, from ``simdist generate``'s parsed options (resolved ``envs`` and
    ``transitions``), as plain JSON values."""
    kept = {k: v for k, v in sorted(options.items()) if k not in NOT_SETTINGS}
    return dict(json.loads(json.dumps(kept, default=str)))


def first_difference(stored: dict[str, Any], given: dict[str, Any]) -> str | None:
    """``KEY STORED there, GIVEN now`` for the first key (in sorted order) whose value differs, or None."""
    for key in sorted(set(stored) | set(given)):
        if stored.get(key) != given.get(key):
            return f"{key} {stored.get(key)!r} there, {given.get(key)!r} now"
    return None


def _legacy_settings(folder: Path) -> tuple[str, dict[str, Any]] | None:
    """(file, the settings it recorded) of a dataset generated before ``origin.json``, or None."""
    for name, pick in (("generate.json", lambda d: d.get("config", {})),
                       ("dataset.json", lambda d: d.get("metadata", {}).get("generator", {}))):
        path = folder / name
        if path.is_file():
            recorded = pick(read_json_object(path, InputError))
            if isinstance(recorded, dict):
                return str(path), {key: recorded[old] for key, old in _LEGACY_KEYS if old in recorded}
    return None


def check_origin(folder: str | os.PathLike, settings: dict[str, Any], option: str = "--out") -> None:
    """Refuse (an :class:`InputError` naming ``option``, the folder and the first difference) a dataset folder
    that another run made; record ``settings`` in a folder that has no record yet."""
    folder = Path(folder)
    path = folder / ORIGIN_FILE
    fix = ("rerun with the settings it was made with to resume it, or pass another --out (several dataset "
           "folders are read together: pass them all to --data.train)")
    if path.is_file():
        record = read_json_object(path, InputError)
        stored = record.get("settings")
        if not isinstance(stored, dict):
            raise InputError(f"{path}: key 'settings' must be an object of the settings that made the dataset")
        diff = first_difference(stored, settings)
        if diff:
            raise InputError(f"{option} {folder}: holds a dataset made with other settings ({diff}; see "
                             f"{ORIGIN_FILE}); {fix}")
        return
    legacy = _legacy_settings(folder)
    if legacy is not None:
        where, stored = legacy
        diff = first_difference(stored, {k: settings.get(k) for k in stored})
        if diff:
            raise InputError(f"{option} {folder}: holds a dataset made with other settings ({diff}; see {where}); "
                             f"{fix}")
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"settings": settings, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
