"""``simdist fit|validate|test`` on LightningCLI: recipes choose the module, the data and the trainer."""

from __future__ import annotations

import warnings

from lightning.pytorch.cli import LightningCLI

from simdist.data.datamodule import TrajectoryDataModule
from simdist.training.module import WorldModelModule


class SimDistCLI(LightningCLI):
    """LightningCLI with simdist's module family (``class_path`` in the recipe) and trajectory data."""

    def __init__(self, args: list[str] | None = None, run: bool = True) -> None:
        # Frozen components are kept in eval mode on purpose during finetuning.
        warnings.filterwarnings("ignore", message=".*modules in eval mode.*")
        super().__init__(
            WorldModelModule,
            TrajectoryDataModule,
            subclass_mode_model=True,
            save_config_kwargs={"overwrite": True},
            args=args,
            run=run,
        )
