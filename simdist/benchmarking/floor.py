"""The fp32 matrix-product floor of a planner tick: its scoring work at the machine's own GEMM rate.

:func:`gemm_shapes` records the matrix products (``mm``, ``addmm``, ``bmm``, ``baddbmm``) a callable runs, by
shape; :func:`gemm_rate` times products of those shapes on this machine (on the caller's torch threads, and on
that many single-threaded threads side by side, the faster of the two: how a planner's chunks run) and returns
the FLOP per second they reach. A tick's floor is its executed FLOP divided by that rate: the time it would take
if every FLOP, attention and elementwise work included, ran as fast as its own linear layers' products.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

#: a matrix product's shape: (batch, m, k, n); batch 1 for ``mm`` / ``addmm``
Shape = tuple[int, int, int, int]

_MM = {torch.ops.aten.mm.default: (0, 1), torch.ops.aten.addmm.default: (1, 2),
       torch.ops.aten.bmm.default: (0, 1), torch.ops.aten.baddbmm.default: (1, 2)}


class _Recorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.shapes: Counter[Shape] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        where = _MM.get(func)
        if where is not None:
            a, b = args[where[0]].shape, args[where[1]].shape
            batch = a[0] if len(a) == 3 else 1
            self.shapes[(int(batch), int(a[-2]), int(a[-1]), int(b[-1]))] += 1
        return func(*args, **(kwargs or {}))


def gemm_shapes(fn: Callable[[], Any]) -> Counter[Shape]:
    """How many matrix products of each shape ``fn()`` runs on the calling thread."""
    recorder = _Recorder()
    with recorder, torch.no_grad():
        fn()
    return recorder.shapes


def gemm_flop(shapes: Counter[Shape]) -> float:
    """FLOP of the recorded products (2·b·m·k·n each)."""
    return float(sum(2 * b * m * k * n * count for (b, m, k, n), count in shapes.items()))


def _product(shape: Shape) -> Callable[[], Any]:
    b, m, k, n = shape
    g = torch.Generator().manual_seed(0)
    if b == 1:
        x, w = torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
        return lambda: torch.mm(x, w)
    xb, wb = torch.randn(b, m, k, generator=g), torch.randn(b, k, n, generator=g)
    return lambda: torch.bmm(xb, wb)


def _time_all(calls: Iterable[tuple[Callable[[], Any], int]]) -> None:
    for call, count in calls:
        for _ in range(count):
            call()


def _best(run: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """The least wall and the least process-CPU seconds of ``repeats`` calls of ``run``."""
    wall, cpu = float("inf"), float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        run()
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    return wall, cpu


def gemm_rate(shapes: Counter[Shape], threads: int | None = None, repeats: int = 3) -> dict[str, float]:
    """The GFLOP/s the products ``shapes`` reach here (each shape as often as recorded; the best of
    ``repeats`` passes): ``intra_op`` on the caller's torch threads, ``side_by_side`` split over ``threads``
    single-threaded threads (where torch allows a per-thread limit), ``gflops`` the faster, and
    ``gflops_per_cpu_s`` per second of process CPU time (the robust figure on a shared machine)."""
    from simdist.planning.execution import limit_this_thread, thread_limits_available

    calls = [(_product(s), c) for s, c in sorted(shapes.items())]
    flop = gemm_flop(shapes)
    _time_all((c, 1) for c, _ in calls)  # warm-up: first-touch pages, kernel selection
    wall, cpu = _best(lambda: _time_all(calls), repeats)
    out = {"intra_op": flop / wall / 1e9}
    workers = threads or torch.get_num_threads()
    if workers > 1 and thread_limits_available():
        # each shape's products dealt evenly over the threads
        parts = [[(c, n // workers + (i < n % workers)) for c, n in calls] for i in range(workers)]
        with ThreadPoolExecutor(workers, initializer=limit_this_thread) as pool:
            list(pool.map(_time_all, parts))
            side_wall, side_cpu = _best(lambda: list(pool.map(_time_all, parts)), repeats)
        out["side_by_side"] = flop / side_wall / 1e9
        cpu = min(cpu, side_cpu)
    out["gflops"] = max(out.values())
    out["gflops_per_cpu_s"] = flop / cpu / 1e9
    return out
