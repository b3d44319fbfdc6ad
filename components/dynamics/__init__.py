"""Registered dynamics: ``transformer`` (multi-step), ``mlp`` (autoregressive) and ``ensemble`` (K members of
either, beyond the paper)."""

from . import ensemble, mlp, transformer

__all__ = ["ensemble", "mlp", "transformer"]
