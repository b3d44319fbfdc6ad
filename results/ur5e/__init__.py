"""The ur5e runners (``python -m results.ur5e.…``)."""
