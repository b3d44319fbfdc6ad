"""The parts an :class:`~simdist.workflows.adaptation.AdaptationLoop` is made of, and their default kinds.

The loop keeps the schedule, the state and the records; what happens inside a stage is done by five parts, each
a small object with one method and its own settings (:class:`LoopParts`):

* acting (:class:`Acting`): the agent as the loop acts with it (the planner budget and seed);
* held-out collection (:class:`HeldoutCollector`): the fixed held-out real set, collected once;
* collection (:class:`Collector`): real episodes appended to the run's data until a stage's amount;
* finetuning (:class:`Finetuner`): a stage's model trained on the data so far;
* evaluation (:class:`Evaluator`): a stage's model measured on the task's protocol.

The default parts' settings are their own: the finetuner's budget is a
:class:`~simdist.model.freeze.FinetuneConfig`, the evaluator's an :class:`EvaluationConfig`; the loop's config
(:class:`~simdist.workflows.adaptation.AdaptConfig`) nests them and keeps only its own settings (the schedule, the
envs, the planner budget, the seed).

A task or a demo that adapts its own way supplies other parts (its own planner, rollouts or finetuning
schedule) instead of subclassing the loop. A part sees the loop through :class:`Run`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from simdist.workflows.collection import CollectionProgress, acting_planner, stamp_planner

if TYPE_CHECKING:
    from simdist.agents import Agent
    from simdist.capabilities import EvaluationProtocol
    from simdist.data.engine import PerturbationConfig
    from simdist.data.schema import Episode
    from simdist.evaluation import EvaluationResult
    from simdist.model.freeze import FinetuneConfig
    from simdist.tasks import Task


class Run(Protocol):
    """What a part sees of the running loop: its task, folders, models, state and records."""

    task: EvaluationProtocol
    out: Path
    base: Agent
    model_id: str
    state: dict[str, Any]
    progress: bool
    pad: int
    parts: LoopParts
    log: Callable[[str], None]

    @property
    def data_dir(self) -> Path: ...

    def planner(self, agent: Agent, seed: int) -> Agent: ...

    def dataset_info(self, folder: Path) -> dict[str, Any]: ...

    def write_episodes(self, folder: Path, episodes: Sequence[Episode], success: Sequence[bool] | np.ndarray,
                       split: str, per_shard: int = 10_000) -> None: ...

    def save_state(self) -> None: ...

    def load_model(self, path: str) -> Agent: ...

    def minutes(self, steps: int) -> float: ...


class Acting(Protocol):
    """``act(agent, task, seed)``: ``agent`` as the loop acts with it on ``task`` (picklable: evaluation
    workers build their agents with it)."""

    def act(self, agent: Agent, task: Task, seed: int) -> Agent: ...


class HeldoutCollector(Protocol):
    """``collect_heldout(run)``: the held-out real episodes and their success labels (collected once)."""

    def collect_heldout(self, run: Run) -> tuple[list[Episode], Sequence[bool] | np.ndarray]: ...


class Collector(Protocol):
    """``collect(run, agent, amount, stage)``: real episodes appended to ``run.data_dir`` until it holds
    ``amount`` (the schedule's unit); returns the agent acting at the end."""

    def collect(self, run: Run, agent: Agent, amount: float, stage: int) -> Agent: ...


class Finetuner(Protocol):
    """``finetune(run, start, stage)``: ``start`` trained on the real data so far (stage ``stage``)."""

    def finetune(self, run: Run, start: Agent, stage: int) -> Agent: ...


class Evaluator(Protocol):
    """``evaluate(run, agent, stage, path)``: stage ``stage``'s evaluation of ``agent`` (saved at ``path``;
    stage 0: the model id); None: the stage is not evaluated in the loop."""

    def evaluate(self, run: Run, agent: Agent, stage: int, path: str) -> EvaluationResult | None: ...


@dataclass
class LoopParts:
    """The five parts of a loop (module docstring)."""

    acting: Acting
    heldout: HeldoutCollector
    collector: Collector
    finetuner: Finetuner
    evaluator: Evaluator


# ---------------------------------------------------------------------------------------------- default parts
@dataclass(frozen=True)
class PlannerActing:
    """Planning agents act with ``planner`` (None: the one in their ``planner.json``), ``preset``'s budget (None:
    their ``planner.json``) and the ``overrides`` (:func:`simdist.arguments.acting_settings`); every agent gets the
    seed."""

    preset: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    planner: str | None = None

    def act(self, agent: Agent, task: Task, seed: int) -> Agent:
        if not getattr(agent, "plans", False):
            return agent.with_settings(seed=seed)
        from simdist.arguments import acting_settings

        current = getattr(getattr(agent, "config", None), "planner", None)
        return agent.with_settings(**acting_settings(task, planner=self.planner, current=current, preset=self.preset,
                                                     seed=seed, overrides=self.overrides))


def saved_actor(task: Task, path: str, *, acting: Acting, seed: int) -> Agent:
    """The saved agent at ``path`` acting as ``acting`` makes it (how an evaluation worker builds it)."""
    from simdist.agents import load_agent

    return acting.act(load_agent(path), task, seed)


@dataclass(frozen=True)
class TaskHeldout:
    """``episodes`` held-out episodes of the zero-shot agent on the task's real env (``seed``), each naming the
    planner that acted in its meta; ``run.log`` gets a line per finished episode."""

    episodes: int
    num_envs: int
    seed: int

    def collect_heldout(self, run: Run) -> tuple[list[Episode], Sequence[bool] | np.ndarray]:
        from simdist.workflows.rollout import collect_episodes

        actor = run.planner(run.base, self.seed)
        progress = CollectionProgress(run.log, "held-out set", self.episodes, "episodes", 0, acting_planner(actor))
        eps, ok = collect_episodes(run.task, actor, self.episodes, self.num_envs, self.seed, first_episode_id=0,
                                   on_episode=progress.chunk_episode(0))
        stamp_planner(eps, actor)
        progress.logged(len(eps), len(eps), 0)
        return eps, ok


def chunk_seed(seed: int, stage: int, first_episode_id: int) -> int:
    """The seed of the collection chunk whose first logged episode gets id ``first_episode_id``."""
    return int(np.random.SeedSequence([int(seed), int(stage), int(first_episode_id)]).generate_state(1)[0])


def collecting_actor(acting: Acting, task: Any, agent: Agent, seed: int) -> Agent:
    """``agent`` as it logs real data: ``acting``'s planner with ``seed`` and, for agents that explore (the RL
    baselines), sampled actions."""
    actor = acting.act(agent, task, seed)
    return actor.with_settings(explore=True) if getattr(agent, "explores", False) else actor


def collect_chunk(task: Any, actor: Agent, episodes: int, seed: int, first: int,
                  perturbation: PerturbationConfig | None,
                  on_episode: Callable[[int, int], None]) -> tuple[list[Episode], Sequence[bool] | np.ndarray]:
    """One collection chunk: ``episodes`` episodes of ``actor`` on ``task``'s real env in one batch, ids from
    ``first``, each naming the planner that acted in its meta."""
    from simdist.workflows.rollout import collect_episodes

    eps, ok = collect_episodes(task, actor, episodes, episodes, seed, first_episode_id=first,
                               perturbation=perturbation, on_episode=on_episode)
    stamp_planner(eps, actor)
    return eps, ok


@dataclass(frozen=True)
class ScheduleCollector:
    """On-policy chunks of ``num_envs`` episodes until the amount (``by_episodes``: episodes, else minutes).

    Each chunk's seed derives from ``seed``, the stage and the id of its first episode (not from a call count),
    so a rerun after an interruption collects exactly what an uninterrupted run would have. Agents that explore
    (the RL baselines) sample their actions. ``perturbation`` adds its noise windows to the actions. With
    ``update_every`` the agent is finetuned (the run's finetuner) after every that many episodes, each update
    continuing from the last, and saved as ``live/`` with the episode count in ``state.json``, so a rerun
    continues from the last update. Each logged episode's meta names the planner that acted (``planner``), and
    ``run.log`` gets progress lines per finished episode and chunk with an ETA
    (:class:`~simdist.workflows.collection.CollectionProgress`). Its subclass
    :class:`~simdist.workflows.parallel_collection.ParallelScheduleCollector` runs the chunks in worker processes
    and writes the same data."""

    num_envs: int
    seed: int
    by_episodes: bool = False
    update_every: int | None = None
    perturbation: PerturbationConfig | None = None

    def actor(self, run: Run, agent: Agent, seed: int) -> Agent:
        """``agent`` as it collects (:func:`collecting_actor` with the run's acting part)."""
        return collecting_actor(run.parts.acting, run.task, agent, seed)

    def target(self, run: Run, amount: float) -> tuple[int, str]:
        """The stage's target count and the dataset index field it counts (``num_episodes`` or ``num_steps``)."""
        if self.by_episodes:
            return int(round(amount)), "num_episodes"
        return int(np.ceil(amount * 60.0 / run.task.dt - 1e-6)), "num_steps"

    def collect(self, run: Run, agent: Agent, amount: float, stage: int) -> Agent:
        target, measure = self.target(run, amount)
        every, updated_at = self.update_every, 0
        if every is not None:
            agent, updated_at = self._resume_live(run, agent, stage)
        progress: CollectionProgress | None = None
        while True:
            info = run.dataset_info(run.data_dir)
            have, episodes = int(info.get(measure, 0)), int(info.get("num_episodes", 0))
            if every is not None and episodes > updated_at and (episodes % every == 0 or have >= target):
                agent = self._update_live(run, agent, stage, episodes)
                updated_at = episodes
            if have >= target:
                return agent
            chunk = self.num_envs if every is None else min(self.num_envs, every - episodes % every)
            first = self.next_first(run, info)
            seed = chunk_seed(self.seed, stage, first)
            actor = self.actor(run, agent, seed)
            if progress is None:
                progress = CollectionProgress(run.log, f"stage {stage}", target, measure[4:], have,
                                              acting_planner(actor))
            eps, ok = collect_chunk(run.task, actor, chunk, seed, first, self.perturbation,
                                    progress.chunk_episode(first))
            steps, keep = self.write_chunk(run, eps, ok, have, target)
            progress.logged(steps, keep, first)

    @staticmethod
    def next_first(run: Run, info: dict[str, Any]) -> int:
        """The id of the next chunk's first episode: one past every id logged (``info``: the data's index),
        labelled or dropped."""
        done = {int(i) for i in run.state["labels"].get("real", {})}
        done |= {int(i) for sh in info["shards"] for i in sh["episode_ids"]}
        return max(done | set(info.get("dropped_episode_ids", [])), default=-1) + 1

    def write_chunk(self, run: Run, eps: Sequence[Episode], ok: Sequence[bool] | np.ndarray, have: int,
                    target: int) -> tuple[int, int]:
        """Log the leading episodes of a chunk until the target (``have``: the amount logged before it) and save
        the state; returns the amount logged after it and the episodes kept."""
        keep, steps = 0, have
        while keep < len(eps) and steps < target:
            steps += 1 if self.by_episodes else len(eps[keep])
            keep += 1
        run.write_episodes(run.data_dir, eps[:keep], ok[:keep], "real")
        run.save_state()
        return steps, keep

    @staticmethod
    def _resume_live(run: Run, agent: Agent, stage: int) -> tuple[Agent, int]:
        """The agent of the last per-episode update of ``stage`` and its episode count (a rerun), else ``agent``
        and the episodes logged before the stage."""
        live = run.state.get("live")
        if live and live.get("stage") == stage and (run.out / "live" / "config.json").is_file():
            return run.load_model(str(run.out / "live")), int(live["episodes"])
        start = int(run.dataset_info(run.data_dir).get("num_episodes", 0))
        run.state["live"] = {"stage": stage, "episodes": start}
        run.save_state()
        return agent, start

    @staticmethod
    def _update_live(run: Run, agent: Agent, stage: int, episodes: int) -> Agent:
        """One per-episode update of ``agent`` on the real data so far; saved as ``live/`` before
        ``state.json`` records it."""
        updated = run.parts.finetuner.finetune(run, agent, stage)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", ".*is not a Hub repo id.*")
            updated.save_pretrained(run.out / "live")
        run.state["live"] = {"stage": stage, "episodes": episodes}
        run.save_state()
        return updated


@dataclass(frozen=True)
class AgentFinetuner:
    """The agent's own finetuning under ``config``'s freeze policy, which it turns into its trainable parts and
    loss; it takes what it uses of the budget (:meth:`~simdist.agents.Agent.finetune_options`) and the ``prior``
    dataset folders when given. Stage k trains with seed ``seed + k`` into ``OUT/lightning/stage-k``."""

    config: FinetuneConfig
    seed: int
    prior: tuple[str, ...] = ()

    def finetune(self, run: Run, start: Agent, stage: int) -> Agent:
        budget = {**self.config.budget(), "obs_noise": run.task.obs_noise}
        options: dict[str, Any] = {"freeze": self.config.freeze, "out": run.out / "lightning" / f"stage-{stage}",
                                   "seed": self.seed + stage, "progress": run.progress,
                                   **start.finetune_options(budget)}
        if self.prior:
            options["prior"] = list(self.prior)
        return start.finetune(run.data_dir, **options)


@dataclass(frozen=True)
class NoEvaluation:
    """No closed-loop evaluation in the loop: each stage logs, finetunes and records its held-out consistency,
    and its saved model is judged apart (``simdist evaluate --agent OUT/stages/stage-k``), as a protocol whose
    trials cost more than its data do."""

    def evaluate(self, run: Run, agent: Agent, stage: int, path: str) -> None:
        return None


def check_count(name: str, value: Any, low: int, high: int) -> None:
    """ValueError naming ``name`` unless ``value`` is an integer (not a bool) in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")


@dataclass(frozen=True)
class EvaluationConfig:
    """The evaluator's settings (``simdist adapt --evaluation.KEY``).

    Args:
        trials: trials per condition of the task's protocol (at most 100000); 0: no closed-loop evaluation in the
            loop (judge the saved stage models with ``simdist evaluate``)
        workers: processes each stage's evaluation is spread over (tasks whose protocol splits into independent
            passes; the numbers equal one process at one torch thread; at most 256)
    """

    trials: int = 8
    workers: int = 1

    def __post_init__(self) -> None:
        from simdist.resources import MAX_TRIALS, MAX_WORKERS

        check_count("trials", self.trials, 0, MAX_TRIALS)
        check_count("workers", self.workers, 1, MAX_WORKERS)

    def evaluator(self, num_envs: int, seed: int) -> Evaluator:
        """The evaluation part: the task's protocol in ``num_envs`` envs with ``seed``, or none (0 trials)."""
        return ProtocolEvaluator(self.trials, num_envs, seed, self.workers) if self.trials else NoEvaluation()


def check_collection_workers(workers: Any, update_every: int | None) -> None:
    """ValueError naming ``collection.workers`` unless it is an integer in [1, 256], and for more than one worker
    while ``update_every`` is set (the agent is finetuned between episodes, so chunks depend on the ones before)."""
    from simdist.resources import MAX_WORKERS

    check_count("collection.workers", workers, 1, MAX_WORKERS)
    if workers > 1 and update_every is not None:
        raise ValueError(f"collection.workers {workers}: the collection cannot be split over worker processes "
                         f"while update_every is set (the agent is finetuned between episodes); use 1")


@dataclass(frozen=True)
class CollectionConfig:
    """The collector's settings (``simdist adapt --collection.KEY``).

    Args:
        workers: processes the real-data collection's chunks run in at once, each on one torch thread with the
            stage's agent saved for it; the chunks are written in id order and the data equal one process's at
            one torch thread (not with ``update_every``; at most 256)
    """

    workers: int = 1

    def __post_init__(self) -> None:
        from simdist.resources import MAX_WORKERS

        check_count("workers", self.workers, 1, MAX_WORKERS)  # the loop names it collection.workers


@dataclass(frozen=True)
class ProtocolEvaluator:
    """``trials`` trials (per condition) of the task's protocol with ``seed``, in ``workers`` processes (each
    loads the stage's saved model and acts as the run's acting part makes it)."""

    trials: int
    num_envs: int
    seed: int
    workers: int = 1

    def evaluate(self, run: Run, agent: Agent, stage: int, path: str) -> EvaluationResult:
        if self.workers == 1:
            return run.task.evaluate(run.planner(agent, self.seed), self.trials, self.seed, num_envs=self.num_envs)
        from simdist.workflows.parallel import evaluate_in_workers

        return evaluate_in_workers(run.task, path, self.trials, self.seed, workers=self.workers,
                                   num_envs=self.num_envs,
                                   build=partial(saved_actor, acting=run.parts.acting, seed=self.seed),
                                   option="--evaluation.workers")
