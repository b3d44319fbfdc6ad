"""Timing and memory measurement for benchmarks: repeated timed calls (wall and process-CPU time), peak
memory, thread settings, the machine's description, and random planner inputs and training batches of a world
model's shapes. ``simdist bench`` and task demos that time their planner use it."""

from __future__ import annotations

import os
import platform
import resource
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from simdist.planning.execution import thread_limits_available


def machine_info(device: torch.device) -> dict[str, Any]:
    """CPU model, core count, torch build and the current load."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError:
        pass
    info: dict[str, Any] = {
        "cpu": cpu, "logical_cores": os.cpu_count(), "platform": platform.platform(),
        "python": platform.python_version(), "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "mkldnn": torch.backends.mkldnn.is_available(), "device": str(device), "load_avg": load_average(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "planner_private_threads": device.type == "cpu" and thread_limits_available(),
    }
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def summarize(values: Sequence[float]) -> dict[str, float]:
    """Median, p99 (nearest rank), mean, min and count of ``values``."""
    xs = sorted(values)
    p99 = xs[min(len(xs) - 1, max(0, -(-99 * len(xs) // 100) - 1))]
    return {"median": statistics.median(xs), "p99": p99, "mean": statistics.fmean(xs), "min": xs[0],
            "n": len(xs)}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_calls(fn: Callable[[], Any], repeats: int, warmup: int, device: torch.device) -> dict[str, Any]:
    """Wall and process-CPU seconds of ``fn`` over ``repeats`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    _sync(device)
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        _sync(device)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {"wall": summarize(wall), "cpu": summarize(cpu)}


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


@contextmanager
def num_threads(n: int | None) -> Iterator[None]:
    before = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def random_history(wm: Any, envs: int, seed: int = 0) -> dict[str, Any]:
    """A random planner input for ``envs`` envs (environment units, unit scale)."""
    cfg, dev = wm.config, wm.device
    g = torch.Generator().manual_seed(seed)
    obs = {k: torch.randn(envs, cfg.history + 1, *s, generator=g).to(dev) for k, s in cfg.obs_spec.items()}
    out: dict[str, Any] = {"obs_hist": obs,
                           "act_hist": torch.randn(envs, cfg.history, cfg.action_dim, generator=g).to(dev)}
    if cfg.command_dim:
        out["command"] = torch.randn(envs, cfg.command_dim, generator=g).to(dev)
    return out


def random_batch(wm: Any, batch: int, seed: int = 0) -> dict[str, Any]:
    """A random training window batch of the shapes ``WorldModelLoss`` reads."""
    cfg, dev = wm.config, wm.device
    g = torch.Generator().manual_seed(seed)
    h, t, a, c = cfg.history, cfg.horizon, cfg.action_dim, cfg.command_dim

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g).to(dev)

    return {
        "obs_hist": {k: r(batch, h + 1, *s) for k, s in cfg.obs_spec.items()}, "act_hist": r(batch, h, a),
        "fut_acts": r(batch, t, a), "fut_cmds": r(batch, t + 1, c),
        "fut_obs": {k: r(batch, t, *s) for k, s in cfg.obs_spec.items()},
        "rewards": r(batch, t), "values": r(batch, t), "expert": (r(batch, t) > -0.5).float(),
    }
