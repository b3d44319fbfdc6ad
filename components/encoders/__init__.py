"""Registered encoders: ``mlp``, ``heightmap_cnn``, ``quadruped``, ``timm_image``."""

from . import heightmap, mlp, quadruped, timm_image

__all__ = ["heightmap", "mlp", "quadruped", "timm_image"]
