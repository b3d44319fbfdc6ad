"""The UR5e analysis modules: ``python -m results.ur5e.analysis.NAME --help``."""
