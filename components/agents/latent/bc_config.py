"""``BCConfig``: everything needed to rebuild a single-step behaviour-cloning policy (its ``config.json``)."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from simdist.model.config import ComponentSpec, ConfigError, WorldModelConfig, check_int, dataclass_fields_from_dict

#: Version of the BC ``config.json`` layout.
BC_CONFIG_SCHEMA_VERSION = 1


def _finite_list(value: Any, name: str, length: int | None = None) -> list[float]:
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise ConfigError(f"{name} must be a list of numbers, got {value!r}")
    out = list(value)
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) for v in out):
        raise ConfigError(f"{name} must hold finite numbers, got {out!r}")
    if length is not None and len(out) != length:
        raise ConfigError(f"{name} has {len(out)} entries, expected {length}")
    return [float(v) for v in out]


@dataclass
class BCConfig:
    """A BC policy: SimDist's ``encoder`` (a registered ``encoder`` spec, as a world-model config writes it)
    whose current-step latent (with the current command when ``command_dim`` > 0) feeds an MLP of ``hidden``
    sizes that outputs the action, clipped to ``action_low``/``action_high``.

    ``stats`` are the normaliser statistics ``{"obs/<group>" | "actions" | "commands": {"mean", "std"}}``
    (None: not fitted yet; training fits them from the dataset, and a saved folder records them).
    """

    obs_spec: dict[str, list[int]]
    action_dim: int
    encoder: ComponentSpec | dict[str, Any] | str
    action_low: list[float] | None = None
    action_high: list[float] | None = None
    command_dim: int = 0
    history: int = 25
    latent_dim: int = 64
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    stats: dict[str, dict[str, list[float]]] | None = None
    dt: float = 0.02
    task: str = ""
    robot: str = ""
    schema_version: int = BC_CONFIG_SCHEMA_VERSION

    def __post_init__(self) -> None:
        if not isinstance(self.obs_spec, Mapping) or not self.obs_spec:
            raise ConfigError(f"obs_spec must name at least one observation group, got {self.obs_spec!r}")
        spec: dict[str, list[int]] = {}
        for group, shape in self.obs_spec.items():
            dims = list(shape) if isinstance(shape, (list, tuple)) else None
            if not dims or any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in dims):
                raise ConfigError(f"obs_spec[{group!r}] must be a shape of positive sizes, got {shape!r}")
            spec[str(group)] = [int(s) for s in dims]
        self.obs_spec = spec
        for name, low in (("action_dim", 1), ("command_dim", 0), ("history", 1), ("latent_dim", 1)):
            check_int(getattr(self, name), name, low)
        try:
            self.encoder = ComponentSpec.parse(self.encoder)
        except ConfigError as err:
            raise ConfigError(f"encoder: {err}") from err
        if not isinstance(self.encoder.name, str) or not self.encoder.name:
            raise ConfigError(f"encoder must name a registered encoder, got {self.encoder.name!r}")
        if isinstance(self.hidden, (str, bytes)) or not isinstance(self.hidden, (list, tuple)):
            raise ConfigError(f"hidden must be a list of layer sizes, got {self.hidden!r}")
        self.hidden = [check_int(h, f"hidden[{i}]") for i, h in enumerate(self.hidden)]
        if (self.action_low is None) != (self.action_high is None):
            raise ConfigError("action_low and action_high must be given together (or neither)")
        if self.action_low is not None and self.action_high is not None:
            self.action_low = _finite_list(self.action_low, "action_low", self.action_dim)
            self.action_high = _finite_list(self.action_high, "action_high", self.action_dim)
            bad = [i for i, (lo, hi) in enumerate(zip(self.action_low, self.action_high)) if lo > hi]
            if bad:
                raise ConfigError(f"action_low exceeds action_high in dims {bad}")
        if not (isinstance(self.dt, (int, float)) and not isinstance(self.dt, bool) and math.isfinite(self.dt)
                and self.dt > 0):
            raise ConfigError(f"dt must be a positive number of seconds, got {self.dt!r}")
        if self.schema_version != BC_CONFIG_SCHEMA_VERSION:
            raise ConfigError(f"schema_version {self.schema_version!r} is not one this simdist reads "
                              f"({BC_CONFIG_SCHEMA_VERSION})")
        if self.stats is not None:
            self.stats = self._check_stats(self.stats)

    def _check_stats(self, stats: Any) -> dict[str, dict[str, list[float]]]:
        """Each entry a finite ``mean``/``std`` pair of the size its key implies (keys the model does not read,
        such as ``rewards``, are dropped); the normaliser checks that none it needs is missing."""
        if not isinstance(stats, Mapping):
            raise ConfigError(f"stats must map keys to {{'mean', 'std'}}, got {type(stats).__name__}")
        sizes = {f"obs/{g}": math.prod(s) for g, s in self.obs_spec.items()}
        sizes["actions"] = self.action_dim
        if self.command_dim:
            sizes["commands"] = self.command_dim
        out = {}
        for key, entry in stats.items():
            if key not in sizes:
                continue
            if not isinstance(entry, Mapping) or not {"mean", "std"} <= set(entry):
                raise ConfigError(f"stats[{key!r}] must hold 'mean' and 'std', got {entry!r}")
            mean = _finite_list(entry["mean"], f"stats[{key!r}].mean", sizes[key])
            std = _finite_list(entry["std"], f"stats[{key!r}].std", sizes[key])
            if any(s < 0 for s in std):
                raise ConfigError(f"stats[{key!r}].std must be >= 0")
            out[key] = {"mean": mean, "std": std}
        return out

    # ------------------------------------------------------------------ construction and serialisation
    @classmethod
    def from_world_model_config(cls, cfg: WorldModelConfig, *, hidden: list[int] | None = None,
                                stats: Mapping[str, Any] | None = None) -> BCConfig:
        """The BC counterpart of a SimDist world model: its observations, actions and bounds, command, history,
        latent size and encoder spec (copied), with an MLP head of ``hidden`` sizes."""
        return cls(
            obs_spec=copy.deepcopy(cfg.obs_spec), action_dim=cfg.action_dim,
            encoder={"name": cfg.encoder.name, "kwargs": copy.deepcopy(cfg.encoder.kwargs)},
            action_low=None if cfg.action_low is None else list(cfg.action_low),
            action_high=None if cfg.action_high is None else list(cfg.action_high),
            command_dim=cfg.command_dim, history=cfg.history, latent_dim=cfg.latent_dim,
            hidden=[256, 256] if hidden is None else list(hidden),
            stats=None if stats is None else dict(stats), dt=cfg.dt, task=cfg.task, robot=cfg.robot,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BCConfig:
        """From a ``config.json`` dict (``agent_type`` and ``simdist_version`` are ignored)."""
        return cls(**dataclass_fields_from_dict(cls, data, "BC", BC_CONFIG_SCHEMA_VERSION))

    def replace(self, **changes: Any) -> BCConfig:
        return BCConfig.from_dict({**self.to_dict(), **changes})
