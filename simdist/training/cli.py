"""``simdist fit|validate|test`` on LightningCLI: recipes choose the module, the data and the trainer.

The module is any ``LightningModule`` named by ``class_path`` (simdist's world-model modules, or an agent's
own, e.g. a baseline's); the data is the trajectory DataModule.
"""

from __future__ import annotations

import warnings

from lightning.pytorch import LightningModule
from lightning.pytorch.cli import LightningCLI

from simdist.data.datamodule import TrajectoryDataModule


class SimDistCLI(LightningCLI):
    """LightningCLI with any LightningModule (``class_path`` in the recipe) and trajectory data."""

    def __init__(self, args: list[str] | None = None, run: bool = True) -> None:
        # Frozen components are kept in eval mode on purpose during finetuning.
        warnings.filterwarnings("ignore", message=".*modules in eval mode.*")
        super().__init__(
            LightningModule,
            TrajectoryDataModule,
            subclass_mode_model=True,
            save_config_kwargs={"overwrite": True},
            args=args,
            run=run,
        )
