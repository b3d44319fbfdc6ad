"""``DiffusionPolicyConfig``: everything needed to rebuild a Diffusion Policy agent (its ``config.json``).

Defaults follow the official CNN-based low-dim Diffusion Policy (Chi et al.; BASELINES.md 5.2-5.4) except where
CPU cost forces a smaller setting, marked "CPU scale" below.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any

from simdist.components.agents.latent.bc_config import BCConfig
from simdist.model.config import ConfigError, check_int, dataclass_fields_from_dict

__all__ = ["DP_CONFIG_SCHEMA_VERSION", "SAMPLERS", "SETTINGS", "DiffusionPolicyConfig"]

#: Version of the Diffusion Policy ``config.json`` layout.
DP_CONFIG_SCHEMA_VERSION = 1
SAMPLERS = ("ddim", "ddpm")
BETA_SCHEDULES = ("squaredcos_cap_v2", "linear", "scaled_linear")
#: a dimension whose data range is below this is not scaled (only centred), as the official normaliser does
RANGE_EPS = 1e-4


def _number(value: Any, name: str, low: float, high: float, *, low_open: bool = False,
            high_open: bool = False) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value > low if low_open else value >= low) and (value < high if high_open else value <= high)
    if not ok:
        span = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
        raise ConfigError(f"{name} must be a number in {span}, got {value!r}")
    return float(value)


def _numbers(value: Any, name: str, length: int) -> list[float]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise ConfigError(f"{name} must be a list of {length} numbers, got {value!r}")
    out = [_number(v, f"{name}[{i}]", -math.inf, math.inf) for i, v in enumerate(value)]
    if len(out) != length:
        raise ConfigError(f"{name} has {len(out)} entries, expected {length}")
    return out


@dataclass
class DiffusionPolicyConfig:
    """A Diffusion Policy on SimDist's frozen encoder.

    ``policy`` is the :class:`~simdist.components.agents.latent.BCConfig` of the frozen feature extractor (SimDist's
    encoder and normaliser statistics; its MLP head is unused). The condition is the encoder latent of the last
    ``obs_steps`` (T_o) steps, flattened, ‖ the current normalised command. The U-Net denoises a chunk of
    ``horizon`` (T_p) actions, of which ``action_steps`` (T_a) are executed before replanning.

    ``action_min``/``action_max`` are the data's per-dimension action range, mapped to [-1, 1] (None until
    trained). Training settings (``lr`` ... ``prior_fraction``) are kept so that finetuning reuses them.
    """

    policy: BCConfig | dict[str, Any]
    # horizons (official CNN low-dim: T_o = 2, T_p = 16, T_a = 8)
    obs_steps: int = 2
    horizon: int = 16
    action_steps: int = 8
    # U-Net (official low-dim down_dims [256, 512, 1024]; CPU scale default [64, 128, 256])
    down_dims: list[int] = field(default_factory=lambda: [64, 128, 256])
    kernel_size: int = 5
    n_groups: int = 8
    step_embed_dim: int = 256
    # noise schedule and sampler (official: K = 100, cosine betas, clipping; DDIM with 16 steps on the robot)
    num_train_timesteps: int = 100
    beta_schedule: str = "squaredcos_cap_v2"
    clip_sample: bool = True
    sampler: str = "ddim"
    inference_steps: int = 16
    # action normalisation, fitted from the data
    action_min: list[float] | None = None
    action_max: list[float] | None = None
    # training recipe (official: AdamW 1e-4, betas (0.95, 0.999), wd 1e-6, 500 warmup steps, cosine, EMA 0.75)
    lr: float = 1e-4
    betas: list[float] = field(default_factory=lambda: [0.95, 0.999])
    weight_decay: float = 1e-6
    warmup_steps: int = 500
    batch_size: int = 64  # official low-dim 256; CPU scale
    ema_power: float = 0.75
    ema_max_decay: float = 0.9999
    prior_fraction: float = 0.5  # share of each co-training batch drawn from the prior (simulation) windows
    schema_version: int = DP_CONFIG_SCHEMA_VERSION

    def __post_init__(self) -> None:
        if isinstance(self.policy, Mapping):
            try:
                self.policy = BCConfig.from_dict(self.policy)
            except ConfigError as err:
                raise ConfigError(f"policy: {err}") from err
        if not isinstance(self.policy, BCConfig):
            raise ConfigError(f"policy must be a BCConfig or its dict, got {type(self.policy).__name__}")
        if self.schema_version != DP_CONFIG_SCHEMA_VERSION:
            raise ConfigError(f"schema_version {self.schema_version!r} is not one this simdist reads "
                              f"({DP_CONFIG_SCHEMA_VERSION})")
        for name in ("obs_steps", "horizon", "action_steps", "kernel_size", "n_groups", "num_train_timesteps",
                     "inference_steps", "batch_size"):
            check_int(getattr(self, name), name)
        check_int(self.warmup_steps, "warmup_steps", 0)
        if self.action_steps > self.horizon - self.obs_steps + 1:
            raise ConfigError(f"action_steps ({self.action_steps}) must be <= horizon - obs_steps + 1 "
                              f"({self.horizon - self.obs_steps + 1}): the executed actions must lie in the chunk")
        if self.kernel_size % 2 == 0:
            raise ConfigError(f"kernel_size must be odd (same-length convolutions), got {self.kernel_size}")
        if check_int(self.step_embed_dim, "step_embed_dim", 4) % 2:
            raise ConfigError(f"step_embed_dim must be even (sin and cos halves), got {self.step_embed_dim}")
        if isinstance(self.down_dims, (str, bytes)) or not isinstance(self.down_dims, (list, tuple)) \
                or not self.down_dims:
            raise ConfigError(f"down_dims must be a non-empty list of channel counts, got {self.down_dims!r}")
        self.down_dims = [check_int(d, f"down_dims[{i}]") for i, d in enumerate(self.down_dims)]
        bad = [d for d in self.down_dims if d % self.n_groups]
        if bad:
            raise ConfigError(f"down_dims {self.down_dims} must be multiples of n_groups ({self.n_groups}) for "
                              f"GroupNorm; {bad} are not")
        levels = 2 ** (len(self.down_dims) - 1)
        if self.horizon % levels:
            raise ConfigError(f"horizon ({self.horizon}) must be divisible by {levels}: the U-Net halves it "
                              f"{len(self.down_dims) - 1} times (len(down_dims) - 1)")
        if self.beta_schedule not in BETA_SCHEDULES:
            raise ConfigError(f"beta_schedule must be one of {BETA_SCHEDULES}, got {self.beta_schedule!r}")
        if not isinstance(self.clip_sample, bool):
            raise ConfigError(f"clip_sample must be true or false, got {self.clip_sample!r}")
        if self.sampler not in SAMPLERS:
            raise ConfigError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        if self.inference_steps > self.num_train_timesteps:
            raise ConfigError(f"inference_steps ({self.inference_steps}) must be <= num_train_timesteps "
                              f"({self.num_train_timesteps})")
        self._check_action_range()
        self.lr = _number(self.lr, "lr", 0.0, math.inf, low_open=True)
        if isinstance(self.betas, (str, bytes)) or not isinstance(self.betas, (list, tuple)) or len(self.betas) != 2:
            raise ConfigError(f"betas must be a pair of numbers in [0, 1), got {self.betas!r}")
        self.betas = [_number(b, f"betas[{i}]", 0.0, 1.0, high_open=True) for i, b in enumerate(self.betas)]
        self.weight_decay = _number(self.weight_decay, "weight_decay", 0.0, math.inf)
        self.ema_power = _number(self.ema_power, "ema_power", 0.0, math.inf, low_open=True)
        self.ema_max_decay = _number(self.ema_max_decay, "ema_max_decay", 0.0, 1.0, high_open=True)
        self.prior_fraction = _number(self.prior_fraction, "prior_fraction", 0.0, 1.0)

    def _check_action_range(self) -> None:
        if (self.action_min is None) != (self.action_max is None):
            raise ConfigError("action_min and action_max must be given together (or neither)")
        if self.action_min is None or self.action_max is None:
            return
        self.action_min = _numbers(self.action_min, "action_min", self.action_dim)
        self.action_max = _numbers(self.action_max, "action_max", self.action_dim)
        bad = [i for i, (lo, hi) in enumerate(zip(self.action_min, self.action_max)) if lo > hi]
        if bad:
            raise ConfigError(f"action_min exceeds action_max in dims {bad}")

    # ------------------------------------------------------------------ derived sizes
    @property
    def bc(self) -> BCConfig:
        """:attr:`policy`, typed."""
        assert isinstance(self.policy, BCConfig)
        return self.policy

    @property
    def action_dim(self) -> int:
        return self.bc.action_dim

    @property
    def cond_dim(self) -> int:
        """Size of the U-Net's global condition: T_o latents ‖ the command."""
        return self.obs_steps * self.bc.latent_dim + self.bc.command_dim

    @property
    def history(self) -> int:
        """Past actions the agent's observation history keeps: the encoder's history plus T_o - 1 steps."""
        return self.bc.history + self.obs_steps - 1

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["policy"] = self.bc.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DiffusionPolicyConfig:
        """From a ``config.json`` dict (``agent_type`` and ``simdist_version`` are ignored)."""
        return cls(**dataclass_fields_from_dict(cls, data, "diffusion_policy", DP_CONFIG_SCHEMA_VERSION))

    def replace(self, **changes: Any) -> DiffusionPolicyConfig:
        return DiffusionPolicyConfig.from_dict({**self.to_dict(), **changes})


#: the settings a caller may choose (``train(**settings)``, ``from_world_model(**settings)``) and their defaults
SETTINGS: dict[str, Any] = {
    f.name: (f.default_factory() if f.default_factory is not MISSING else f.default)  # type: ignore[misc]
    for f in fields(DiffusionPolicyConfig)
    if f.name not in ("policy", "action_min", "action_max", "schema_version")
}


def check_settings(settings: Mapping[str, Any]) -> None:
    """A ConfigError naming any key of ``settings`` that is not a setting (values are checked by the config)."""
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise ConfigError(f"diffusion_policy: unknown settings {unknown}; it takes {sorted(SETTINGS)}")
