"""Built-in simdist components (installed as ``simdist.components``); importing registers them."""

from . import dynamics, encoders, freeze_policies, heads, planners

__all__ = ["dynamics", "encoders", "freeze_policies", "heads", "planners"]
