"""The go2 runners (``python -m results.go2.…``)."""
