"""The action-information diagnostic as a validation metric of every world-model training run (a callback)."""

from __future__ import annotations

from typing import Any

import lightning as L
import numpy as np

from simdist.diagnostics.action_information import action_information, to_device
from simdist.rows import concat_rows, take_rows


class ActionInformationCallback(L.Callback):
    """After each validation epoch, logs ``val/diag/*``: the action-information report
    (:func:`simdist.diagnostics.action_information.action_information`) on the first ``windows`` held-out windows,
    the same windows every epoch. Runs without validation data do nothing; the return correlation needs value labels."""

    def __init__(self, windows: int = 512, seed: int = 0) -> None:
        if windows < 2:
            raise ValueError(f"ActionInformationCallback: windows must be >= 2, got {windows}")
        self.windows, self.seed = int(windows), int(seed)
        self._batch: dict[str, Any] | None = None

    def _held_out(self, trainer: L.Trainer) -> dict[str, Any] | None:
        if self._batch is None:
            loaders = trainer.val_dataloaders
            loader = loaders[0] if isinstance(loaders, list | tuple) and loaders else loaders
            if loader is None or isinstance(loader, list | tuple):
                return None
            parts, count = [], 0
            for batch in loader:
                parts.append(batch)
                count += len(batch["fut_acts"])
                if count >= self.windows:
                    break
            if count < 2:
                return None
            self._batch = take_rows(concat_rows(parts), np.arange(min(count, self.windows)))
        return self._batch

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.sanity_checking:
            return
        batch = self._held_out(trainer)
        if batch is None:
            return
        model: Any = pl_module.world_model
        report = action_information(model, to_device(batch, model.device), seed=self.seed)
        for name, value in report.metrics("val/diag/").items():
            pl_module.log(name, value, on_epoch=True, batch_size=report.windows)
