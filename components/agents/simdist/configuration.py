"""``SimDistAgentConfig``: the planner settings a SimDist agent acts with (its folder's ``planner.json``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simdist.fsutil import read_json_object
from simdist.hub.files import PLANNER_NAME
from simdist.model.config import ConfigError, config_file
from simdist.registry import RegistryError, get


@dataclass
class SimDistAgentConfig:
    """``planner``: a registered planner name; ``settings``: its constructor keywords; ``temporal_ensemble``:
    the decay of :class:`~simdist.planning.TemporalEnsemble` (None: off)."""

    planner: str = "mppi"
    settings: dict[str, Any] = field(default_factory=dict)
    temporal_ensemble: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.planner, str) or not self.planner:
            raise ValueError(f"planner must be a registered planner name, got {self.planner!r}")
        decay = self.temporal_ensemble
        if decay is not None and not (isinstance(decay, (int, float)) and math.isfinite(decay) and 0 <= decay < 1):
            raise ValueError(f"temporal_ensemble must be a decay in [0, 1) or None, got {decay!r}")

    @classmethod
    def from_planner_dict(cls, data: dict[str, Any]) -> SimDistAgentConfig:
        """From the flat ``planner.json`` form: ``{"planner": ..., "temporal_ensemble": ..., **settings}``."""
        rest = dict(data)
        return cls(planner=rest.pop("planner", "mppi"), temporal_ensemble=rest.pop("temporal_ensemble", None),
                   settings=rest)

    def to_planner_dict(self) -> dict[str, Any]:
        """The flat form :func:`simdist.planning.build_planner` and ``planner.json`` use."""
        return {"planner": self.planner, **self.settings, "temporal_ensemble": self.temporal_ensemble}

    @classmethod
    def from_folder(cls, folder: Path) -> SimDistAgentConfig | None:
        """The folder's ``planner.json``, or None when it has none."""
        path = Path(folder) / PLANNER_NAME
        if not path.is_file():
            return None
        data = read_json_object(path, ConfigError)
        with config_file(path):
            config = cls.from_planner_dict(data)
            try:
                planner = get("planner", config.planner)
            except RegistryError as err:
                raise ConfigError(f"key 'planner': {err}") from err
            schema = getattr(planner, "config_class", None)
            if schema is not None:  # every value is checked when the folder is read, whichever planner acts
                schema.from_dict(config.settings)
        return config
