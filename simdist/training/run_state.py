"""Whether a ``simdist fit`` run folder holds an interrupted run, and its newest checkpoint.

``fit-state.json`` in ``--trainer.default_root_dir`` says ``running`` (with the pid) from the first training step,
``interrupted`` after Ctrl-C (SIGINT) and ``finished`` at the end, and lists the folders the run's checkpoints go to
(a logger may put them outside the run folder). A run still ``running`` whose process is gone was killed. The
same command again resumes the newest checkpoint (:class:`~simdist.training.cli.SimDistCLI`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from lightning.pytorch import Callback, LightningModule, Trainer
from lightning.pytorch.callbacks import ModelCheckpoint

from simdist.errors import InputError
from simdist.fsutil import atomic_write_json

RUN_STATE = "fit-state.json"


def read_run_state(root: str | os.PathLike) -> dict[str, Any] | None:
    """``fit-state.json`` of run folder ``root`` (None when absent or unreadable: then nothing is resumed)."""
    try:
        state = json.loads((Path(root) / RUN_STATE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return state if isinstance(state, dict) else None


def alive(pid: Any) -> bool:
    """Whether process ``pid`` (of this machine) still runs."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def checkpoint_dirs(root: str | os.PathLike, state: dict[str, Any] | None) -> list[Path]:
    """The folders where the run in ``root`` wrote checkpoints: those ``state`` records, else ``root`` itself."""
    dirs = [Path(d) for d in (state or {}).get("checkpoint_dirs", []) if isinstance(d, str)]
    return dirs or [Path(root)]


def newest_checkpoint(folders: list[Path]) -> Path | None:
    """The most recently written ``*.ckpt`` under ``folders`` (None when there is none)."""
    found = [p for d in folders if d.is_dir() for p in d.rglob("*.ckpt") if p.is_file()]
    return max(found, key=lambda p: (p.stat().st_mtime_ns, p.name), default=None)


def stale_last(ckpt: Path) -> Path | None:
    """A ``last*.ckpt`` written after ``ckpt`` in its folder, when ``ckpt`` is itself a ``last*.ckpt`` (a run
    started again in the folder saves ``last-v1.ckpt`` beside the older ``last.ckpt``), else None."""
    if not ckpt.name.startswith("last") or not ckpt.is_file():
        return None
    newer = [p for p in ckpt.parent.glob("last*.ckpt") if p.stat().st_mtime_ns > ckpt.stat().st_mtime_ns]
    return max(newer, key=lambda p: p.stat().st_mtime_ns, default=None)


def run_checkpoint(path: str | os.PathLike, option: str = "--ckpt") -> Path:
    """The checkpoint to read for ``path``: a run folder's newest, or the file itself; an :class:`InputError`
    naming ``option`` for a run folder without checkpoints or a stale ``last*.ckpt`` (:func:`stale_last`)."""
    p = Path(path)
    if p.is_dir():
        newest = newest_checkpoint(checkpoint_dirs(p, read_run_state(p)))
        if newest is None:
            raise InputError(f"{option} {p}: no checkpoint (*.ckpt) in this folder; pass a checkpoint file or the "
                             "run folder (--trainer.default_root_dir) of a fit that saved one")
        return newest
    newer = stale_last(p)
    if newer is not None:
        raise InputError(f"{option} {p}: a newer checkpoint of the run lies beside it ({newer.name}); pass that one, "
                         "or the run folder to take its newest")
    return p


class RunStateCallback(Callback):
    """Keeps ``fit-state.json`` of the run folder ``root`` (on the main process only)."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)

    def _write(self, trainer: Trainer, status: str) -> None:
        if not trainer.is_global_zero:
            return
        old = read_run_state(self.root) or {}
        dirs = {str(Path(cb.dirpath).resolve()) for cb in trainer.checkpoint_callbacks
                if isinstance(cb, ModelCheckpoint) and cb.dirpath}
        dirs |= {d for d in old.get("checkpoint_dirs", []) if isinstance(d, str)}
        self.root.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.root / RUN_STATE, {
            "status": status, "pid": os.getpid(), "step": trainer.global_step, "command": sys.argv,
            "checkpoint_dirs": sorted(dirs), "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z")})

    def on_train_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        self._write(trainer, "running")

    def on_exception(self, trainer: Trainer, pl_module: LightningModule, exception: BaseException) -> None:
        self._write(trainer, "interrupted" if isinstance(exception, KeyboardInterrupt) else "failed")

    def on_fit_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        self._write(trainer, "finished")
