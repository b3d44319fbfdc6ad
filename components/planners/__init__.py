"""Registered planners: ``mppi`` and ``policy``."""
