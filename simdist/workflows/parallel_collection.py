"""The adaptation loop's collection chunks over worker processes (``simdist adapt --collection.workers N``), with the
data of one process.

:class:`~simdist.workflows.loop_parts.ScheduleCollector` logs chunks of ``num_envs`` episodes; a chunk is a pure
function of the id of its first episode (its seed is ``chunk_seed(seed, stage, first)``, its ids count on from
``first``), and the next chunk's first id is one past the last id the chunk used. :func:`collect_in_workers` runs the
chunks the one-process loop would run next in ``N`` spawned processes at once (one torch thread each, the stage's
agent saved to ``OUT/collection-agent`` and loaded by each), assuming each chunk's successor starts ``num_envs`` ids
on. Finished chunks are written in id order, through the same code as the one-process loop (a chunk finished early
waits for its predecessors), so what is on disk is always a prefix of the one-process run's data and a killed run
resumes as one. When a written chunk shows the assumption wrong (its episodes used more ids: an env of the batch
finished a second, unlogged episode first; or fewer: a diverged episode was dropped), the next chunk is run with the
right id and the speculative results are not used. So with ``--envs 1`` (every chunk one episode) the guess always
holds. The collection stops at the target; chunks still running are killed.
"""

from __future__ import annotations

import itertools
import multiprocessing
import shutil
import traceback
import warnings
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

import numpy as np

from simdist.workflows.collection import CollectionProgress, acting_planner
from simdist.workflows.loop_parts import (
    ScheduleCollector,
    check_collection_workers,
    chunk_seed,
    collect_chunk,
    collecting_actor,
)

if TYPE_CHECKING:
    from simdist.agents import Agent
    from simdist.data.engine import PerturbationConfig
    from simdist.data.schema import Episode
    from simdist.workflows.loop_parts import Acting, Run

#: the folder (under the run's) the stage's agent is saved to for the workers
AGENT_FOLDER = "collection-agent"


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker builds its collection from: the task, the saved agent's folder, the run's acting part and the
    action noise windows."""

    task: Any
    agent: str
    acting: Acting
    perturbation: PerturbationConfig | None


@dataclass(frozen=True)
class ParallelScheduleCollector(ScheduleCollector):
    """:class:`~simdist.workflows.loop_parts.ScheduleCollector` with its chunks run in ``workers`` processes at once
    and written in id order: the data of one process (module docstring; not with ``update_every``)."""

    workers: int = 2

    def __post_init__(self) -> None:
        check_collection_workers(self.workers, self.update_every)

    def collect(self, run: Run, agent: Agent, amount: float, stage: int) -> Agent:
        target, measure = self.target(run, amount)
        collect_in_workers(self, run, agent, target, measure, stage)
        return agent


def collect_in_workers(collector: ParallelScheduleCollector, run: Run, agent: Agent, target: int, measure: str,
                       stage: int) -> None:
    """``collector``'s chunks of stage ``stage`` until ``run``'s data hold ``target`` (``measure``: the index key
    counted), in ``collector.workers`` processes (module docstring)."""
    info = run.dataset_info(run.data_dir)
    have = int(info.get(measure, 0))
    if have >= target:
        return
    folder = run.out / AGENT_FOLDER
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".*is not a Hub repo id.*")
        agent.save_pretrained(folder)
    setup = WorkerSetup(run.task, str(folder), run.parts.acting, collector.perturbation)
    first = collector.next_first(run, info)
    progress = CollectionProgress(run.log, f"stage {stage}", target, measure[4:], have,
                                  acting_planner(collector.actor(run, agent, chunk_seed(collector.seed, stage, first))))
    run.log(f"[collect] stage {stage}: chunks of {collector.num_envs} episodes in {collector.workers} worker "
            f"processes")
    try:
        with ChunkWorkers(collector.workers, setup) as pool:
            _run_chunks(collector, run, pool, progress, target, measure, stage, first, have)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_chunks(collector: ParallelScheduleCollector, run: Run, pool: ChunkWorkers, progress: CollectionProgress,
                target: int, measure: str, stage: int, first: int, have: int) -> None:
    """Keep ``pool``'s workers on the next chunks from id ``first`` and write the finished ones in id order until
    ``run``'s data hold ``target`` (``have``: what they hold now)."""
    n = collector.num_envs
    finished: dict[int, tuple[list[Episode], np.ndarray]] = {}
    reports: dict[int, Any] = {}
    while True:
        for worker in pool.idle():  # the next chunks the one-process loop would run, as far as the target allows
            ahead = (f for f in itertools.count(first, n) if f not in finished and f not in pool.running())
            f = next(ahead)
            if f - first >= target - have:  # each episode adds at least one of the target's units
                break
            reports[f] = progress.chunk_episode(f)
            pool.submit(worker, f, chunk_seed(collector.seed, stage, f), n)
        kind, f, *rest = pool.receive()
        if kind == "episode":
            reports[f](*rest)
            continue
        if f >= first:  # else a speculative chunk the written ones showed wrong
            finished[f] = (rest[0], rest[1])
        while first in finished:
            eps, ok = finished.pop(first)
            steps, keep = collector.write_chunk(run, eps, ok, have, target)
            progress.logged(steps, keep, first)
            info = run.dataset_info(run.data_dir)
            have = int(info.get(measure, 0))
            if have >= target:
                return
            following = collector.next_first(run, info)
            if following != first + n:
                run.log(f"[collect] stage {stage}: the chunk from episode {first} used ids up to "
                        f"{following - 1}; the next chunk starts there (speculative chunks from "
                        f"{first + n} not used)")
            first = following
            for stale in [k for k in finished if k < first]:
                del finished[stale]


class ChunkWorkers:
    """``workers`` spawned processes that collect chunks (:func:`_work`), each one torch thread with its own agent;
    one job at a time per worker. A context manager: on exit every worker is killed (chunks still running are
    discarded)."""

    def __init__(self, workers: int, setup: WorkerSetup) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conns: list[Connection] = []
        self.processes: list[Any] = []
        self.jobs: list[int | None] = []  # each worker's chunk (its first id), None while idle
        for _ in range(workers):
            parent, child = ctx.Pipe()
            process = ctx.Process(target=_work, args=(child, setup))  # may start compile workers
            process.start()
            child.close()
            self.conns.append(parent)
            self.processes.append(process)
            self.jobs.append(None)

    def __enter__(self) -> ChunkWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Kill every worker and wait for it."""
        for process in self.processes:
            if process.is_alive():
                process.kill()
        for process, conn in zip(self.processes, self.conns):
            process.join()
            conn.close()

    def idle(self) -> list[int]:
        """The workers without a chunk."""
        return [k for k, job in enumerate(self.jobs) if job is None]

    def running(self) -> set[int]:
        """The first ids of the chunks being collected."""
        return {job for job in self.jobs if job is not None}

    def submit(self, worker: int, first: int, seed: int, episodes: int) -> None:
        """Worker ``worker`` collects the chunk of ``episodes`` episodes from id ``first`` with ``seed``."""
        self.jobs[worker] = first
        try:
            self.conns[worker].send((first, seed, episodes))
        except OSError:  # it died
            self.processes[worker].join()
            raise self._died(worker) from None

    def receive(self) -> tuple[Any, ...]:
        """The next message of any worker: ``("episode", first, done, total)`` (progress) or ``("chunk", first,
        episodes, success)`` (the worker is idle again). RuntimeError when a worker failed or died."""
        while True:
            ready = wait([*self.conns, *(p.sentinel for p in self.processes)])
            for k, conn in enumerate(self.conns):
                if conn in ready:
                    try:
                        message = conn.recv()
                    except (EOFError, OSError):  # it died: its sentinel says how
                        self.processes[k].join()
                        raise self._died(k) from None
                    if message[0] == "error":
                        raise RuntimeError(f"collection worker {k} (--collection.workers), chunk from episode "
                                           f"{self.jobs[k]}:\n{message[1]}")
                    if message[0] == "chunk":
                        self.jobs[k] = None
                    return tuple(message)
            for k, process in enumerate(self.processes):
                if process.sentinel in ready and not self.conns[k].poll():
                    raise self._died(k)

    def _died(self, worker: int) -> RuntimeError:
        return RuntimeError(f"collection worker {worker} (--collection.workers) exited with code "
                            f"{self.processes[worker].exitcode} collecting the chunk from episode {self.jobs[worker]}")


def _work(conn: Connection, setup: WorkerSetup) -> None:
    """A worker: loads the agent once, then collects each chunk it is sent, as the one-process loop does; returns
    when its parent is gone."""
    import torch

    from simdist.agents import load_agent

    torch.set_num_threads(1)
    agent: Agent | None = None
    while True:
        try:
            first, seed, episodes = conn.recv()
        except (EOFError, OSError):
            return
        try:
            if agent is None:
                agent = load_agent(setup.agent)
            actor = collecting_actor(setup.acting, setup.task, agent, seed)

            def report(done: int, total: int, first: int = first) -> None:
                conn.send(("episode", first, done, total))

            eps, ok = collect_chunk(setup.task, actor, episodes, seed, first, setup.perturbation, report)
            conn.send(("chunk", first, eps, np.asarray(ok)))
        except (EOFError, OSError, BrokenPipeError):
            return
        except Exception:  # noqa: BLE001 - reported to the parent, which raises it
            conn.send(("error", traceback.format_exc()))
            return
