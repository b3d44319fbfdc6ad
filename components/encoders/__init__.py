"""Registered encoders: ``mlp``, ``heightmap_cnn``, ``quadruped``, ``timm_image``. Every module of this folder is
imported, so a new encoder is a new file here: nothing in this file names one."""

from simdist.registry import import_submodules

__all__ = import_submodules(__name__, __path__)
