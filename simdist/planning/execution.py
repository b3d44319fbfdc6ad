"""How a planner's tick runs on the hardware, apart from the planning algorithm.

:class:`TickExecutor` runs a planner's tick and scores its action sequences (B, N, T, A) → (B, N):

* **chunks**: on CPU the N sequences are scored in chunks of about ``chunk`` (default
  :data:`DEFAULT_CPU_CHUNK`) sequences. The result is the same; the activations stay small enough for the
  allocator to reuse them instead of having the kernel map and zero fresh pages for every layer (a measured
  20 % of a paper-size tick). Elsewhere (CUDA) everything is one call.
* **private threads**: with ``parallel=True`` on CPU, when the calling thread runs torch on T > 1
  threads, the tick runs on the executor's own thread and its chunks on up to T scoring threads (one per
  chunk at most), each running torch single-threaded. At this size one matrix product splits poorly over
  threads while whole chunks split evenly, and a single-threaded kernel never waits at an intra-op barrier
  for a thread another process has taken off its core, which is what a real-time tick's tail latency is
  made of on a shared CPU. Plans do not depend on T: they are the ones a single-threaded caller gets.
  With T = 1, ``parallel=False``, another device, a tick that fits one chunk (e.g. a real-time preset:
  nothing to split, and the caller's intra-op threads are faster on a quiet CPU), or where the per-thread
  limit is unavailable, the tick runs on the calling thread with the caller's settings.
* **compile**: ``compile=True`` (or a ``torch.compile`` mode) scores through ``torch.compile`` (one graph
  per shape; the first call compiles).

Nothing here changes a process-wide setting. ``torch.set_num_threads``, even on a private thread, would:
besides that thread's OpenMP team size it stores the count that threads started later take, resizes
torch's shared pthreadpool and clears oneDNN's primitive cache. The private threads instead set their own
count with the per-thread setters of the OpenMP runtime and of MKL that torch is linked with
(:func:`limit_this_thread`), which leaves every other thread, and threads started later, as they were.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import torch
from torch import Tensor

from .threads import ThreadChoice

log = logging.getLogger(__name__)

#: Sequences per score call on CPU when ``chunk`` is None (measured: 100-250 is flat).
DEFAULT_CPU_CHUNK = 128

ScoreFn = Callable[..., Tensor]
T = TypeVar("T")


# ---------------------------------------------------------------------- per-thread thread count
@functools.cache
def _thread_setters() -> tuple[Callable[[int], None], Callable[[int], int] | None,
                               Callable[[], int] | None] | None:
    """OpenMP's ``omp_set_num_threads`` and MKL's ``MKL_Set_Num_Threads_Local`` / ``MKL_Get_Max_Threads``
    as torch's CPU library links them (both act on the calling thread only), or None where torch's parallel
    backend is not OpenMP or they cannot be found."""
    if "parallel backend: OpenMP" not in torch.__config__.parallel_info():
        return None
    lib_dir = Path(torch.__file__).parent / "lib"
    libs = sorted(lib_dir.glob("libtorch_cpu.*")) + sorted(lib_dir.glob("torch_cpu.dll"))
    try:
        lib = ctypes.CDLL(str(libs[0]))  # already loaded: the handle torch's kernels run in
        omp_set = lib.omp_set_num_threads  # resolved in the runtime libtorch_cpu itself links
    except (IndexError, OSError, AttributeError):
        return None
    omp_set.argtypes, omp_set.restype = [ctypes.c_int], None
    if not torch.backends.mkl.is_available():
        return omp_set, None, None
    try:
        mkl_set, mkl_get = lib.MKL_Set_Num_Threads_Local, lib.MKL_Get_Max_Threads
    except AttributeError:
        return None
    mkl_set.argtypes, mkl_set.restype = [ctypes.c_int], ctypes.c_int
    mkl_get.argtypes, mkl_get.restype = [], ctypes.c_int
    return omp_set, mkl_set, mkl_get


def limit_this_thread(threads: int = 1) -> bool:
    """Run torch's CPU kernels on ``threads`` threads from the calling thread only; True if in effect.

    Meant for threads a planner owns. It first lets torch initialise the thread (which would otherwise
    reset the count later), then sets the OpenMP and MKL per-thread counts; other threads, the default for
    new threads and torch's shared pools are untouched. False (nothing changed) without such setters."""
    setters = _thread_setters()
    if setters is None:
        return False
    omp_set, mkl_set, mkl_get = setters
    torch.get_num_threads()  # torch's lazy per-thread initialisation, before the limit
    omp_set(threads)
    if mkl_set is not None:
        mkl_set(threads)
    return torch.get_num_threads() == threads and (mkl_get is None or mkl_get() == threads)


@functools.cache
def thread_limits_available() -> bool:
    """Whether :func:`limit_this_thread` works here (tried once, on a short-lived thread)."""
    result: list[bool] = []
    probe = threading.Thread(target=lambda: result.append(limit_this_thread(1)), name="simdist-probe")
    probe.start()
    probe.join()
    ok = bool(result and result[0])
    if not ok:
        log.info("no per-thread torch thread limit on this build; planners score on the calling thread")
    return ok


def _in_caller_modes(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` run under the calling thread's grad and inference modes wherever it is called (a private
    thread starts with grad enabled and inference mode off)."""
    grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()

    def wrapped(*args: Any) -> T:
        with torch.inference_mode(inference), torch.set_grad_enabled(grad):
            return fn(*args)

    return wrapped


# ---------------------------------------------------------------------- executor
class TickExecutor:
    """Runs a planner's ticks (:meth:`run`) and scores action sequences with ``score_fn(actions, *ctx)``
    (:meth:`score`) as the module docstring describes.

    ``chunk``: most sequences per ``score_fn`` call (None: :data:`DEFAULT_CPU_CHUNK` on CPU, all at once
    elsewhere); ``parallel``: on CPU, run on private single-threaded threads (False: on the calling
    thread with its own torch settings); ``compile``: call ``score_fn`` through ``torch.compile`` (True or
    a mode); ``tick_threads``: the torch threads of a tick that fits one chunk (None: the caller's; an int;
    ``"auto"``: chosen by timing the first ticks, :mod:`~simdist.planning.threads`). The threads
    start on first use; :meth:`close` ends them.
    """

    def __init__(self, score_fn: ScoreFn, *, chunk: int | None = None, parallel: bool = True,
                 compile: bool | str = False, tick_threads: int | str | None = None) -> None:
        if chunk is not None and chunk < 1:
            raise ValueError(f"score_chunk must be >= 1 or None, got {chunk}")
        self.score_fn, self.chunk, self.parallel, self.compile = score_fn, chunk, parallel, compile
        self.thread_choice = ThreadChoice(tick_threads)
        self._small_pools: dict[int, ThreadPoolExecutor] = {}
        self._compiled: ScoreFn | None = None
        self._tick_pool: ThreadPoolExecutor | None = None
        self._score_pool: ThreadPoolExecutor | None = None
        self._score_workers, self._pid = 0, os.getpid()
        self._local = threading.local()  # .workers: the scoring threads the running tick may use

    def run(self, device: torch.device, tick: Callable[..., T], *args: Any, sequences: int | None = None) -> T:
        """``tick(*args)``: on the private tick thread where the module docstring says so, else here.

        ``sequences``: how many the tick scores per call; a tick that fits one chunk has nothing to split
        over threads and runs here, with the caller's settings (its intra-op threads), which is faster."""
        threads = torch.get_num_threads()
        one_chunk = sequences is not None and sequences <= (self.chunk or DEFAULT_CPU_CHUNK)
        if one_chunk and device.type == "cpu" and thread_limits_available():
            n = self.thread_choice.threads(threads)
            if n < threads:
                return self.thread_choice.run(n, threads, lambda: self._on_small_pool(n, tick, args))
            return self.thread_choice.run(threads, threads, lambda: tick(*args))
        if one_chunk or not (self.parallel and device.type == "cpu" and threads > 1 and thread_limits_available()):
            return tick(*args)
        self._forget_threads_of_parent()
        if self._tick_pool is None:
            self._tick_pool = ThreadPoolExecutor(1, thread_name_prefix="simdist-tick", initializer=limit_this_thread)

        def on_tick_thread() -> T:
            self._local.workers = threads
            try:
                return tick(*args)
            finally:
                self._local.workers = 0

        return self._tick_pool.submit(_in_caller_modes(on_tick_thread)).result()

    def _on_small_pool(self, threads: int, tick: Callable[..., T], args: Sequence[Any]) -> T:
        """``tick(*args)`` on a private thread running torch on ``threads`` threads."""
        self._forget_threads_of_parent()
        pool = self._small_pools.get(threads)
        if pool is None:
            pool = self._small_pools[threads] = ThreadPoolExecutor(
                1, thread_name_prefix=f"simdist-tick{threads}",
                initializer=functools.partial(limit_this_thread, threads))
        return pool.submit(_in_caller_modes(lambda: tick(*args))).result()

    def score(self, actions: Tensor, *ctx: Any) -> Tensor:
        """(B, N) returns of ``actions`` (B, N, T, A), in chunks, on the scoring threads inside :meth:`run`."""
        b, n = actions.shape[:2]
        chunk = self.chunk or (DEFAULT_CPU_CHUNK if actions.device.type == "cpu" else b * n)
        pieces = min(-(-(b * n) // chunk), n)  # ceil; at least one sequence per env and chunk
        if pieces <= 1:
            return self._call(actions, ctx)
        chunks = actions.tensor_split(pieces, dim=1)
        workers = min(getattr(self._local, "workers", 0), pieces)
        if workers > 1:
            return torch.cat(self._on_score_threads(chunks, ctx, workers), 1)
        return torch.cat([self._call(a, ctx) for a in chunks], 1)

    def _call(self, actions: Tensor, ctx: Sequence[Any]) -> Tensor:
        if not self.compile:
            return self.score_fn(actions, *ctx)
        if self._compiled is None:
            mode = self.compile if isinstance(self.compile, str) else None
            self._compiled = torch.compile(self.score_fn, dynamic=False, mode=mode)
        return self._compiled(actions, *ctx)

    def _on_score_threads(self, chunks: Sequence[Tensor], ctx: Sequence[Any], workers: int) -> list[Tensor]:
        self._forget_threads_of_parent()
        if self._score_pool is None or self._score_workers != workers:
            if self._score_pool is not None:
                self._score_pool.shutdown(wait=False)
            self._score_pool = ThreadPoolExecutor(workers, thread_name_prefix="simdist-score",
                                                  initializer=limit_this_thread)
            self._score_workers = workers
        return list(self._score_pool.map(_in_caller_modes(lambda a: self._call(a, ctx)), chunks))

    def close(self) -> None:
        """Let the private threads end (they start again when a tick needs them)."""
        for pool in (self._tick_pool, self._score_pool, *self._small_pools.values()):
            if pool is not None:
                pool.shutdown(wait=False)
        self._tick_pool = self._score_pool = None
        self._small_pools = {}
        self._score_workers = 0

    def _forget_threads_of_parent(self) -> None:
        """In a forked child the parent's threads do not exist: start new ones."""
        if self._pid != os.getpid():
            self._tick_pool = self._score_pool = None
            self._small_pools = {}
            self._score_workers, self._pid = 0, os.getpid()

    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles carry the settings, not the threads or a compiled graph."""
        state = {**self.__dict__, "_compiled": None, "_tick_pool": None, "_score_pool": None, "_score_workers": 0,
                 "_small_pools": {}}
        del state["_local"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _pid=os.getpid(), _local=threading.local())

    def __repr__(self) -> str:
        return (f"TickExecutor(chunk={self.chunk}, parallel={self.parallel}, compile={self.compile!r}, "
                f"tick_threads={self.thread_choice.tick_threads!r})")
