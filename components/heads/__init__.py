"""Registered heads: reward/value ``transformer`` and ``mlp``; policy ``transformer``."""

from . import policy, sequence

__all__ = ["policy", "sequence"]
