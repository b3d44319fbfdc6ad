"""Registered heads: reward/value ``transformer`` and ``mlp``; policy ``transformer``; decoder ``mlp``, ``pixels``.
Every module of this folder is imported: a new head is a new file here."""

from simdist.registry import import_submodules

__all__ = import_submodules(__name__, __path__)
