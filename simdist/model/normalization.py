"""Per-dimension z-score statistics stored as buffers, so they travel inside ``model.safetensors``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor, nn

STD_FLOOR = 1e-8


def _buffer_name(key: str) -> str:
    return key.replace("/", "__")


class Normalizer(nn.Module):
    """Holds ``mean``/``std`` for each named key: ``obs/<group>``, ``actions``, ``commands``, ``rewards``,
    ``values``. ``normalize`` computes ``(x - mean) / (std + 1e-8)``; ``denormalize`` inverts it.

    Statistics are buffers, never parameters: they are saved with the weights and never trained.
    """

    fitted: Tensor  # a bool buffer: statistics were set

    def __init__(self, shapes: Mapping[str, Sequence[int]]) -> None:
        super().__init__()
        self.keys = list(shapes)
        for key, shape in shapes.items():
            self.register_buffer(_buffer_name(key) + "_mean", torch.zeros(*shape))
            self.register_buffer(_buffer_name(key) + "_std", torch.ones(*shape))
        self.register_buffer("fitted", torch.zeros((), dtype=torch.bool))

    def mean(self, key: str) -> Tensor:
        """The mean buffer of group ``key``."""
        return getattr(self, _buffer_name(key) + "_mean")

    def std(self, key: str) -> Tensor:
        """The standard-deviation buffer of group ``key``."""
        return getattr(self, _buffer_name(key) + "_std")

    def normalize(self, key: str, x: Tensor) -> Tensor:
        """``x`` of group ``key`` standardised by its mean and std (floored)."""
        return (x - self.mean(key)) / (self.std(key) + STD_FLOOR)

    def denormalize(self, key: str, x: Tensor) -> Tensor:
        """The inverse of :meth:`normalize`."""
        return x * (self.std(key) + STD_FLOOR) + self.mean(key)

    @torch.no_grad()
    def set_stats(self, stats: Mapping[str, Mapping[str, Any]]) -> None:
        """Load ``{key: {"mean": [...], "std": [...]}}``; every key of this normaliser must be present."""
        missing = [k for k in self.keys if k not in stats]
        if missing:
            raise KeyError(f"normalisation statistics are missing keys {missing}; have {sorted(stats)}")
        for key in self.keys:
            for part in ("mean", "std"):
                buf = getattr(self, f"{_buffer_name(key)}_{part}")
                value = torch.as_tensor(stats[key][part], dtype=buf.dtype).reshape(-1)
                if value.numel() != buf.numel():
                    raise ValueError(
                        f"statistics {key!r}.{part} have {value.numel()} values, expected {buf.numel()}"
                    )
                if not torch.isfinite(value).all():
                    raise ValueError(f"statistics {key!r}.{part} contain NaN or Inf")
                buf.copy_(value.reshape(buf.shape))
            std = self.std(key)
            std.clamp_(min=STD_FLOOR ** 0.5)
        self.fitted.fill_(True)

    def stats(self) -> dict[str, dict[str, list[float]]]:
        """Every group's mean and std as lists."""
        return {k: {"mean": self.mean(k).tolist(), "std": self.std(k).tolist()} for k in self.keys}


def normalize_groups(normalizer: Normalizer, obs: Mapping[str, Tensor], obs_spec: Mapping[str, Sequence[int]],
                     raw_keys: frozenset[str] | set[str], reader: str) -> dict[str, Tensor]:
    """The groups of ``obs_spec`` from ``obs``, normalised with their ``obs/<key>`` statistics (``raw_keys`` pass
    unchanged; keys outside the spec are ignored). Raises, naming ``reader``, on a missing or misshapen group."""
    out = {}
    for key, shape in obs_spec.items():
        if key not in obs:
            raise KeyError(f"observation group {key!r} missing; {reader} reads {list(obs_spec)}")
        x = obs[key]
        if list(x.shape[x.dim() - len(shape):]) != list(shape):
            raise ValueError(f"observation {key!r} has trailing shape {tuple(x.shape)}, expected (..., {shape})")
        out[key] = x if key in raw_keys else normalizer.normalize(f"obs/{key}", x)
    return out
