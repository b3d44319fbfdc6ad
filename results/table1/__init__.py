"""The table1 runners (``python -m results.table1.…``)."""
