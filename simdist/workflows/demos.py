"""Demonstrations: episodes of a demonstrator on a task's proxy-real env, the paper's teleoperated demos.

:func:`record_demos` rolls an agent (a task's scripted expert, ``task.builtin_agent("expert")``, stands in for
the teleoperator) on the real env with :func:`~simdist.workflows.rollout.collect_episodes` in chunks of one episode
per env and
writes the episodes, by default only the successful ones, to a dataset folder in the trajectory schema; each
carries ``success`` and ``source: "demo"`` in its meta, and every step is expert-flagged (the demonstrator's
actions, no noise injected: expert-only imitation, such as the single-step BC start, learns from them). Attempts not
written (failed or diverged) are recorded as dropped episode ids, so the folder itself says how far the run got:
a rerun resumes with the next chunk, and a chunk's seed derives from the run's seed and the id of its first
episode, so an interrupted run ends with what an uninterrupted one writes. SimDist+BC (``simdist_bc``) clones
its policy head on such a folder, and the online RL baselines take it as their demos.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from simdist.capabilities import EvaluationProtocol

__all__ = ["DEMO_SOURCE", "record_demos"]

#: the ``source`` of a demonstration episode's meta (real episodes of the adaptation loop have ``"real"``)
DEMO_SOURCE = "demo"
#: ``max_attempts`` per requested episode when it is not given
ATTEMPTS_PER_EPISODE = 20


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _chunk_seed(seed: int, first_episode_id: int) -> int:
    return int(np.random.SeedSequence([int(seed), int(first_episode_id)]).generate_state(1)[0])


def _read_info(out: Path) -> dict[str, Any] | None:
    from simdist.data import read_dataset_info

    return read_dataset_info(out) if (out / "dataset.json").is_file() else None


def _check_out(out: Path, info: dict[str, Any] | None, settings: dict[str, Any]) -> None:
    """Refuse an ``out`` that is a file, a non-empty folder that is no dataset, or another run's dataset."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"out {str(out)!r} is a file, not a dataset folder")
    if info is None:
        if out.is_dir() and any(not p.name.startswith(".") for p in out.iterdir()):
            raise ValueError(f"out {str(out)!r} is not empty and holds no dataset.json; choose a new or empty folder")
        return
    recorded = info.get("metadata", {}).get("demos")
    if not isinstance(recorded, dict):
        raise ValueError(f"out {str(out)!r} holds a dataset that is not demonstrations; choose a new folder")
    for key, value in settings.items():
        if recorded.get(key) != value:
            raise ValueError(f"out {str(out)!r} holds demos recorded with {key}={recorded.get(key)!r}, not "
                             f"{value!r}; rerun with the same {key} to resume, or choose a new folder")


def _summary(out: Path, info: dict[str, Any] | None, successful_only: bool, **extra: Any) -> dict[str, Any]:
    """Episodes, steps, attempts (written + dropped ids) and the attempts' success rate, from the folder."""
    episodes, attempts, _ = _progress(info)
    steps = int(info.get("num_steps", 0)) if info else 0
    successes = episodes if successful_only or not episodes else _count_successes(out)
    rate = successes / attempts if attempts else float("nan")
    return {"out": str(out), "episodes": episodes, "steps": steps, "attempts": attempts, "successes": successes,
            "success_rate": rate, **extra}


def _count_successes(out: Path) -> int:
    from simdist.data import iter_episodes

    eps = iter_episodes(str(out), shuffle_shards=False, split_by_node=False, split_by_worker=False)
    return sum(bool(ep.meta.get("success", False)) for ep in eps)


def _progress(info: dict[str, Any] | None) -> tuple[int, int, int]:
    """Written episodes, attempts (written + dropped ids) and the next chunk's first episode id of a folder."""
    if info is None:
        return 0, 0, 0
    ids = [int(i) for shard in info["shards"] for i in shard["episode_ids"]]
    dropped = [int(i) for i in info.get("dropped_episode_ids", [])]
    return len(ids), len(ids) + len(dropped), max(ids + dropped, default=-1) + 1


def record_demos(task: EvaluationProtocol, agent: Any, episodes: int, out: str | Path, *, seed: int = 0,
                 num_envs: int = 8, successful_only: bool = True, max_attempts: int | None = None,
                 progress: bool = False) -> dict[str, Any]:
    """Write ``episodes`` demonstrations of ``agent`` on ``task``'s real env to the dataset folder ``out``.

    ``agent``: an agent (``act(history)``/``new_history``) or a plain ``policy(obs)`` callable, e.g.
    ``task.builtin_agent("expert")``. Each chunk rolls ``num_envs`` attempts (one per env) seeded by ``seed`` and
    the chunk's first episode id; with ``successful_only`` (a teleoperator's demos succeed) only the successful
    ones are written. A rerun resumes (a complete folder: nothing to do); ``seed`` and ``successful_only`` must
    then match the folder's. ``RuntimeError`` when ``max_attempts`` attempts in all (default
    ``20 * episodes``; checked between chunks) leave fewer than ``episodes`` written; what was written stays.
    ``progress`` prints one line per chunk with an ETA. Returns ``episodes``, ``steps``, ``attempts``, ``successes``,
    ``success_rate`` (of the attempts), ``written`` (by this call) and ``seconds``.
    """
    from simdist.data import DatasetSpec, EpisodeWriter
    from simdist.workflows.rollout import collect_episodes

    episodes = _positive("episodes", episodes)
    num_envs = _positive("num_envs", num_envs)
    limit = ATTEMPTS_PER_EPISODE * episodes if max_attempts is None else _positive("max_attempts", max_attempts)
    if limit < episodes:
        raise ValueError(f"max_attempts ({limit}) must be at least episodes ({episodes})")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not (callable(agent) or hasattr(agent, "act")):
        raise TypeError(f"agent must act (agent.act(history)) or be a policy(obs) callable, got {type(agent).__name__}")
    out = Path(out).expanduser()
    settings = {"task": task.name, "seed": int(seed), "successful_only": bool(successful_only)}
    info = _read_info(out)
    _check_out(out, info, settings)

    started, written = time.perf_counter(), 0
    have, attempts, first = _progress(info)
    writer: EpisodeWriter | None = None
    try:
        while have < episodes:
            if attempts >= limit:
                raise RuntimeError(
                    f"{task.name}: only {have} of {episodes} {'successful ' if successful_only else ''}demos after "
                    f"max_attempts={limit} attempts; raise max_attempts or use a better demonstrator (written "
                    f"episodes stay in {str(out)!r}; rerun to continue)")
            eps, ok = collect_episodes(task, agent, num_envs, num_envs, _chunk_seed(seed, first),
                                       first_episode_id=first)
            if writer is None:
                spec = DatasetSpec.from_episode(eps[0]) if eps else task.dataset_spec()
                writer = EpisodeWriter(out, spec, metadata={"demos": settings})
            by_id = {ep.episode_id: (ep, bool(good)) for ep, good in zip(eps, ok)}
            for eid in range(first, first + num_envs):
                if have >= episodes:
                    break
                attempts += 1
                ep, good = by_id.get(eid, (None, False))  # missing: diverged, never logged
                if ep is not None and (good or not successful_only):
                    ep.meta.update(success=good, source=DEMO_SOURCE)
                    ep.expert = np.ones(len(ep), bool)  # the demonstrator's own actions, nothing injected
                    writer.write(ep)
                    have, written = have + 1, written + 1
                else:
                    writer.record_dropped(eid)
            writer.close_shard()  # commit the chunk: a rerun resumes after it
            first += num_envs
            if progress:
                _report(have, episodes, attempts, written, time.perf_counter() - started)
    except BaseException:
        if writer is not None:
            writer.abort()  # the open chunk is redone by a rerun, with the same seed
        raise
    finally:
        if writer is not None:
            writer.close()
    return _summary(out, _read_info(out), successful_only, written=written,
                    seconds=time.perf_counter() - started)


def _report(have: int, episodes: int, attempts: int, written: int, elapsed: float) -> None:
    eta = f"{elapsed / written * (episodes - have):.1f} s" if written else "?"
    print(f"demos: {have}/{episodes} written, {attempts} attempts ({have / max(attempts, 1):.0%} kept), "
          f"{elapsed:.1f} s, ETA {eta}", flush=True)
