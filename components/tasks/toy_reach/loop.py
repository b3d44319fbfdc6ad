"""The toy demo's parts of the adaptation loop (:mod:`simdist.workflows.loop_parts`), chosen by :func:`toy_parts`.

Every agent of the loop plans with the demo's MPPI (:data:`SCORE_CHUNK`, the ``disagreement`` penalty, the run's
seed); the held-out set comes from rounds of seed + 4 (:func:`heldout_episodes`); the real data is one rollout of
seed + 3 with the ``explore`` noise; finetuning follows the toy's learning-rate schedule with ``anchor`` and
``sim_mix``; both stages are evaluated on the profile with seed + 2 (the zero-shot stage also in simulation, seed + 1).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simdist.model.freeze import FinetuneConfig
from simdist.workflows.adaptation import AdaptConfig, default_parts, world_model_of
from simdist.workflows.loop_parts import Collector, LoopParts, Run

if TYPE_CHECKING:
    from simdist.agents import Agent
    from simdist.data.schema import Episode
    from simdist.evaluation import EvaluationResult
    from simdist.tasks import Task

#: MPPI sequences per ``imagine`` call: the toy's tiny model is bound by per-call overhead at the CPU default of
#: 128, so 1,024 plans the same actions 1.85x faster (16 envs x 128 samples x 4 iterations, one thread)
SCORE_CHUNK = 1024
#: held-out rounds collected at most when the planner's episodes end too early to hold one consistency window
HELDOUT_ROUNDS = 4


def rollout_on(planner: Any, variant: Any, episodes: int, num_envs: int, seed: int, record: bool = False,
               explore: float = 0.0) -> Any:
    """``episodes`` episodes of ``planner`` on the toy env ``variant`` (a profile or "sim"); ``record``: logged;
    ``explore``: the manipulation perturbation windows up to that noise σ added to the actions."""
    from simdist.components.tasks.toy_reach.pointmass import ToyReachEnv
    from simdist.data.engine import PerturbationConfig
    from simdist.data.schema import DatasetSpec
    from simdist.workflows.rollout import rollout

    env = ToyReachEnv(num_envs, variant=variant, seed=seed)
    spec = DatasetSpec.from_env(env) if record else None
    noise = PerturbationConfig.manipulation(max_noise=explore) if explore > 0 else None
    try:
        return rollout(env, planner, episodes=episodes, seed=seed, record_spec=spec, perturbation=noise,
                       meta={"source": "sim" if env.variant == "sim" else "real", "task": "toy-reach"})
    finally:
        env.close()


def heldout_episodes(collect: Callable[[int], list[Any]], model: Any, seed: int) -> list[Any]:
    """The held-out real episodes: ``collect(seed)``'s; when none of them is long enough for a consistency window
    (a zero-shot planner that throws the puck out early), further rounds with seeds ``seed + 1000·k`` until one
    is, at most :data:`HELDOUT_ROUNDS` (a clear error then)."""
    from simdist.training.evaluate import episode_batch

    episodes: list[Any] = []
    for k in range(HELDOUT_ROUNDS):
        episodes += collect(seed + 1_000 * k)
        if any(episode_batch(model, ep, model.config.history) is not None for ep in episodes):
            return episodes
    raise RuntimeError(f"none of {len(episodes)} held-out real episodes is long enough for one consistency window "
                       f"(the longest has {max(len(ep) for ep in episodes)} steps)")


def sim_mix(source: Path, out: Path, share: float, real_transitions: int) -> str:
    """Copy the first simulation episodes of ``source`` into ``out`` until they hold ``share`` of the
    finetuning transitions (real + simulation); returns ``out``. An earlier copy is replaced."""
    from simdist.data import DatasetSpec, EpisodeWriter
    from simdist.data.shards import iter_episodes

    wanted = share / (1.0 - share) * real_transitions
    episodes, taken = [], 0
    for ep in iter_episodes(str(source), shuffle_shards=False, split_by_node=False, split_by_worker=False):
        if taken >= wanted:
            break
        episodes.append(ep)
        taken += len(ep)
    shutil.rmtree(out, ignore_errors=True)
    with EpisodeWriter(out, DatasetSpec.from_episode(episodes[0]), max_episodes_per_shard=8) as writer:
        for ep in episodes:
            writer.write(ep)
    return str(out)


@dataclass(frozen=True)
class ToyActing:
    """The demo's MPPI on the agent's world model, always seeded with the run's ``seed``."""

    num_samples: int
    iterations: int
    seed: int
    disagreement: float = 0.0
    init_std: float | None = None
    warm_start: str | None = None

    def act(self, agent: Agent, task: Task, seed: int) -> Agent:
        from simdist.registry import create

        given = {k: v for k, v in (("init_std", self.init_std), ("warm_start", self.warm_start)) if v is not None}
        return create("planner", "mppi", world_model=world_model_of(agent), num_samples=self.num_samples,
                      iterations=self.iterations, num_elites=16, seed=self.seed, disagreement=self.disagreement,
                      score_chunk=SCORE_CHUNK, **given)


@dataclass(frozen=True)
class ToyHeldout:
    """``episodes`` held-out episodes per round on ``real`` (:func:`heldout_episodes`, seed ``seed``)."""

    real: Any
    episodes: int
    num_envs: int
    seed: int

    def collect_heldout(self, run: Run) -> tuple[list[Episode], Sequence[bool] | np.ndarray]:
        labels: list[bool] = []

        def collect(seed: int) -> list[Any]:
            result = rollout_on(run.planner(run.base, seed), self.real, self.episodes, self.num_envs, seed,
                                record=True)
            labels.extend(run.task.success(result)[:len(result.episodes)].tolist())
            return list(result.episodes)

        episodes = heldout_episodes(collect, world_model_of(run.base), self.seed)
        for i, ep in enumerate(episodes):  # later rounds number their episodes from 0 again
            ep.episode_id = i
        return episodes, labels


@dataclass(frozen=True)
class ToyCollector:
    """One rollout of the stage's episodes on ``real`` (seed ``seed``, the ``explore`` noise) into the real data,
    8 episodes a shard; a schedule in minutes: ``minutes``, the loop's own collection."""

    real: Any
    num_envs: int
    seed: int
    explore: float
    by_episodes: bool
    minutes: Collector
    log: Callable[[str], None]

    def collect(self, run: Run, agent: Agent, amount: float, stage: int) -> Agent:
        if not self.by_episodes:
            return self.minutes.collect(run, agent, amount, stage)
        noise = f", exploration noise up to {self.explore}" if self.explore else ""
        self.log(f"4/6 logging {int(amount)} {self.real.name!r} episodes with the planner (finetuning data{noise})")
        result = rollout_on(run.planner(agent, 0), self.real, int(amount), self.num_envs, self.seed, record=True,
                            explore=self.explore)
        run.write_episodes(run.data_dir, result.episodes, run.task.success(result), "real", per_shard=8)
        run.save_state()
        return agent


@dataclass
class ToyFinetuner:
    """Only ``config``'s trainable parts (the dynamics), from the pretrained model, on the real data (and the
    ``share`` of simulation data its demo run left beside it), on the toy's learning-rate schedule with the
    ``anchor`` pull and, with ``decision`` > 0, the decision-aware consistency term at that weight; the finetuned
    world model is kept as ``adapted``."""

    config: FinetuneConfig
    seed: int
    anchor: float
    share: float
    log: Callable[[str], None]
    decision: float = 0.0
    adapted: Any = field(default=None, init=False)

    def finetune(self, run: Run, start: Agent, stage: int) -> Agent:
        from simdist.data import TrajectoryDataModule
        from simdist.registry import create
        from simdist.training import FinetuneModule
        from simdist.training.module import epoch_trainer

        c = self.config
        steps = int(run.dataset_info(run.data_dir)["num_steps"])
        what = "only the dynamics" if c.freeze.spec == "dynamics_only" else c.freeze.spec
        self.log(f"5/6 finetuning {what} on {run.minutes(steps):.1f} min of 'real' data")
        model = world_model_of(run.base)
        assert model is not None
        weights = {**c.policy.loss_weights(model), "decision": self.decision} if self.decision else None
        ft = FinetuneModule(init_from=run.model_id, lr=c.lr, end_lr=c.lr / 2, warmup_steps=c.warmup_steps,
                            decay_steps=2_000, anchor=self.anchor, freeze=c.freeze, loss_weights=weights)
        data = [str(run.data_dir)]
        if self.share:
            source = Path(run.model_id).parent / "sim-data"  # where the demo run that pretrained it left its data
            data.append(sim_mix(source, run.out / "sim-mix", self.share, steps))
        dm = TrajectoryDataModule(data, history=model.config.history, horizon=model.config.horizon,
                                  batch_size=c.batch_size, windows_per_epoch=c.windows_per_epoch,
                                  heldout_fraction=0.0, front_pad=run.pad, seed=self.seed)
        epoch_trainer(run.out / "finetune", c.epochs, run.progress).fit(ft, dm)
        self.adapted = ft.world_model.eval()
        return create("agent", "simdist", world_model=self.adapted)


@dataclass
class ToyEvaluator:
    """``episodes`` episodes on ``real`` (seed + 2; at stage 0 also in simulation, seed + 1); the rollouts are
    kept by name (``sim``, ``real_zero_shot``, ``real_adapted``) for the demo's results."""

    real: Any
    episodes: int
    num_envs: int
    seed: int
    log: Callable[[str], None]
    rollouts: dict[str, Any] = field(default_factory=dict, init=False)

    def evaluate(self, run: Run, agent: Agent, stage: int, path: str) -> EvaluationResult:
        from simdist.components.tasks.toy_reach.task import TOY_SUCCESS_RADIUS, final_distances
        from simdist.evaluation import EvaluationResult

        if stage == 0:
            self.log(f"3/6 planning with MPPI in simulation and zero-shot on {self.real.name!r}")
            self.rollouts["sim"] = rollout_on(run.planner(agent, 0), "sim", self.episodes, self.num_envs,
                                              self.seed + 1)
        else:
            self.log(f"6/6 planning on {self.real.name!r} with the adapted model")
        result = rollout_on(run.planner(agent, 0), self.real, self.episodes, self.num_envs, self.seed + 2)
        self.rollouts["real_zero_shot" if stage == 0 else "real_adapted"] = result
        distances = final_distances(result)
        task = run.task
        return EvaluationResult(task=task.task_name, metric=task.metric, profile=task.profile_name,
                                values=result.returns.tolist(), success=(distances < TOY_SUCCESS_RADIUS).tolist(),
                                details={"final_distance": distances.tolist()})


def toy_parts(cfg: AdaptConfig, real: Any, num_samples: int, iterations: int, options: Any,
              log: Callable[[str], None]) -> LoopParts:
    """The toy demo's parts for the loop config ``cfg`` on the profile ``real``: the MPPI budget, the
    :class:`~simdist.components.tasks.toy_reach.demo.ToyOptions` levers (``explore``, ``anchor``, ``sim_mix``,
    ``disagreement``) and the demo's ``log``."""
    seed = cfg.seed
    return LoopParts(
        acting=ToyActing(num_samples, iterations, seed, options.disagreement, cfg.planner_overrides.get("init_std"),
                         cfg.planner_overrides.get("warm_start")),
        heldout=ToyHeldout(real, cfg.heldout_episodes, cfg.num_envs, seed + 4),
        collector=ToyCollector(real, cfg.num_envs, seed + 3, options.explore,
                               cfg.schedule_unit == "episodes", default_parts(cfg).collector, log),
        finetuner=ToyFinetuner(cfg.finetuning, seed, options.anchor, options.sim_mix, log, options.decision),
        evaluator=ToyEvaluator(real, cfg.evaluation.trials, cfg.num_envs, seed, log))
