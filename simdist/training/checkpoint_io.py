"""Checkpoint files written atomically beside their target, so a killed run never leaves a truncated one."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import torch
from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO
from lightning.pytorch import Trainer

from simdist.fsutil import remove_stale_temporaries


class AtomicCheckpointIO(TorchCheckpointIO):
    """``TorchCheckpointIO`` that writes a local checkpoint to ``.NAME.XXXXXXXX.tmp`` in the target's folder,
    fsyncs it and renames it over the target (Lightning's own save goes through a temporary file in the
    system temp folder, which a kill leaves behind and which is copied, not renamed, across file systems).
    The first save into a folder removes the temporaries an earlier, killed run left there."""

    def __init__(self) -> None:
        super().__init__()
        self._swept: set[Path] = set()

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any | None = None) -> None:
        if storage_options is not None or "://" in str(path):
            super().save_checkpoint(checkpoint, path, storage_options)
            return
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.parent not in self._swept:
            remove_stale_temporaries(target.parent)
            self._swept.add(target.parent)
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            with open(tmp, "wb") as f:
                torch.save(checkpoint, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)


def use_atomic_checkpoints(trainer: Trainer) -> None:
    """Give ``trainer`` an :class:`AtomicCheckpointIO` unless a recipe chose its own checkpoint plugin."""
    strategy = trainer.strategy
    if type(strategy.checkpoint_io) is TorchCheckpointIO:
        strategy.checkpoint_io = AtomicCheckpointIO()
