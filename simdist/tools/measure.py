"""Timing statistics and peak memory, shared by the sections of ``simdist bench``."""

from __future__ import annotations

import os
import resource
import statistics
import threading
from collections.abc import Sequence

import torch


def summarize(values: Sequence[float]) -> dict[str, float]:
    """Median, p99 (nearest rank), mean, min and count of ``values``."""
    xs = sorted(values)
    p99 = xs[min(len(xs) - 1, max(0, -(-99 * len(xs) // 100) - 1))]
    return {"median": statistics.median(xs), "p99": p99, "mean": statistics.fmean(xs), "min": xs[0],
            "n": len(xs)}


class PeakMemory:
    """Peak memory during the block: CUDA allocator peak, or the sampled resident set size on CPU.

    ``extra_mib`` is the rise above the level at entry (on CPU a lower bound: memory the process
    already holds from earlier sections is reused); ``peak`` is the absolute peak in bytes.
    """

    def __init__(self, device: torch.device, interval: float = 0.005) -> None:
        self.device, self.interval, self.peak = device, interval, 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> PeakMemory:
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
            self._base = torch.cuda.memory_allocated(self.device)
        else:
            self._base = _rss()
            self.peak = self._base
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc: object) -> None:
        if self.device.type == "cuda":
            self.peak = torch.cuda.max_memory_allocated(self.device)
        else:
            self._stop.set()
            assert self._thread is not None
            self._thread.join()
            self.peak = max(self.peak, _rss())

    @property
    def extra_mib(self) -> float:
        return (self.peak - self._base) / 2**20


def _rss() -> int:
    """Current resident set size in bytes (Linux), else the lifetime peak."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
