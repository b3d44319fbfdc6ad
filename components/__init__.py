"""Built-in simdist components (installed as ``simdist.components``); importing registers them."""

from . import dynamics, encoders, heads, planners

__all__ = ["dynamics", "encoders", "heads", "planners"]
