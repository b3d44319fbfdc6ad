"""Atomic file-system writes: a reader never sees a half-written file or folder."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any


def atomic_write_json(path: str | os.PathLike, obj: Any, default: Any = None) -> None:
    """Write JSON to a temporary file beside ``path``, fsync it, then rename it over ``path``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "w") as f:
            json.dump(obj, f, indent=1, default=default)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def replace_dir(new: Path, target: Path) -> None:
    """Move the complete folder ``new`` to ``target``; a previous ``target`` is removed only after the
    move succeeded (and restored if it failed)."""
    if not target.exists():
        os.replace(new, target)
        return
    old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
    os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
