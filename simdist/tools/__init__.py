"""Command-line tools behind ``simdist <command>``."""
