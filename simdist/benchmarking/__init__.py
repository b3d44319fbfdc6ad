"""Benchmarking on this machine, in one place: timing and peak memory, the machine's description, random inputs of a
model's shapes (``measure``), planner FLOP and throughput (``planning``) and training throughput (``training``).

``simdist bench`` (:mod:`simdist.tools.bench`) is its command line; the scripts in ``benchmarks/`` (environment
throughput, the device check) stay standalone scripts on the public API."""
