"""Agent plug-ins: one interface for everything that acts, adapts and is shared on the Hub.

An agent (registered as kind ``agent``) acts on a batched observation history with a reset per env,
finetunes on episodes in the trajectory schema under a freeze policy, and saves to / loads from a Hub
folder whose ``config.json`` carries its ``agent_type``. SimDist (a world model plus its planner settings)
is the first; :func:`load_agent` dispatches on the type, so ``simdist evaluate``, ``simdist adapt`` and the
zoo work with any agent. Each agent lives in one folder under ``simdist.components.agents`` (configuration
and modeling, as LeRobot keeps one folder per policy) or in a package registered through the entry-point
group ``simdist.components``.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from torch import Tensor

from simdist.fsutil import read_json_object
from simdist.model.config import AGENT_TYPE_KEY, WORLD_MODEL_AGENT_TYPE
from simdist.model.freeze import FINETUNE
from simdist.registry import RegistryError, get, list_components

if TYPE_CHECKING:
    from simdist.hub.resolve import ModelSource
    from simdist.model.freeze import FreezePolicy
    from simdist.tasks import Task

#: the type of folders written before agents existed: a world model's (``config.json``'s key: ``AGENT_TYPE_KEY``)
LEGACY_AGENT_TYPE = WORLD_MODEL_AGENT_TYPE
#: the freeze policies of agents whose encoder is never trained (BASELINES.md 8.1): they mean the same there
ENCODER_FROZEN = ("heads_only", "all", "policy")


def check_encoder_frozen(freeze: FreezePolicy | str, trains: str) -> None:
    """``check_freeze`` of an agent whose encoder is never trained: a ValueError naming ``freeze`` unless it is one
    of :data:`ENCODER_FROZEN` (``trains``: what the agent trains, e.g. "a td3 agent trains its heads")."""
    from simdist.model.freeze import FreezePolicy

    spec = FreezePolicy.parse(freeze).spec
    if spec not in ENCODER_FROZEN:
        raise ValueError(f"freeze={spec!r}: {trains} on a frozen encoder; use one of {ENCODER_FROZEN}")


class RegisteredAgentType:
    """``cls.agent_type``: the name ``cls`` (or the nearest registered class it derives from) is registered under as
    kind ``agent``, what ``config.json`` records and :func:`load_agent` dispatches on; "" for an unregistered class."""

    def __get__(self, obj: Any, owner: type) -> str:
        for cls in owner.__mro__:
            key = cls.__dict__.get("_simdist_registry_key")
            if key is not None and key[0] == "agent":
                return str(key[1])
        return ""


class Agent(abc.ABC):
    """Acts on :class:`~simdist.planning.ObservationHistory` batches; finetunes; saves and loads."""

    agent_type = RegisteredAgentType()
    #: whether the agent plans with a world model (then the adaptation loop passes its planner budget)
    plans: ClassVar[bool] = False

    @abc.abstractmethod
    def act(self, history: Any) -> Tensor:
        """Actions (B, A) for the B envs of ``history``."""

    def checked_inputs(self, history: Any, config: Any) -> tuple[dict[str, Tensor], Tensor, Tensor | None]:
        """``(obs_hist, act_hist, command or None)`` of ``history`` (float32, where they are), refused with a ValueError
        naming the key unless they are finite and of the shapes ``config`` (``obs_spec``, ``action_dim``,
        ``command_dim``, ``history``) reads; agents that do not plan start ``act`` with it."""
        from simdist.planning.inputs import history_inputs

        return history_inputs(history, config.obs_spec, config.action_dim, config.command_dim, config.history)

    def check_freeze(self, freeze: FreezePolicy | str) -> None:
        """A ValueError naming ``freeze`` when :meth:`finetune` refuses that freeze policy (the adaptation loop asks
        before any work, with the policy it parsed from its config); the default accepts every policy (text is
        parsed with :meth:`~simdist.model.freeze.FreezePolicy.parse`, which refuses what is not one)."""
        from simdist.model.freeze import FreezePolicy

        FreezePolicy.parse(freeze)

    def reset(self, ids: Sequence[int] | Tensor | None = None, seed: int | None = None) -> None:
        """Forget per-env state of envs ``ids`` (all if None); reseed if ``seed`` is given."""
        return None

    @abc.abstractmethod
    def new_history(self, num_envs: int) -> Any:
        """An empty observation history of the shape this agent reads, for ``num_envs`` envs."""

    @abc.abstractmethod
    def finetune(self, data: str | Path, *, freeze: FreezePolicy | str = FINETUNE.freeze, out: str | Path | None = None,
                 seed: int = 0, **settings: Any) -> Agent:
        """A copy finetuned on the episodes of the dataset folder ``data`` (trajectory schema) with the parts
        the freeze policy ``freeze`` (a :class:`~simdist.model.freeze.FreezePolicy`, or text parsed here) leaves
        trainable; ``out`` holds training logs and checkpoints. Defaults: :data:`simdist.model.freeze.FINETUNE`."""

    @abc.abstractmethod
    def save_pretrained(self, folder: str | Path, **kwargs: Any) -> Path:
        """Write a Hub folder (``config.json`` with ``agent_type``, weights, model card), atomically."""

    @classmethod
    @abc.abstractmethod
    def from_pretrained(cls, name_or_path: str | Path, **kwargs: Any) -> Agent:
        """Load from a folder or Hub id."""

    def finetune_options(self, budget: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments of :meth:`finetune` this agent takes from an adaptation run's finetuning budget
        (``epochs``, ``windows_per_epoch``, ``batch_size``, ``lr``, ``warmup_steps``, ``obs_noise``); the default
        takes none (the agent finetunes with its own settings)."""
        return {}

    def with_settings(self, **settings: Any) -> Agent:
        """The same agent acting with other settings (``seed``, a planner budget, ...). The default takes only
        ``seed`` (it reseeds the agent) and refuses anything else."""
        seed = settings.pop("seed", None)
        unknown = sorted(k for k, v in settings.items() if v is not None)
        if unknown:
            raise TypeError(f"{type(self).__name__} takes no act-time settings {unknown}")
        if seed is not None:
            self.reset(seed=seed)
        return self


def agent_types() -> list[str]:
    return list(list_components("agent"))


def agent_class(agent_type: str) -> type[Agent]:
    try:
        return get("agent", agent_type)
    except RegistryError as err:
        raise ValueError(f"unknown agent_type {agent_type!r}; registered agents: {', '.join(agent_types())}"
                         ) from err


def read_agent_type(config_path: str | Path) -> str:
    """The ``agent_type`` of a ``config.json`` (folders from before agents existed are SimDist's)."""
    path = Path(config_path)
    data = read_json_object(path)
    value = data.get(AGENT_TYPE_KEY, LEGACY_AGENT_TYPE)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{path}: {AGENT_TYPE_KEY} must be a non-empty string, got {value!r}")
    return value


#: keyword arguments of ``from_pretrained`` that go to the Hub resolver
HUB_KEYS = ("revision", "cache_dir", "local_files_only", "token")


def open_agent_folder(name_or_path: str | Path, agent_type: str, hub: dict[str, Any], who: str,
                      ) -> tuple[Path, ModelSource, dict[str, Any]]:
    """The folder, source and ``config.json`` of a saved ``agent_type`` agent (a folder or Hub id; ``hub``: the
    resolver's ``revision``, ``cache_dir``, ``local_files_only``, ``token``, anything else a TypeError naming
    ``who``). FileNotFoundError without ``config.json`` or the weights; ConfigError for another agent type."""
    from simdist.hub.files import CONFIG_NAME
    from simdist.hub.load import open_folder
    from simdist.model.config import ConfigError

    unknown = sorted(set(hub) - set(HUB_KEYS))
    if unknown:
        raise TypeError(f"{who} got unexpected keyword arguments {unknown}")
    folder, source, data = open_folder(name_or_path, **hub)
    if data.get(AGENT_TYPE_KEY) != agent_type:
        raise ConfigError(f"{folder / CONFIG_NAME}: the folder holds a {data.get(AGENT_TYPE_KEY, LEGACY_AGENT_TYPE)!r} "
                          f"agent, not a {agent_type!r} one; load it with simdist.agents.load_agent")
    return folder, source, data


def load_agent(name_or_path: str | Path, **kwargs: Any) -> Agent:
    """Load any agent from a folder or Hub id: the folder's ``config.json`` names the class.

    ``kwargs`` go to the class's ``from_pretrained`` (``revision``, ``map_location``, ...).
    """
    from simdist.hub.files import CONFIG_NAME
    from simdist.hub.resolve import resolve_folder

    folder, _ = resolve_folder(name_or_path, **{k: kwargs[k] for k in HUB_KEYS if k in kwargs})
    if not (folder / CONFIG_NAME).is_file():
        raise FileNotFoundError(f"{name_or_path}: no {CONFIG_NAME} in {folder}")
    from simdist.model.config import config_file

    with config_file(folder / CONFIG_NAME):
        cls = agent_class(read_agent_type(folder / CONFIG_NAME))
    rest = {k: v for k, v in kwargs.items() if k not in HUB_KEYS}
    return cls.from_pretrained(folder, **rest)


def build_controller(spec: str, planner: str | None = None, *, device: str = "cpu", seed: int = 0,
                     task: Task | None = None, preset: str | None = None,
                     overrides: Mapping[str, Any] | None = None, **given: Any) -> Any:
    """An agent from a Hub id or folder (``model:`` prefix optional), or ``expert:PATH``.

    A planning agent acts with its own ``planner.json``, the ``overrides`` (and ``given``, the same as keywords:
    ``--planner.KEY VALUE``; None: its own) replacing single keys, checked against its planner's schema;
    ``planner`` another registered planner; ``preset`` a planner preset's budget on ``task``'s preset instead
    (:func:`simdist.arguments.acting_settings`). ``samples=`` is a deprecated keyword."""
    if "samples" in given:
        from simdist.planning.legacy import from_fields

        given = {**from_fields({"samples": given.pop("samples")}, "build_controller"), **given}
    kind, _, target = spec.partition(":")
    if kind == "expert":
        if not target:
            raise ValueError("--agent expert:PATH needs the exported expert's path")
        from simdist.experts import load_policy

        return load_policy(target)
    agent = load_agent(target if kind == "model" and target else spec, map_location=device)
    if task is not None:
        check_agent_for_task(agent, task)
    if planner not in (None, "agent"):
        get("planner", planner)  # an unknown planner: refused before any work
    if not getattr(agent, "plans", False):
        return agent.with_settings(seed=seed)
    from simdist.arguments import acting_settings

    current = getattr(getattr(agent, "config", None), "planner", None)
    return agent.with_settings(**acting_settings(task, planner=planner, current=current, preset=preset, seed=seed,
                                                 overrides={**given, **(overrides or {})}))


def check_model_for_task(config: Any, task: Task, option: str = "--agent") -> None:
    """Refuse a world model of another task (an :class:`~simdist.errors.InputError` naming ``option``): every
    observation group the model (its ``WorldModelConfig`` ``config``) reads, with its shape, and its action size
    must be the task's."""
    from simdist.capabilities import EnvFactory, require
    from simdist.errors import InputError

    spec = require(task, EnvFactory, "a world model's check against its task").dataset_spec()
    have = {k: list(v) for k, v in spec.obs.items()}
    wanted = {k: list(v) for k, v in config.obs_spec.items()}
    if any(have.get(k) != v for k, v in wanted.items()) or config.action_dim != spec.action_dim:
        raise InputError(f"{option}: a model of another task: it reads observations {wanted} and gives "
                         f"{config.action_dim} actions; task {task.task_name!r} has {have} and takes "
                         f"{spec.action_dim}")


def check_agent_for_task(agent: Any, task: Task, option: str = "--agent") -> None:
    """:func:`check_model_for_task` for an agent with a world model (others are checked when they act)."""
    config = getattr(getattr(agent, "world_model", None), "config", None)
    if config is not None and hasattr(config, "obs_spec"):
        check_model_for_task(config, task, option)
