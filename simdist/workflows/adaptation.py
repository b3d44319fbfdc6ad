"""Real-world adaptation over a data schedule (SIMDIST.md 5, 13 §1.3): the paper's Fig. 4 loop.

For every stage of a schedule of cumulative real-data amounts (minutes at the env's control rate):
collect on-policy MPPI episodes with the previous stage's model until the amount is reached (logged in
the trajectory schema, one dataset folder per run), finetune under a freeze policy (default: only the
dynamics, from the base model, on all real data so far), then evaluate the new model with the planner
on the real env. Stage 0 is the zero-shot model. Each stage also records the latent-consistency loss on
a fixed held-out real set (collected once with the zero-shot planner, never trained on) before and after
finetuning, and the ROC AUC of the value head's scores of logged real episodes (successes vs failures).
State lives in ``state.json`` and is written atomically after every step, so a rerun resumes: logged
episodes carry their success label in their meta (recovered if the kill came before ``state.json`` was
rewritten), collection chunks are seeded by the stage and their first episode id, and an interrupted
stage is finetuned again from its seed. What happens inside a stage (acting, collecting, finetuning, evaluating)
is done by the loop's parts (:mod:`simdist.workflows.loop_parts`), which a demo may replace.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import shutil
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import torch

from simdist.agents import Agent, load_agent
from simdist.arguments import INT_LIMIT
from simdist.capabilities import EvaluationProtocol, require
from simdist.data.engine import PerturbationConfig
from simdist.data.schema import DatasetSpec, Episode
from simdist.fsutil import atomic_path, atomic_write_json, remove_stale_temporaries
from simdist.model.freeze import FINETUNE, FinetuneConfig, FreezePolicy
from simdist.model.world_model import WorldModel
from simdist.provenance import agent_module, weights_fingerprint
from simdist.resources import (
    MAX_ENVS,
    MAX_EPISODES,
    MAX_SCHEDULE_EPISODES,
    MAX_SCHEDULE_MINUTES,
    MAX_STAGES,
    MAX_TRIALS,
    MAX_WORKERS,
)
from simdist.tasks import Task
from simdist.workflows.loop_parts import (
    AgentFinetuner,
    CollectionConfig,
    EvaluationConfig,
    LoopParts,
    PlannerActing,
    ScheduleCollector,
    TaskHeldout,
    check_collection_workers,
    check_count,
)
from simdist.workflows.parallel import evaluation_passes

logger = logging.getLogger(__name__)

#: entries that make a folder an adaptation run (``--out`` of ``simdist adapt``)
RUN_MARKERS = ("state.json", "heldout-data", "real-data", "stages", "curve.json", "lightning", "live")

# ---------------------------------------------------------------------------------------------- metrics
def roc_auc(scores: Sequence[float] | np.ndarray, labels: Sequence[bool] | np.ndarray) -> float | None:
    """ROC AUC of ``scores`` ranking positives (``labels`` True) above negatives; ties count one half.

    Returns None unless both classes are present (Mann-Whitney U with average ranks).
    """
    s = np.asarray(scores, np.float64).ravel()
    y = np.asarray(labels, bool).ravel()
    if s.shape != y.shape:
        raise ValueError(f"{len(s)} scores but {len(y)} labels")
    pos, neg = int(y.sum()), int((~y).sum())
    if pos == 0 or neg == 0:
        return None
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    ranks = ((ends - counts + 1 + ends) / 2.0)[inverse]
    return float((ranks[y].sum() - pos * (pos + 1) / 2.0) / (pos * neg))


def world_model_of(agent: Any) -> WorldModel | None:
    """The world model an agent plans with (None for agents without one)."""
    model = getattr(agent, "world_model", None)
    return model if isinstance(model, WorldModel) else None


@torch.no_grad()
def value_trace(model: WorldModel, episode: Episode, front_padding: int = 0, horizon_step: int = 0,
                last_only: bool = False) -> np.ndarray:
    """The value head's prediction (environment units) at every window of ``episode`` (only the last with
    ``last_only``), read at horizon step ``horizon_step`` of each window's imagined trajectory (0: the first
    step; -1: the bootstrap value MPPI scores a plan with, the horizon's end)."""
    from simdist.training.evaluate import episode_batch

    batch = episode_batch(model, episode, front_padding, last_only=last_only)
    if batch is None:
        return np.zeros(0)
    was_training = model.training
    model.eval()
    values = model.predict(batch, heads=True).values
    model.train(was_training)
    assert values is not None
    return model.normalizer.denormalize("values", values)[:, horizon_step].cpu().numpy()


def episode_value_score(model: WorldModel, episode: Episode, front_padding: int = 0) -> float:
    """The value the model predicts for the state the episode ends in (how it ended; NaN if too short).

    That is the bootstrap value at the horizon's end of the episode's last window (which ends the official
    5 steps before the episode does), imagined from the logged actions: the only window value that sees the
    episode's final steps. A fall is usually in the last half second, which every first-step value misses."""
    trace = value_trace(model, episode, front_padding, horizon_step=-1, last_only=True)
    return float(trace[-1]) if len(trace) else float("nan")


def value_auc(model: WorldModel, episodes: Sequence[Episode], success: Sequence[bool],
              front_padding: int = 0) -> float | None:
    """ROC AUC of :func:`episode_value_score` for successful vs failed episodes (None: one class only)."""
    scores = np.array([episode_value_score(model, ep, front_padding) for ep in episodes])
    ok = np.isfinite(scores)
    return roc_auc(scores[ok], np.asarray(success, bool)[ok])


# ---------------------------------------------------------------------------------------------- loop
SCHEDULE_UNITS = ("minutes", "episodes")
#: the noise windows ``collect_perturbation`` may add to collected episodes, by name
COLLECT_PERTURBATIONS: dict[str, Callable[[], PerturbationConfig]] = {
    "official": PerturbationConfig, "manipulation": PerturbationConfig.manipulation, "push": PerturbationConfig.push}


#: upper limits of AdaptConfig's counts, by option (the others: INT_LIMIT)
INT_LIMITS = {"evaluation.trials": MAX_TRIALS, "num_envs": MAX_ENVS, "evaluation.workers": MAX_WORKERS,
              "heldout_episodes": MAX_EPISODES, "collection.workers": MAX_WORKERS}
#: the counts that may be 0
ZERO_ALLOWED = ("finetune.warmup_steps", "seed", "evaluation.trials")
#: the finetuning settings an adaptation run sets (a stage decays to ``lr / 2`` and trains a value head, when its
#: freeze policy trains one, on TD returns: ``FinetuneConfig``'s ``end_lr`` and ``value_target`` stay unset)
FINETUNE_FIELDS = ("freeze", "epochs", "windows_per_epoch", "batch_size", "lr", "warmup_steps", "decay_steps")


@dataclass
class AdaptConfig:
    """The adaptation loop's own settings (``simdist adapt`` builds its options from this), with its parts' settings
    nested: ``finetune`` (the finetuner's), ``evaluation`` (the evaluator's) and ``collection`` (the collector's).

    Args:
        schedule: cumulative real data per stage in ``schedule_unit``, starting at 0 (the zero-shot stage); at
            most 100 stages and 10080 minutes (a week) or 100000 episodes
        schedule_unit: "minutes" of real data (the legged robot's Fig. 4 axis) or real "episodes" (the arm's: the
            dynamics retrained every 20 episodes)
        init: finetune every stage from the "base" model (on all data) or from the "previous" stage's model
        num_envs: parallel envs for collection and evaluation (at most 4096)
        heldout_episodes: held-out real episodes for the consistency loss (collected once, never trained on; at
            most 1000000)
        planner: planning agents: another registered planner to act with (None: the one in the agent's
            planner.json)
        planner_preset: act with this planner preset's budget instead of the agent's planner.json (the overrides
            replace its values; :func:`simdist.arguments.acting_settings`)
        planner_overrides: single planner settings by their planner.json names (``--planner.KEY VALUE``), checked
            against the acting planner's schema; unset keys: the agent's own (or the preset's)
        seed: base seed of collection, finetuning and evaluation
        update_every: update the agent after every this many real episodes while collecting (the model-free
            baselines update after every episode: 1; counted in episodes whatever the schedule's unit), each update
            continuing from the last; None: once per stage (SimDist, finetuned from ``init`` on all data so far).
            World-model finetuning options (``finetune.epochs``, ``finetune.lr``, ...) go to world-model agents only;
            the others train with their own settings
        prior: dataset folders an agent that learns from prior data (the baselines' simulation data and demos)
            is finetuned with besides the real data
        collect_perturbation: None (the paper: on-policy episodes) or the data engine's action-perturbation windows
            added to the collected episodes' actions (beyond the paper; the recorded action is the applied one):
            "manipulation" (noised U[1, 5] steps with σ ~ U[0.05, 1.0], clean U[5, 10]), "push" (one offset with
            σ ~ U[0.05, 0.3] held over U[3, 10] steps, clean U[5, 10]) or "official" (the locomotion windows,
            SIMDIST 4.4). The held-out episodes stay on-policy
        finetune: the finetuner's settings (:class:`~simdist.model.freeze.FinetuneConfig`; a mapping is read as
            one): ``freeze`` (the trainable components: dynamics_only, all, heads_only, or a set such as
            dynamics,encoder; ``--freeze`` for short), ``epochs`` per stage, ``windows_per_epoch`` (None: one pass
            over the real data, as the official recipe's epochs), ``batch_size``, ``lr`` (the peak; decays to
            lr / 2), ``warmup_steps``, ``decay_steps`` (the steps the learning rate decays over after the warm-up;
            None: ``max(10 * warmup_steps, 2000)``, a short run's; the official recipe: 400000)
        evaluation: the evaluator's settings (:class:`~simdist.workflows.loop_parts.EvaluationConfig`; a mapping is
            read as one): ``trials`` per condition of the task's protocol (at most 100000; 0: no closed-loop
            evaluation: each stage logs, finetunes and records its held-out consistency; judge the saved stage models
            with ``simdist evaluate``) and ``workers``, the processes each stage's evaluation is spread over (tasks
            whose protocol splits into independent passes; the numbers equal one process at one torch thread, so
            stages recorded with another count are kept on resume; at most 256)
        collection: the collector's settings (:class:`~simdist.workflows.loop_parts.CollectionConfig`; a mapping is
            read as one): ``workers``, the processes the real-data chunks run in at once (each on one torch thread;
            written in id order, the data equal one process's at one torch thread, so a run may resume with another
            count; not with ``update_every``; at most 256)

    The flat fields of the finetuning and evaluation settings (``epochs``, ``episodes_per_eval``, ...;
    :data:`simdist.workflows.flat_settings.FLAT`) are still accepted, deprecated, for one release.
    """

    schedule: list[float] = field(default_factory=lambda: [0.0, 8.0, 16.0, 27.0, 36.0])
    schedule_unit: str = "minutes"
    init: str = "base"
    num_envs: int = 8
    heldout_episodes: int = 4
    planner: str | None = None
    planner_preset: str | None = None
    planner_overrides: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    update_every: int | None = None
    prior: list[str] = field(default_factory=list)
    collect_perturbation: str | None = None
    finetune: FinetuneConfig = field(default_factory=FinetuneConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    collection: CollectionConfig = field(default_factory=CollectionConfig)

    def __post_init__(self) -> None:
        try:
            s = [float(x) for x in self.schedule]
        except (TypeError, ValueError) as err:
            raise ValueError(f"schedule must be a list of minutes, got {self.schedule!r}") from err
        if not s or s[0] != 0.0 or any(b <= a for a, b in zip(s, s[1:])) or not all(np.isfinite(s)):
            raise ValueError(f"schedule must start at 0 and increase strictly, got {self.schedule}")
        if self.schedule_unit not in SCHEDULE_UNITS:
            raise ValueError(f"schedule_unit must be one of {SCHEDULE_UNITS}, got {self.schedule_unit!r}")
        if self.schedule_unit == "episodes" and any(x != int(x) for x in s):
            raise ValueError(f"an episode schedule needs whole numbers of episodes, got {self.schedule}")
        most = MAX_SCHEDULE_EPISODES if self.schedule_unit == "episodes" else MAX_SCHEDULE_MINUTES
        if len(s) > MAX_STAGES or s[-1] > most:
            raise ValueError(f"schedule: at most {MAX_STAGES} stages and {most} {self.schedule_unit} of real data, "
                             f"got {len(s)} stages up to {s[-1]:g}")
        if self.init not in ("base", "previous"):
            raise ValueError(f"init must be 'base' or 'previous', got {self.init!r}")
        for name in ("num_envs", "heldout_episodes", "seed"):
            self._check_int(name, getattr(self, name))
        self.check_planner()
        if self.update_every is not None:  # episodes
            self._check_int("update_every", self.update_every)
        if isinstance(self.prior, (str, Path)):
            self.prior = [str(self.prior)]
        self.prior = [str(x) for x in self.prior]
        missing = [x for x in self.prior if not (Path(x) / "dataset.json").is_file()]
        if missing:
            raise ValueError(f"prior: {missing} are not dataset folders (no dataset.json)")
        if self.collect_perturbation not in (None, *COLLECT_PERTURBATIONS):
            raise ValueError(f"collect_perturbation must be one of {sorted(COLLECT_PERTURBATIONS)} or null, got "
                             f"{self.collect_perturbation!r}")
        self.schedule = s
        self.finetune = self._finetune_config(self.finetune)
        self.evaluation = self._evaluation_config(self.evaluation)
        self.collection = self._collection_config(self.collection)
        check_collection_workers(self.collection.workers, self.update_every)
        self._freeze_policy = FreezePolicy.parse(self.finetune.freeze)  # the one parse of the run's policy

    @classmethod
    def check_budget(cls, name: str, value: Any) -> None:
        """ValueError naming ``name`` (``finetune.KEY``, or a flat name of
        :data:`~simdist.workflows.flat_settings.FLAT`) unless ``value`` is in the range of the finetuning or
        evaluation setting it names (the freeze policy: parsed, and refused, where the config is made)."""
        key = name.rpartition(".")[2]
        if key == "lr":
            if isinstance(value, bool) or not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")
        elif key != "freeze" and not (value is None and key in ("windows_per_epoch", "decay_steps")):
            cls._check_int(name, value)

    @classmethod
    def _finetune_config(cls, value: FinetuneConfig | Mapping[str, Any]) -> FinetuneConfig:
        """``value`` (a config, or a mapping of :data:`FINETUNE_FIELDS`) checked as the loop's finetuning."""
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - set(FINETUNE_FIELDS))
            if unknown:
                raise ValueError(f"finetune.{unknown[0]} is not a setting of the loop's finetuning (one of "
                                 f"{', '.join(FINETUNE_FIELDS)})")
            value = {**{key: getattr(FINETUNE, key) for key in FINETUNE_FIELDS}, **value}
            for name in FINETUNE_FIELDS:
                cls.check_budget(f"finetune.{name}", value[name])
            value = FinetuneConfig(**value)
        if not isinstance(value, FinetuneConfig):
            raise ValueError(f"finetune must be a FinetuneConfig or a mapping of its settings, got {value!r}")
        for name in ("end_lr", "value_target"):
            if getattr(value, name) != getattr(FINETUNE, name):
                raise ValueError(f"finetune.{name} is not a setting of the loop's finetuning (one of "
                                 f"{', '.join(FINETUNE_FIELDS)})")
        return value

    @staticmethod
    def _part_config(part: str, cls: type[Any], value: Any) -> Any:
        """``value`` (a ``cls`` or a mapping of its fields) as the part ``part``'s ``cls``; an unknown key or a bad
        value is refused naming ``part.KEY``."""
        if isinstance(value, cls):
            return value
        known = [f.name for f in fields(cls)]
        if not isinstance(value, Mapping):
            raise ValueError(f"{part} must be a{'n' if cls.__name__[0] in 'AEIOU' else ''} {cls.__name__} or a "
                             f"mapping of {', '.join(known)}, got {value!r}")
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise ValueError(f"{part}.{unknown[0]} is not a setting of the {part} (one of {', '.join(known)})")
        try:
            return cls(**value)
        except ValueError as err:
            raise ValueError(f"{part}.{err}") from err

    @classmethod
    def _evaluation_config(cls, value: EvaluationConfig | Mapping[str, Any]) -> EvaluationConfig:
        """``value`` (a config, or a mapping of its fields) as an :class:`EvaluationConfig`."""
        return cast(EvaluationConfig, cls._part_config("evaluation", EvaluationConfig, value))

    @classmethod
    def _collection_config(cls, value: CollectionConfig | Mapping[str, Any]) -> CollectionConfig:
        """``value`` (a config, or a mapping of its fields) as a :class:`CollectionConfig`."""
        return cast(CollectionConfig, cls._part_config("collection", CollectionConfig, value))

    @staticmethod
    def int_bounds(name: str) -> tuple[int, int]:
        """The range the integer option ``name`` accepts (a part's as ``finetune.epochs``; a flat name of
        :data:`~simdist.workflows.flat_settings.FLAT` as the option it stands for)."""
        from simdist.workflows.flat_settings import FLAT, nested

        name = nested(name) if name in FLAT else name
        return (0 if name in ZERO_ALLOWED else 1), INT_LIMITS.get(name, INT_LIMIT)

    def check_planner(self) -> None:
        """The planner, preset and overrides the loop acts with: a registered planner, a known preset, each override a
        setting of the acting planner's schema (InputError naming ``--planner.KEY``)."""
        from simdist.arguments import check_planner_options
        from simdist.planning.base import planner_presets

        if self.planner_preset is not None and self.planner_preset not in planner_presets():
            raise ValueError(f"planner_preset must be one of {sorted(planner_presets())}, got {self.planner_preset!r}")
        if not isinstance(self.planner_overrides, dict):
            raise ValueError(f"planner_overrides must be a mapping of planner settings, got {self.planner_overrides!r}")
        check_planner_options(SimpleNamespace(planner=self.planner, planner_preset=self.planner_preset,
                                              planner_overrides=self.planner_overrides))

    @classmethod
    def _check_int(cls, name: str, value: Any) -> None:
        check_count(name, value, *cls.int_bounds(name))

    @property
    def freeze(self) -> str:
        """The finetuning's freeze policy as text (as given; a policy object: its spec)."""
        given = self.finetune.freeze
        return given if isinstance(given, str) else self._freeze_policy.spec

    @property
    def freeze_policy(self) -> FreezePolicy:
        """The finetuning's ``freeze`` as the policy the run hands its agent (parsed once, when the config was
        made)."""
        return self._freeze_policy

    @property
    def perturbation(self) -> PerturbationConfig | None:
        """The noise windows added to the collected episodes' actions (None: on-policy, the paper)."""
        name = self.collect_perturbation
        return None if name is None else COLLECT_PERTURBATIONS[name]()

    @property
    def finetuning(self) -> FinetuneConfig:
        """The finetuning of each stage (:class:`~simdist.model.freeze.FinetuneConfig`): ``finetune`` with the run's
        parsed policy."""
        return replace(self.finetune, freeze=self.freeze_policy)

    def recorded(self) -> dict[str, Any]:
        """The config in the flat form adaptation runs record it in
        (:func:`~simdist.workflows.flat_settings.recorded_form`): the same settings give the same record as before
        the parts had their own configs; ``collection_workers`` (``collection.workers``) follows when it is not 1."""
        from simdist.workflows.flat_settings import recorded_form

        loop = {f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self)
                if f.name not in ("finetune", "evaluation", "collection")}
        if self.collection.workers != 1:
            loop["collection_workers"] = self.collection.workers
        finetune = {key: getattr(self.finetune, key) for key in FINETUNE_FIELDS} | {"freeze": self.freeze}
        return recorded_form(loop, {"finetune": finetune, "evaluation": asdict(self.evaluation)})


def _accept_old_fields(cls: type[AdaptConfig]) -> None:
    """``AdaptConfig(OLD_FIELD=VALUE, ...)``: the fields that named planner settings before ``planner_overrides``
    (deprecated; :data:`simdist.planning.legacy.FIELDS`) become overrides, and the flat fields of the finetuning and
    evaluation settings (:data:`simdist.workflows.flat_settings.FLAT`) set them, with a warning each (``freeze``:
    none). The signature shown (and read by ``simdist adapt``'s parser) is the dataclass's own."""
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self: AdaptConfig, *args: Any, **kwargs: Any) -> None:
        from simdist.planning.legacy import FIELDS, from_fields
        from simdist.workflows.flat_settings import FLAT, nest

        old = {name: kwargs.pop(name) for name in list(kwargs) if name in FIELDS}
        if old:
            kwargs["planner_overrides"] = {**from_fields(old), **(kwargs.get("planner_overrides") or {})}
        flat = {name: kwargs.pop(name) for name in list(kwargs) if name in FLAT}
        for name, value in flat.items():  # refused under the name given
            AdaptConfig.check_budget(name, value)
        if flat:
            parts = {name: _as_mapping(kwargs.get(name)) for name in ("finetune", "evaluation")}
            kwargs.update(nest(flat, parts))
        init(self, *args, **kwargs)

    cls.__init__ = __init__  # type: ignore[method-assign]


def _as_mapping(value: Any) -> dict[str, Any]:
    """A part's settings (its config, a mapping or None) as a mapping of the settings given."""
    if value is None:
        return {}
    if isinstance(value, FinetuneConfig):
        return {key: getattr(value, key) for key in FINETUNE_FIELDS}
    if isinstance(value, EvaluationConfig):
        return asdict(value)
    return dict(value)


_accept_old_fields(AdaptConfig)


class AdaptationLoop:
    """Runs (or resumes) the schedule in ``out``; see the module docstring. ``run()`` returns the curve.

    What happens inside a stage is done by ``parts`` (:class:`~simdist.workflows.loop_parts.LoopParts`; None:
    :func:`default_parts` of the config): acting, held-out collection, collection, finetuning and evaluation.
    ``base``: the model behind ``model`` if the caller has loaded it already (it is not loaded again).
    ``stage_folders``: the folders (under ``out``) some stages' models are saved to instead of ``stages/stage-k``.
    """

    def __init__(self, model: str, task: Task, out: str | Path, config: AdaptConfig | None = None,
                 progress: bool = False, log: Callable[[str], None] = logger.info, data_from: str | Path | None = None,
                 base: Agent | None = None, parts: LoopParts | None = None,
                 stage_folders: dict[int, str] | None = None) -> None:
        self.model_id = str(model)
        self.task = require(task, EvaluationProtocol, "the adaptation loop")
        self.cfg = config or AdaptConfig()
        evaluation_passes(self.task, self.cfg.evaluation.trials, self.cfg.seed + 1, self.cfg.evaluation.workers,
                          "--evaluation.workers")  # a task that cannot split its evaluation: refused before any work
        self.parts = parts or default_parts(self.cfg)
        self.stage_folders = dict(stage_folders or {})
        self.out = Path(out)
        self.progress = progress
        self.log = log
        self.base = base if base is not None else load_agent(self.model_id)
        self.base.check_freeze(self.cfg.freeze_policy)  # a policy this agent cannot finetune with: before any work
        wm = world_model_of(self.base)
        self.pad = wm.config.history if wm is not None else 0
        self.out.mkdir(parents=True, exist_ok=True)
        for folder in (self.out, self.out / "stages", self.heldout_dir, self.data_dir):
            remove_stale_temporaries(folder)  # what a killed run left mid-write
        self.state = self._load_state()
        if data_from is not None:
            self._adopt_data(Path(data_from))
        self._sync_labels()
        self._heldout: list[Episode] | None = None

    def _adopt_data(self, source: Path) -> None:
        """Start from another run's logged real and held-out episodes (ablations: the same data, other
        trainable parts): stages then only collect beyond what ``source`` holds. Done once per ``out``."""
        if self.heldout_dir.exists() or self.data_dir.exists():
            return
        state_file = source / "state.json"
        if not state_file.is_file():
            raise FileNotFoundError(f"--data-from {source}: no state.json (not an adaptation run folder)")
        other = json.loads(state_file.read_text())
        if other.get("task", {}).get("name") != self.task.describe()["name"]:
            raise ValueError(f"--data-from {source} logged task {other.get('task', {}).get('name')!r}, "
                             f"this run is {self.task.describe()['name']!r}")
        for name in ("heldout-data", "real-data"):
            if (source / name).is_dir():
                shutil.copytree(source / name, self.out / name)
        self.state["labels"] = other.get("labels", {})
        self.state["data_from"] = str(source)
        self.save_state()

    # -- state ------------------------------------------------------------------------------------
    @property
    def state_path(self) -> Path:
        """The run's ``state.json`` (what is done, the labels, the settings a resumed run must match)."""
        return self.out / "state.json"

    @property
    def data_dir(self) -> Path:
        """The logged real episodes the stages finetune on."""
        return self.out / "real-data"

    @property
    def heldout_dir(self) -> Path:
        """The held-out real episodes (never trained on)."""
        return self.out / "heldout-data"

    def _load_state(self) -> dict[str, Any]:
        fresh = {"model": self.model_id, "model_weights": weights_fingerprint(agent_module(self.base)),
                 "task": self.task.describe(),
                 "freeze": self.cfg.freeze, "config": self.cfg.recorded(), "stages": [], "labels": {}}
        if not self.state_path.exists():
            return fresh
        state = json.loads(self.state_path.read_text())
        for key in ("model", "model_weights", "freeze"):
            if key in state and state[key] != fresh[key]:
                what = "the weights behind the same model id changed" if key == "model_weights" else (
                    f"{key} is {state.get(key)!r}, this run asks for {fresh[key]!r}")
                raise ValueError(f"{self.state_path}: {what}; use another --out")
        state.setdefault("model_weights", fresh["model_weights"])
        state["config"] = fresh["config"]  # budgets may change between runs; the data stays
        return state

    def save_state(self) -> None:
        """Write ``state.json`` (atomically)."""
        atomic_write_json(self.state_path, self.state)

    # -- records ----------------------------------------------------------------------------------
    def planner(self, agent: Agent, seed: int) -> Agent:
        """``agent`` as the run acts with it (the acting part: the planner budget) with ``seed``."""
        return self.parts.acting.act(agent, self.task, seed)

    def minutes(self, steps: int) -> float:
        """Minutes of real data in ``steps`` control steps of the task."""
        return steps * self.task.dt / 60.0

    def load_model(self, path: str) -> Agent:
        """The agent saved at ``path`` (a stage's model folder)."""
        return load_agent(path)

    def write_episodes(self, folder: Path, episodes: Sequence[Episode], success: Sequence[bool] | np.ndarray,
                       split: str, per_shard: int = 10_000) -> None:
        """Log ``episodes`` into ``folder`` with their success labels (in their meta and in ``state.json``'s
        ``split``); the caller saves the state."""
        from simdist.data import EpisodeWriter

        labels = self.state["labels"].setdefault(split, {})
        with EpisodeWriter(folder, DatasetSpec.from_episode(episodes[0]), max_episodes_per_shard=per_shard) as w:
            for ep, ok in zip(episodes, success):
                ep.meta["success"] = bool(ok)  # the label travels with the episode (see _sync_labels)
                w.write(ep)
                labels[str(ep.episode_id)] = bool(ok)

    def _sync_labels(self) -> None:
        """Take the success labels of logged episodes that ``state.json`` lacks from the episodes themselves:
        a run killed after a shard was committed but before ``state.json`` was rewritten loses nothing."""
        for split, folder in (("heldout", self.heldout_dir), ("real", self.data_dir)):
            labels = self.state["labels"].setdefault(split, {})
            ids = {str(i) for sh in self.dataset_info(folder)["shards"] for i in sh["episode_ids"]}
            if ids <= set(labels):
                continue
            for ep in self.episodes(folder):
                if str(ep.episode_id) not in labels and "success" in ep.meta:
                    labels[str(ep.episode_id)] = bool(ep.meta["success"])
            self.save_state()

    @staticmethod
    def dataset_info(folder: Path) -> dict[str, Any]:
        """``folder``'s ``dataset.json`` (no steps and no shards while there is none)."""
        from simdist.data import read_dataset_info

        return read_dataset_info(folder) if (folder / "dataset.json").exists() else {"num_steps": 0, "shards": []}

    def episodes(self, folder: Path) -> list[Episode]:
        """Every episode logged in ``folder``, in order."""
        from simdist.data import iter_episodes

        if not (folder / "dataset.json").exists():
            return []
        return list(iter_episodes(str(folder), shuffle_shards=False, split_by_node=False, split_by_worker=False))

    def heldout(self) -> list[Episode]:
        """The held-out real set: collected once (the held-out part), never trained on."""
        if self._heldout is None:
            if len(self.dataset_info(self.heldout_dir).get("shards", [])) == 0:
                eps, ok = self.parts.heldout.collect_heldout(self)
                self.write_episodes(self.heldout_dir, eps, ok, "heldout")
                self.save_state()
            self._heldout = self.episodes(self.heldout_dir)
        return self._heldout

    def consistency(self, agent: Agent) -> float:
        """Held-out latent-consistency loss; NaN (with a warning) if no held-out episode fills a window or the
        agent has no world model."""
        from simdist.training.evaluate import consistency_loss

        model = world_model_of(agent)
        if model is None:
            return float("nan")
        try:
            return float(consistency_loss(model, self.heldout(), front_padding=self.pad))
        except ValueError as err:
            lengths = [len(ep) for ep in self.heldout()]
            warnings.warn(f"held-out consistency not computed: {err} (held-out episode lengths {lengths}, a window "
                          f"needs {model.config.horizon + 1} steps); collect more with --heldout-episodes",
                          stacklevel=2)
            return float("nan")

    def auc(self, agent: Agent) -> float | None:
        """Value AUC over every logged real episode (held-out and collected) with a success label (None
        without a world model)."""
        model = world_model_of(agent)
        if model is None:
            return None
        eps, ok = [], []
        for split, folder in (("heldout", self.heldout_dir), ("real", self.data_dir)):
            labels = self.state["labels"].get(split, {})
            for ep in self.episodes(folder):
                if str(ep.episode_id) in labels:
                    eps.append(ep)
                    ok.append(labels[str(ep.episode_id)])
        return value_auc(model, eps, ok, self.pad) if eps else None

    # -- stage steps ------------------------------------------------------------------------------
    def collect_until(self, amount: float, model: Agent, stage: int) -> Agent:
        """The collector's episodes of ``model`` appended to the real data until it holds ``amount`` (the
        schedule's unit); returns the agent acting at the end."""
        return self.parts.collector.collect(self, model, amount, stage)

    def finetune(self, init_from: str, stage: int) -> Agent:
        """The finetuner's training of ``init_from`` (the model id or a stage's folder) on the real data so far."""
        start = self.base if init_from == self.model_id else self.load_model(init_from)
        return self.parts.finetuner.finetune(self, start, stage)

    def run_stage(self, k: int) -> dict[str, Any]:
        """Collect (stage > 0), finetune and evaluate stage ``k``; returns its entry."""
        cfg, started = self.cfg, time.perf_counter()
        amount = cfg.schedule[k]
        prev = self.state["stages"][k - 1]["model"] if k else self.model_id
        incoming = self.load_model(prev) if k else self.base
        before = self.consistency(incoming)
        if k == 0:
            model, path, trained = self.base, self.model_id, False
        elif cfg.update_every is not None:  # updated while collecting, each update from the last
            model = self.collect_until(amount, incoming, k)
            path, trained = self.stage_path(k), True
        else:
            self.collect_until(amount, incoming, k)
            model = self.finetune(self.model_id if cfg.init == "base" else prev, k)
            path = self.stage_path(k)
            trained = True
        info = self.dataset_info(self.data_dir)
        from simdist.provenance import provenance

        entry: dict[str, Any]
        entry = {"stage": k, "target_minutes": amount if cfg.schedule_unit == "minutes" else None,
                 "target_episodes": int(amount) if cfg.schedule_unit == "episodes" else None,
                 "settings": self.stage_settings(k),
                 "provenance": provenance(model),
                 "minutes": self.minutes(int(info["num_steps"])) if k else 0.0,
                 "episodes": int(info.get("num_episodes", 0)) if k else 0, "model": path, "finetuned": trained,
                 "freeze": cfg.freeze, "init": cfg.init, "metric": self.task.metric}
        entry["consistency"] = {"before": before, "after": self.consistency(model) if trained else before}
        entry["value_auc"] = self.auc(model)
        if trained:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", ".*is not a Hub repo id.*")
                model.save_pretrained(path, base_model=self.model_id,
                                      metrics={"real_minutes": entry["minutes"], "stage": k,
                                               "heldout_consistency": entry["consistency"]["after"]})
        result = self.parts.evaluator.evaluate(self, model, k, path)
        entry["eval"] = None if result is None else result.to_dict()
        if result is None:
            entry["value"], entry["ci95"], entry["trials"] = None, None, 0
        else:
            estimate = result.estimate()
            entry["value"], entry["ci95"], entry["trials"] = estimate.mean, [estimate.low, estimate.high], estimate.n
        entry["seconds"] = time.perf_counter() - started
        return entry

    def stage_path(self, k: int) -> str:
        """The folder stage ``k``'s finetuned model is saved to (``stage_folders`` or ``stages/stage-k``)."""
        return str(self.out / self.stage_folders.get(k, f"stages/stage-{k}"))

    def stage_settings(self, k: int) -> dict[str, Any]:
        """Everything but the logged data that stage ``k``'s numbers depend on: the task, the schedule up to
        ``k`` and every budget and seed of the config, in the flat form runs recorded before the loop's parts had
        their own configs (:meth:`AdaptConfig.recorded`). The default ``schedule_unit`` (minutes) is left out, so
        runs recorded before the option existed resume instead of running again, and so are ``eval_workers``
        (``evaluation.workers``) and ``collection_workers`` (``collection.workers``), which do not change the
        numbers; ``update_every`` and ``prior`` are left out while unset. With a ``planner_preset`` the planner
        budget is recorded as runs recorded it before a model's ``planner.json`` became the default, and the
        overrides as runs recorded them before ``planner_overrides``
        (:func:`~simdist.planning.legacy.recorded_settings`), so those runs resume when given the same settings."""
        # unset: as before they existed
        defaults: dict[str, Any] = {"schedule_unit": "minutes", "update_every": None, "prior": [], "decay_steps": None}
        config = {key: value for key, value in self.cfg.recorded().items()
                  if key not in ("schedule", "eval_workers", "collection_workers")
                  and not (key in defaults and value == defaults[key])}
        from simdist.planning.legacy import recorded_settings

        config = recorded_settings(config, self.task.planner_preset)  # as runs recorded it: they resume
        return {"task": self.task.describe(), "schedule": self.cfg.schedule[: k + 1], "config": config}

    def stages_done(self) -> int:
        """How many leading stages of ``state.json`` a resumed run keeps: those recorded with this run's
        settings (:meth:`stage_settings`). A stage from another command (other trials, planner budget, seed,
        ...) runs again on the data already logged, so a folder never reports numbers of another command."""
        stages, done = self.state["stages"], 0
        while done < min(len(stages), len(self.cfg.schedule)) and \
                json.loads(json.dumps(stages[done].get("settings"))) == json.loads(
                    json.dumps(self.stage_settings(done))):
            done += 1
        return done

    def run(self) -> dict[str, Any]:
        """Run every unfinished stage (resuming), then write ``curve.json`` and ``curve.png``."""
        started, times = time.perf_counter(), []
        stages = self.state["stages"]
        del stages[self.stages_done():]
        self.heldout()
        n = len(self.cfg.schedule)
        for k in range(n):
            if k < len(stages):
                continue
            entry = self.run_stage(k)
            stages.append(entry)
            self.save_state()
            times.append(entry["seconds"])
            eta = np.mean(times) * (n - k - 1)
            auc = "n/a" if entry["value_auc"] is None else f"{entry['value_auc']:.2f}"
            judged = "not evaluated here"
            if entry["value"] is not None:
                low, high = entry["ci95"]
                judged = f"{self.task.metric} {entry['value']:.3f} [{low:.3f}, {high:.3f}] (n={entry['trials']})"
            self.log(f"[stage {k + 1}/{n}] {entry['minutes']:.2f} min ({entry['episodes']} episodes) real data: "
                     f"{judged}, "
                     f"held-out consistency {entry['consistency']['before']:.4f} -> "
                     f"{entry['consistency']['after']:.4f}, value AUC {auc}; "
                     f"elapsed {time.perf_counter() - started:.0f}s, ETA {eta:.0f}s")
        return self.write_curve()

    def write_curve(self) -> dict[str, Any]:
        """``curve.json`` (metric, consistency and value AUC vs minutes) and ``curve.png``."""
        stages = self.state["stages"]
        curve = {"model": self.model_id, "task": self.task.describe(), "metric": self.task.metric,
                 "freeze": self.cfg.freeze, "init": self.cfg.init,
                 "schedule_unit": self.cfg.schedule_unit, "episodes": [s["episodes"] for s in stages],
                 "minutes": [s["minutes"] for s in stages], "target_minutes": [s["target_minutes"] for s in stages],
                 "value": [s["value"] for s in stages], "ci95": [s.get("ci95") for s in stages],
                 "trials": [s.get("trials") for s in stages],
                 "consistency_before": [s["consistency"]["before"] for s in stages],
                 "consistency_after": [s["consistency"]["after"] for s in stages],
                 "value_auc": [s["value_auc"] for s in stages], "models": [s["model"] for s in stages]}
        atomic_write_json(self.out / "curve.json", curve)
        with atomic_path(self.out / "curve.png") as tmp:
            plot_curve(curve, tmp)
        return curve


def planner_acting(cfg: AdaptConfig) -> PlannerActing:
    """The acting part of ``cfg``'s planner budget (its planner, preset and overrides)."""
    return PlannerActing(cfg.planner_preset, dict(cfg.planner_overrides), cfg.planner)


def schedule_collector(cfg: AdaptConfig) -> ScheduleCollector:
    """The config's real-data collector: one process, or ``collection.workers`` processes writing the same data."""
    settings: dict[str, Any] = {"by_episodes": cfg.schedule_unit == "episodes", "update_every": cfg.update_every,
                                "perturbation": cfg.perturbation}
    if cfg.collection.workers == 1:
        return ScheduleCollector(cfg.num_envs, cfg.seed, **settings)
    from simdist.workflows.parallel_collection import ParallelScheduleCollector

    return ParallelScheduleCollector(cfg.num_envs, cfg.seed, **settings, workers=cfg.collection.workers)


def default_parts(cfg: AdaptConfig) -> LoopParts:
    """The loop's parts for ``cfg``: the agent acting with the run's planner budget, the task's held-out and
    on-policy collection (seeds ``seed + 7`` and ``seed``), the agent's own finetuning under the run's freeze
    policy and budget, and the task's protocol (seed ``seed + 1``)."""
    return LoopParts(
        acting=planner_acting(cfg),
        heldout=TaskHeldout(cfg.heldout_episodes, cfg.num_envs, cfg.seed + 7),
        collector=schedule_collector(cfg),
        finetuner=AgentFinetuner(cfg.finetuning, cfg.seed, tuple(cfg.prior)),
        evaluator=cfg.evaluation.evaluator(cfg.num_envs, cfg.seed + 1))


def stage_planner(agent: Agent, task: Task, cfg: AdaptConfig, seed: int) -> Agent:
    """``agent`` acting with ``cfg``'s planner budget on ``task`` (planning agents) and ``seed``."""
    return planner_acting(cfg).act(agent, task, seed)


def plot_curve(curve: dict[str, Any], path: str | Path) -> None:
    """Metric vs real data (like the paper's Fig. 4) and held-out consistency vs real data, over minutes or
    episodes (the curve's ``schedule_unit``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    unit = curve.get("schedule_unit", "minutes")
    x = curve["episodes"] if unit == "episodes" else curve["minutes"]
    label = "real episodes" if unit == "episodes" else "real data (min)"
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    axes[0].plot(x, [np.nan if v is None else v for v in curve["value"]], "o-", color="#48c")
    bands = [(m, ci) for m, ci in zip(x, curve.get("ci95") or []) if ci]
    if bands:
        axes[0].fill_between([m for m, _ in bands], [ci[0] for _, ci in bands], [ci[1] for _, ci in bands],
                             color="#48c", alpha=0.2, label="95 % CI")
    axes[0].set_xlabel(label)
    axes[0].set_ylabel(curve["metric"])
    axes[1].plot(x, curve["consistency_after"], "o-", color="#c44")
    axes[1].set_xlabel(label)
    axes[1].set_ylabel("held-out consistency loss")
    fig.suptitle(f"{curve['task']['name']}: adaptation, freeze={curve['freeze']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
