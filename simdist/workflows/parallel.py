"""An evaluation protocol's passes spread over worker processes, with the numbers of one process.

A task whose protocol is a sequence of independent passes (each its own env and a reseeded agent) says so
with :meth:`~simdist.capabilities.EvaluationProtocol.evaluation_passes`: ``(trials, seed)`` pairs whose results,
concatenated in order (:meth:`EvaluationResult.concat`), are ``task.evaluate(agent, trials, seed)``.
:func:`evaluate_in_workers` runs those passes in ``workers`` processes (``spawn``, one torch thread each). Each
worker builds its own agent from a spec string with ``build(task, spec)`` (a Hub id or folder, or one the task
provides: a loaded model is never pickled), so ``task`` and ``build`` must pickle (a module-level function, or a
``functools.partial`` of one). The parent merges the passes in pass order, whichever worker ran them.

The result equals the one-process evaluation at one torch thread (``OMP_NUM_THREADS=1``); at more threads
it equals it wherever the thread count does not change the numbers (``docs/reproducibility.md``).
"""

from __future__ import annotations

import logging
import multiprocessing
import pickle
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

import torch

from simdist.evaluation import EvaluationResult

if TYPE_CHECKING:
    from simdist.capabilities import EvaluationProtocol

logger = logging.getLogger(__name__)

#: ``build(task, spec) -> agent``: how a worker (and the one-process path without ``agent``) gets its agent
Build = Callable[[Any, str], Any]


def evaluation_passes(task: EvaluationProtocol, trials: int, seed: int, workers: int,
                      option: str = "--workers") -> list[tuple[int, int]] | None:
    """The passes ``workers`` processes would run (None: ``workers`` is 1, one direct call). Refuses a worker
    count that is not a positive integer, and ``workers > 1`` for a task that cannot split its protocol, with
    an error naming ``option`` and the task (call it before any work to fail early)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"{option} must be a positive integer, got {workers!r}")
    if workers == 1:
        return None
    passes = task.evaluation_passes(trials, seed)
    if passes is None:
        raise ValueError(f"{option} {workers}: task {task.name!r} cannot split its evaluation over worker "
                         f"processes (its protocol runs all trials together: evaluation_passes() is None); "
                         f"use {option} 1")
    return [(int(t), int(s)) for t, s in passes]


def evaluate_in_workers(task: EvaluationProtocol, agent_spec: str, trials: int, seed: int, *, workers: int,
                        num_envs: int, build: Build, agent: Any = None, log: Callable[[str], None] | None = None,
                        option: str = "--workers") -> EvaluationResult:
    """``task.evaluate(agent, trials, seed, num_envs=num_envs)``, over ``workers`` processes.

    ``workers`` 1: one direct call in this process, with ``agent`` (or ``build(task, agent_spec)`` when it is
    None) and ``log`` (passed on when given). ``workers`` > 1: the task's :meth:`EvaluationProtocol.evaluation_passes`
    run in ``min(workers, passes)`` spawned processes, each on one torch thread with its own
    ``build(task, agent_spec)``; the results are merged in pass order (:meth:`EvaluationResult.concat`) and
    ``log`` gets one line per pass. Errors name ``option`` (the command-line flag) and the task.
    """
    passes = evaluation_passes(task, trials, seed, workers, option)
    if not passes:
        controller = agent if agent is not None else build(task, agent_spec)
        return task.evaluate(controller, trials, seed, num_envs=num_envs, **({} if log is None else {"log": log}))
    try:
        pickle.dumps((task, agent_spec, build))
    except Exception as err:  # noqa: BLE001 - any pickling failure, reported with what to do
        raise ValueError(f"{option} {workers}: task {task.name!r} and the agent builder must pickle to reach "
                         f"worker processes: {err}") from err
    processes = min(workers, len(passes))
    logger.info("%s: %d passes over %d worker processes", task.name, len(passes), processes)
    results: list[EvaluationResult] = []
    with ProcessPoolExecutor(max_workers=processes, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_start_worker, initargs=(task, agent_spec, build)) as pool:
        futures: list[Future[EvaluationResult]] = [pool.submit(_run_pass, t, s, num_envs) for t, s in passes]
        try:
            for k, (future, (t, s)) in enumerate(zip(futures, passes), 1):
                result = future.result()
                results.append(result)
                if log is not None:
                    log(f"{task.name}: pass {k}/{len(passes)} (trials {t}, seed {s}, worker process): "
                        f"{result.metric} {result.mean:.3f}, success {result.success_rate:.2f} "
                        f"over {result.trials} trials")
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return EvaluationResult.concat(results)


# ------------------------------------------------------------------------------------------ in a worker
_WORKER: dict[str, Any] = {}


def _start_worker(task: EvaluationProtocol, agent_spec: str, build: Build) -> None:
    torch.set_num_threads(1)
    _WORKER.clear()
    _WORKER.update(task=task, spec=agent_spec, build=build, agent=None)


def _run_pass(trials: int, seed: int, num_envs: int) -> EvaluationResult:
    """One pass in this worker; the agent is built on the first (errors then reach the parent as raised)."""
    if _WORKER["agent"] is None:
        _WORKER["agent"] = _WORKER["build"](_WORKER["task"], _WORKER["spec"])
    return _WORKER["task"].evaluate(_WORKER["agent"], trials, seed, num_envs=num_envs)
