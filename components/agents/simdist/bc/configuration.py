"""``SimDistBCConfig``: what SimDist+BC adds to a SimDist agent (its folder's ``simdist_bc.json``)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from simdist.fsutil import read_json_object
from simdist.model.config import ConfigError, config_file

#: the file of a SimDist+BC folder holding :class:`SimDistBCConfig` (beside SimDist's ``planner.json``)
BC_CONFIG_NAME = "simdist_bc.json"


@dataclass
class SimDistBCConfig:
    """``demos``: the dataset folder of demonstrations the base policy head is cloned on after each dynamics
    finetuning (None: finetuning is SimDist's); ``bc_epochs``, ``bc_windows_per_epoch``, ``bc_lr``: the BC
    phase's schedule (None: the dynamics phase's ``epochs``, ``windows_per_epoch`` and ``lr``)."""

    demos: str | None = None
    bc_epochs: int | None = None
    bc_windows_per_epoch: int | None = None
    bc_lr: float | None = None

    def __post_init__(self) -> None:
        if self.demos is not None:
            if not isinstance(self.demos, (str, Path)) or not str(self.demos):
                raise ValueError(f"demos must be a dataset folder path or None, got {self.demos!r}")
            self.demos = str(self.demos)
        for name in ("bc_epochs", "bc_windows_per_epoch"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
        lr = self.bc_lr
        if lr is not None and (isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr)
                               or lr <= 0):
            raise ValueError(f"bc_lr must be a positive number or None, got {lr!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SimDistBCConfig:
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"unknown SimDist+BC settings {unknown}")
        return cls(**data)

    @classmethod
    def from_folder(cls, folder: str | Path) -> SimDistBCConfig:
        """The folder's ``simdist_bc.json`` (defaults, i.e. no demos, when it has none)."""
        path = Path(folder) / BC_CONFIG_NAME
        if not path.is_file():
            return cls()
        data = read_json_object(path, ConfigError)
        with config_file(path):
            return cls.from_dict(data)
