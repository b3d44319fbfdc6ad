"""Atomic file-system writes (a reader never sees a half-written file or folder) and checked JSON reads."""

from __future__ import annotations

import fcntl
import fnmatch
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from simdist.errors import InputError

logger = logging.getLogger(__name__)

#: names the writers of this module (and the folder writers built on them) give their temporaries
_TMP_FILE = re.compile(r"^\..+\.[0-9a-f]{8}\.tmp(\.[^/]*)?$")
_TMP_DIR = re.compile(r"^\..+\.tmp-[0-9a-f]{8}$")
_OLD_DIR = re.compile(r"^\.(?P<target>.+)\.old-[0-9a-f]{8}$")


def read_json_object(path: str | os.PathLike, error: type[Exception] = ValueError) -> dict[str, Any]:
    """The JSON object in ``path``; ``error`` (naming the file) when it is unreadable, not JSON or not an object."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise error(f"{path} is not a readable JSON file: {err}") from err
    if not isinstance(data, dict):
        raise error(f"{path} must hold a JSON object, got {type(data).__name__}")
    return data


def inside(folder: str | os.PathLike, name: Any, where: str, error: type[Exception] = InputError) -> Path:
    """``folder / name`` for a relative path ``name`` read from a file of ``folder`` (``where``: that file and
    its key); ``error`` naming them when ``name`` is not a string, is absolute or climbs out with ``..``: what a
    dataset, model or recipe file names stays inside its folder."""
    if not isinstance(name, str) or not name or os.path.isabs(name) or ".." in Path(name).parts:
        raise error(f"{where}: {name!r} is not a path inside {folder}; a file there names only paths inside its "
                    "folder (fix the file or regenerate it)")
    return Path(folder) / name


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


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` for the block to write; renamed over ``path`` if the block succeeds,
    removed otherwise (for writers that take a file name, e.g. image and video encoders)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` through :func:`atomic_path`."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def replace_dir(new: Path, target: Path, own: Collection[str] | None = None) -> None:
    """Move the complete folder ``new`` to ``target``; a previous ``target`` is removed only after the
    move succeeded (and restored if it failed).

    ``own``: the entry names the writer owns. Entries of the previous ``target`` that are neither in ``new`` nor
    in ``own`` (a user's files) are moved into ``new`` first, so they survive; the permissions of the previous
    folder and of each file ``new`` replaces are kept."""
    if not target.exists():
        os.replace(new, target)
        return
    _carry_over(target, new, own)
    old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
    os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _carry_over(old: Path, new: Path, own: Collection[str] | None) -> None:
    """Keep ``old``'s permissions on ``new`` and on the files of ``new`` that replace one of ``old``'s; move the
    entries of ``old`` that ``new`` lacks and ``own`` does not name into ``new``."""
    shutil.copymode(old, new)
    for entry in old.iterdir():
        fresh = new / entry.name
        if fresh.exists():
            if entry.is_file() and fresh.is_file():
                shutil.copymode(entry, fresh)
        elif own is not None and entry.name not in own:
            os.replace(entry, fresh)


def remove_stale_temporaries(folder: str | os.PathLike, target: str | None = None) -> list[str]:
    """Remove what an interrupted (e.g. killed) atomic write left in ``folder``; returns the names removed.

    Temporary files (:func:`atomic_write_json`, :func:`atomic_path`) and folders (``.NAME.tmp-XXXXXXXX``)
    are deleted: they were never renamed into place, so nothing refers to them. A previous folder kept
    by :func:`replace_dir` (``.NAME.old-XXXXXXXX``) is put back when the kill came between its two renames
    (``NAME`` missing), else deleted. Call it only where one writer owns ``folder`` (the resumable commands
    do, at start). ``target``: only the temporaries of the entry of that name (a writer that owns one folder
    in a shared parent: ``.NAME.tmp-*``, ``.NAME.old-*``).
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    for entry in sorted(folder.iterdir()):
        name = entry.name
        if target is not None and not name.startswith(f".{target}."):
            continue
        old = _OLD_DIR.match(name)
        if old and entry.is_dir():
            kept = folder / old.group("target")
            if not kept.exists():
                os.replace(entry, kept)
                logger.warning("%s: restored %s, which an interrupted replacement had moved aside", folder, kept.name)
                continue
        elif not (_TMP_FILE.match(name) or (_TMP_DIR.match(name) and entry.is_dir())):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(name)
    if removed:
        logger.info("%s: removed %d temporaries of an interrupted run: %s", folder, len(removed), ", ".join(removed))
    return removed


class OutputLockedError(InputError):
    """Another process is writing the output folder this one was given."""


def _locked(fd: int, folder: str | os.PathLike, option: str, shared: bool) -> None:
    """Take the lock on ``fd`` at once, else raise :class:`OutputLockedError` naming its holder."""
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "another process"
        raise OutputLockedError(
            f"{option} {folder}: the folder is being written by {holder}; wait until it ends (then rerun "
            f"this command to resume) or pass another {option}") from None


def _probe_lock(folder: str | os.PathLike, option: str, shared: bool) -> None:
    """Refuse a folder another process holds the lock of, without creating the lock file (a refused command
    leaves no file behind)."""
    try:
        fd = os.open(lock_path(folder), os.O_RDONLY)
    except OSError:
        return  # no lock file: nobody has written the folder under a lock yet
    try:
        _locked(fd, folder, option, shared)
    finally:
        os.close(fd)


def lock_path(folder: str | os.PathLike) -> Path:
    """The lock file of the output ``folder``: ``.NAME.lock`` beside it (so it never enters the folder, which
    may be replaced whole or uploaded)."""
    folder = Path(folder).resolve()
    return folder.parent / f".{folder.name}.lock"


@contextmanager
def output_lock(folder: str | os.PathLike, option: str = "--out", shared: bool = False, *, kind: str = "output",
                markers: Collection[str] = ()) -> Iterator[Path]:
    """Hold the lock of the output ``folder`` for the block: exclusive, or ``shared`` with the other workers of
    one distributed run (which write disjoint parts). A process that cannot have it at once gets an
    :class:`OutputLockedError` naming ``option``, the folder and the holder, before any work. The operating system
    releases the lock when its process ends, killed or not; the lock file stays (it holds only the last holder).
    The folder is checked first (:func:`check_output_path` with ``kind`` and ``markers``)."""
    check_output_path(folder, option, kind=kind, markers=markers, shared=shared)
    path = lock_path(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _locked(fd, folder, option, shared)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} ({' '.join(['simdist', *sys.argv[1:]])[:300]}, since "
                      f"{time.strftime('%Y-%m-%d %H:%M:%S')}){' with other workers' if shared else ''}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock


def is_temporary(name: str) -> bool:
    """Whether ``name`` is a temporary of this module's writers (or a shard's ``.tar.tmp``): what an interrupted
    run of a command leaves in its own output."""
    return bool(_TMP_FILE.match(name) or _TMP_DIR.match(name) or _OLD_DIR.match(name)) or name.endswith(".tmp")


def _writable(folder: Path) -> str | None:
    """None when a file can be created in ``folder`` (tried for real: permission bits do not bind every user,
    read-only mounts and virtual file systems do not show in them), else the reason."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".simdist-write-check-", dir=folder)
    except OSError as err:
        return err.strerror or type(err).__name__
    os.close(fd)
    os.unlink(probe)
    return None


def check_output_path(path: str | os.PathLike, option: str = "--out", *, folder: bool = True,
                      kind: str = "output", markers: Collection[str] = (), shared: bool = False,
                      inputs: Collection[str | os.PathLike] = ()) -> Path:
    """Refuse a bad output path before any work; returns it as a Path.

    ``folder``: the command writes a folder there (else a file). Refused, each with an :class:`InputError`
    naming ``option`` and the path: a file where a folder is wanted or the reverse; a path under a file; a
    folder that cannot be written (tried by creating and removing a file); with ``markers`` (glob patterns of
    the entries that make a folder a ``kind``, e.g. ``dataset.json``), a non-empty folder holding none of them
    and not only temporaries (``inputs``, paths the command reads, e.g. its recipe, may lie there: they and
    the folders holding them do not count): the command never writes into a folder of something else. A folder
    whose lock (:func:`output_lock`; ``shared``: as a worker of a distributed run) another process holds is refused
    too."""
    path = Path(path)
    where = f"{option} {path}"
    if folder:
        _probe_lock(path, option, shared)
    if path.exists() or path.is_symlink():
        if folder and not path.is_dir():
            raise InputError(f"{where}: is a file, not a folder; pass a new or empty folder (or a {kind} to resume "
                             "or update)")
        if not folder and path.is_dir():
            raise InputError(f"{where}: is a folder; pass a file path")
        if folder:
            reason = _writable(path)
            if reason:
                raise InputError(f"{where}: cannot write in this folder ({reason})")
            entries = sorted(e.name for e in path.iterdir())
            read = {Path(p).resolve() for p in inputs}
            holds_input = {e for e in entries if any(r == (path / e).resolve() or (path / e).resolve() in r.parents
                                                     for r in read)}
            foreign = [e for e in entries if not is_temporary(e) and e not in holds_input]
            if markers and foreign and not any(fnmatch.fnmatch(e, m) for e in entries for m in markers):
                shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
                raise InputError(f"{where}: the folder is not empty and is not a {kind} (it holds {shown}); pass a "
                                 f"new or empty folder")
            return path
    parent = path.parent
    while not (parent.exists() or parent.is_symlink()) and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"{where}: {parent} is a file, so nothing can be written under it")
    reason = _writable(parent)
    if reason:
        raise InputError(f"{where}: cannot write in {parent} ({reason})")
    if not folder and path.parent.exists() and not path.parent.is_dir():
        raise InputError(f"{where}: {path.parent} is not a folder")
    return path
