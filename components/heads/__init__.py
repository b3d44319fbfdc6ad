"""Registered heads: reward/value ``transformer`` and ``mlp``; policy ``transformer``; decoder ``mlp``."""

from . import decoder, policy, sequence

__all__ = ["decoder", "policy", "sequence"]
