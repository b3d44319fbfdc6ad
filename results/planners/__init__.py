"""Planners side by side at equal compute (docs/planners.md): ``python -m results.planners.cem``."""
