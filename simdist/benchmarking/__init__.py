"""Benchmarking on this machine: timing and peak memory, random inputs of a model's shapes, planner and training
throughput. ``simdist bench`` is its command line; the scripts in ``benchmarks/`` use it."""
