"""The baselines runners (``python -m results.baselines.…``)."""
