"""Scaling measurements (docs/distributed.md): ``python -m results.scaling.measure``."""
