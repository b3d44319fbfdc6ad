"""Registered dynamics: ``transformer`` (multi-step) and ``mlp`` (autoregressive)."""

from . import mlp, transformer

__all__ = ["mlp", "transformer"]
