"""Experiment runners and their committed results; the runners run as modules from the repository root
(``python -m results.go2.run ...``) and share ``results.runner``."""
