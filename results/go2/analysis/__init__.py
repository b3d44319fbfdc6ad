"""The Go2 analysis modules: ``python -m results.go2.analysis.NAME --help``."""
