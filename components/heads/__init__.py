"""Registered heads: reward/value ``transformer`` and ``mlp``; policy ``transformer``; decoder ``mlp``, ``pixels``."""

from . import decoder, pixel_decoder, policy, sequence

__all__ = ["decoder", "pixel_decoder", "policy", "sequence"]
