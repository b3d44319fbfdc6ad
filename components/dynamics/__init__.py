"""Registered dynamics: ``transformer`` (multi-step), ``mlp`` (autoregressive) and ``ensemble`` (K members of
either, beyond the paper). Every module of this folder is imported: a new dynamics is a new file here."""

from simdist.registry import import_submodules

__all__ = import_submodules(__name__, __path__)
