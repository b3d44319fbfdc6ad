"""How many torch threads a small (one-chunk) planner tick runs on: fixed, or chosen by timing the first ticks.

On a 2-core CPU a real-time tick of a few dozen sequences is faster on one thread than on two (a matrix
product that small splits poorly, and every intra-op barrier waits for a thread the OS may have given to
another process; docs/speed.md). ``tick_threads`` says what to do:

* ``None``: the caller's torch threads (``torch.get_num_threads()``), on the calling thread;
* an int ``n``: at most ``n`` threads, on a private thread when ``n`` is below the caller's count;
* ``"auto"``: the first :data:`CALIBRATION_TICKS` ticks alternate between one thread and the caller's count
  (after one warm-up tick each), and the setting with the lower 90th-percentile tick time is kept. The
  calibration ticks are ordinary ticks (the plans do not depend on the thread count), so it costs nothing
  but their own time; :attr:`ThreadChoice.report` says what was measured and chosen, and it is logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)

#: timed calibration ticks (half per candidate), after one warm-up tick per candidate
CALIBRATION_TICKS = 40

T = TypeVar("T")


def check_tick_threads(value: Any) -> int | str | None:
    """``tick_threads`` validated: None, ``"auto"`` or a positive int."""
    if value is None or value == "auto":
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"tick_threads must be None, 'auto' or a positive int, got {value!r}")
    return value


class ThreadChoice:
    """The thread count of one-chunk ticks under ``tick_threads`` (module docstring) for a caller on
    ``caller_threads`` threads; :meth:`run` times the tick while calibrating."""

    def __init__(self, tick_threads: int | str | None, calibration_ticks: int = CALIBRATION_TICKS) -> None:
        self.tick_threads = check_tick_threads(tick_threads)
        self.calibration_ticks = int(calibration_ticks)
        self.chosen: int | None = None
        self._times: dict[int, list[float]] = {}
        self._ticks = 0
        self.report: dict[str, Any] = {"tick_threads": self.tick_threads}

    def threads(self, caller_threads: int) -> int:
        """Threads for the next tick."""
        if self.tick_threads is None:
            return caller_threads
        if isinstance(self.tick_threads, int):
            return min(self.tick_threads, caller_threads)
        if caller_threads <= 1:
            return 1
        if self.chosen is not None:
            return min(self.chosen, caller_threads)
        return (1, caller_threads)[self._ticks % 2]

    def run(self, threads: int, caller_threads: int, tick: Callable[[], T]) -> T:
        """``tick()`` on ``threads`` threads, recorded while an ``"auto"`` choice is open."""
        if self.tick_threads == "auto" and caller_threads <= 1 and self.chosen is None:
            self.report = {"tick_threads": "auto", "chosen": 1, "caller_threads": caller_threads}
        if self.tick_threads != "auto" or self.chosen is not None or caller_threads <= 1:
            return tick()
        t0 = time.perf_counter()
        out = tick()
        elapsed = time.perf_counter() - t0
        if self._ticks >= 2:  # the first tick on each setting warms up
            self._times.setdefault(threads, []).append(elapsed)
        self._ticks += 1
        if self._ticks >= self.calibration_ticks + 2:
            self._choose(caller_threads)
        return out

    def _choose(self, caller_threads: int) -> None:
        p90 = {n: _percentile(ts, 0.9) for n, ts in self._times.items()}
        self.chosen = min(p90, key=lambda n: (p90[n], n))
        self.report = {"tick_threads": "auto", "chosen": self.chosen, "caller_threads": caller_threads,
                       "p90_ms": {n: round(1e3 * v, 3) for n, v in p90.items()},
                       "median_ms": {n: round(1e3 * _percentile(ts, 0.5), 3) for n, ts in self._times.items()},
                       "ticks": {n: len(ts) for n, ts in self._times.items()}}
        log.info("planner ticks: %d thread(s) chosen (90th-percentile tick ms by threads: %s)", self.chosen,
                 self.report["p90_ms"])


def _percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, -(-int(q * 100) * len(s) // 100) - 1))]
