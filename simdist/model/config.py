"""``WorldModelConfig``: the JSON-serialisable description from which a world model is rebuilt."""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import MISSING, asdict, dataclass, field
from typing import Any

from simdist.errors import InputError
from simdist.fsutil import read_json_object

#: Version of the ``config.json`` layout. Bump it with a migration in :func:`migrate_config`.
CONFIG_SCHEMA_VERSION = 1
#: the ``config.json`` key naming the agent class that reads a saved folder (:func:`simdist.agents.load_agent`)
AGENT_TYPE_KEY = "agent_type"
#: the agent type of a world model's folder (read by the SimDist agent); folders without the key are world models
WORLD_MODEL_AGENT_TYPE = "simdist"


class ConfigError(InputError):
    """A world-model configuration is malformed or from an unknown schema version."""


class ComponentBuildError(TypeError):
    """A component of a configuration cannot be built with its arguments; ``key`` is the config key."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.key = key


@contextmanager
def config_file(path: str | os.PathLike) -> Iterator[None]:
    """Errors of the block that parses or builds what the file ``path`` describes become a :class:`ConfigError`
    naming the file and, where known, the key: a malformed value, an unknown component name (``KIND.name``),
    component arguments its constructor refuses (``KIND.kwargs``) or a missing key."""
    where = os.fspath(path)
    try:
        yield
    except (ValueError, TypeError, KeyError) as err:
        if isinstance(err, InputError) and where in str(err):
            raise
        if where in str(err):
            raise ConfigError(str(err)) from err
        kind = getattr(err, "kind", None)
        key = getattr(err, "key", None) or (f"{kind}.name" if kind else None)
        message = f"missing key {err}" if type(err) is KeyError else str(err)
        raise ConfigError(f"{where}: {f'key {key!r}: ' if key else ''}{message}") from err


@dataclass
class ComponentSpec:
    """A registered component name and the keyword arguments it is built with."""

    name: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, value: ComponentSpec | dict[str, Any] | str) -> ComponentSpec:
        """A spec from a spec, a ``{"name", "kwargs"}`` dict or a registered component's name."""
        if isinstance(value, ComponentSpec):
            return value
        if isinstance(value, str):
            return cls(value)
        if not isinstance(value, dict) or "name" not in value:
            raise ConfigError(f"a component spec needs a 'name' (and optional 'kwargs'); got {value!r}")
        unknown = set(value) - {"name", "kwargs"}
        if unknown:
            raise ConfigError(f"unknown keys {sorted(unknown)} in component spec {value!r}")
        return cls(value["name"], dict(value.get("kwargs") or {}))


@dataclass(frozen=True)
class PolicyInput:
    """What the policy head reads of the encoder's context (``WorldModelConfig.policy_input``).

    ``actions``: keep the past-action tokens (the paper's option drops them: a head that sees the previous
    action can repeat it instead of reading the state). ``history``: keep the history tokens (false: the chunk
    is predicted from the current observation's latent alone). ``mask_obs``: ``{group: [dims]}`` zeroed, after
    normalisation, in the observations of the policy's own encoding (the dynamics and the heads still read
    them), for observation groups that carry the previous action.
    """

    actions: bool = True
    history: bool = True
    mask_obs: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def parse(cls, value: Any, obs_spec: Mapping[str, list[int]]) -> PolicyInput:
        if isinstance(value, PolicyInput):
            value = value.to_dict()
        if not isinstance(value, dict):
            raise ConfigError(f"policy_input must be a mapping with actions/history/mask_obs, got {value!r}")
        unknown = set(value) - {"actions", "history", "mask_obs"}
        if unknown:
            raise ConfigError(f"unknown policy_input keys {sorted(unknown)} (known: actions, history, mask_obs)")
        for key in ("actions", "history"):
            if not isinstance(value.get(key, True), bool):
                raise ConfigError(f"policy_input.{key} must be true or false, got {value[key]!r}")
        mask = value.get("mask_obs") or {}
        if not isinstance(mask, dict):
            raise ConfigError(f"policy_input.mask_obs must map observation groups to dims, got {mask!r}")
        clean: dict[str, list[int]] = {}
        for group, dims in mask.items():
            if group not in obs_spec or len(obs_spec[group]) != 1:
                raise ConfigError(f"policy_input.mask_obs: {group!r} is not a flat observation group of obs_spec")
            size = obs_spec[group][0]
            if not isinstance(dims, (list, tuple)) or not dims or any(
                    isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < size for d in dims):
                raise ConfigError(f"policy_input.mask_obs[{group!r}] must be a list of dims in [0, {size}), "
                                  f"got {dims!r}")
            clean[str(group)] = sorted({int(d) for d in dims})
        return cls(bool(value.get("actions", True)), bool(value.get("history", True)), clean)

    def to_dict(self) -> dict[str, Any]:
        return {"actions": self.actions, "history": self.history, "mask_obs": dict(self.mask_obs)}


@dataclass
class WorldModelConfig:
    """Everything needed to rebuild a :class:`~simdist.WorldModel` (weights excluded).

    ``obs_spec`` maps each observation group the model reads to its per-step shape. ``value_offset``
    says which critic value the value head was trained against: 0 pairs the predicted latent
    ``ẑ_{t+k}`` with ``V(s_{t+k})`` (default), 1 with ``V(s_{t+k+1})`` as the official code does;
    planners bootstrap with ``γ^(T + value_offset)`` accordingly.
    """

    obs_spec: dict[str, list[int]]
    action_dim: int
    encoder: ComponentSpec
    dynamics: ComponentSpec
    reward_head: ComponentSpec
    value_head: ComponentSpec
    policy_head: ComponentSpec | None = None
    #: an observation decoder (Table I's reconstruction ablation; SimDist has none)
    decoder_head: ComponentSpec | None = None
    #: what the policy head reads (None: the whole context, as the paper's default). ``actions`` false drops
    #: the past-action tokens; ``history`` false keeps only the current latent token; ``mask_obs`` maps
    #: observation groups to the dims the policy's encoding sees zeroed (normalised: the data's mean), e.g. a
    #: previous action carried inside an observation. Against the copycat shortcut (:class:`PolicyInput`).
    policy_input: dict[str, Any] | None = None
    command_dim: int = 0
    history: int = 25
    horizon: int = 25
    latent_dim: int = 64
    dt: float = 0.02
    value_offset: int = 0
    action_low: list[float] | None = None
    action_high: list[float] | None = None
    task: str = ""
    robot: str = ""
    schema_version: int = CONFIG_SCHEMA_VERSION

    def __post_init__(self) -> None:
        for key in ("encoder", "dynamics", "reward_head", "value_head"):
            setattr(self, key, ComponentSpec.parse(getattr(self, key)))
        if self.policy_head is not None:
            self.policy_head = ComponentSpec.parse(self.policy_head)
        if self.decoder_head is not None:
            self.decoder_head = ComponentSpec.parse(self.decoder_head)
        if self.policy_input is not None:
            self.policy_input = PolicyInput.parse(self.policy_input, self.obs_spec).to_dict()
        for group, shape in self.obs_spec.items():
            sizes_ok = isinstance(shape, (list, tuple)) and all(isinstance(s, int) for s in shape)
            if not sizes_ok or any(isinstance(s, bool) for s in shape):
                raise ConfigError(f"obs_spec[{group!r}] must be a list of integer sizes, got {shape!r}")
        self.obs_spec = {str(k): [int(s) for s in v] for k, v in self.obs_spec.items()}
        if not self.obs_spec:
            raise ConfigError("obs_spec is empty: name at least one observation group")
        if self.value_offset not in (0, 1):
            raise ConfigError(f"value_offset must be 0 or 1, got {self.value_offset}")
        for group, shape in self.obs_spec.items():
            if not shape or any(s < 1 for s in shape):
                raise ConfigError(f"obs_spec[{group!r}] must be a shape of positive sizes, got {shape}")
        for key, low in (("action_dim", 1), ("command_dim", 0), ("history", 1), ("horizon", 1), ("latent_dim", 1)):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"{key} must be an integer >= {low}, got {value!r}")
        if not (isinstance(self.dt, (int, float)) and math.isfinite(self.dt) and self.dt > 0):
            raise ConfigError(f"dt must be a positive number of seconds, got {self.dt!r}")
        for bound in ("action_low", "action_high"):
            value = getattr(self, bound)
            if value is not None and len(value) != self.action_dim:
                raise ConfigError(f"{bound} has {len(value)} entries but action_dim is {self.action_dim}")

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-ready dict (optional keys only when used)."""
        data = asdict(self)
        for key in ("decoder_head", "policy_input"):  # absent unless used: older configs stay byte-identical
            if data[key] is None:
                del data[key]
        return data

    def to_json(self) -> str:
        # Only the top level is sorted: obs_spec order decides how encoders concatenate groups.
        """The config as the JSON text of a model folder's ``config.json``."""
        data = self.to_dict()
        return json.dumps({k: data[k] for k in sorted(data)}, indent=2)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorldModelConfig:
        """A config from a dict, migrating older schema versions first."""
        data = migrate_config(data)
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown world-model config keys: {sorted(unknown)}")
        missing = [k for k, f in cls.__dataclass_fields__.items()
                   if f.default is MISSING and f.default_factory is MISSING and k not in data]
        try:
            return cls(**data)
        except TypeError as err:
            raise ConfigError(f"invalid world-model config ({err}); missing required keys: {missing}") from err

    @classmethod
    def from_saved(cls, data: Mapping[str, Any], path: str | os.PathLike) -> WorldModelConfig:
        """The config of a saved world model from its ``config.json`` dict ``data`` (read from ``path``, which
        errors name); a :class:`ConfigError` when the folder holds another agent than a world model."""
        agent_type = data.get(AGENT_TYPE_KEY, WORLD_MODEL_AGENT_TYPE)
        if agent_type != WORLD_MODEL_AGENT_TYPE:
            raise ConfigError(f"{os.fspath(path)}: the folder holds a {agent_type!r} agent, not a SimDist world model; "
                              "load it with simdist.agents.load_agent")
        with config_file(path):
            return cls.from_dict(dict(data))

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> WorldModelConfig:
        """:meth:`from_saved` of the ``config.json`` at ``path`` (any known schema version)."""
        return cls.from_saved(read_json_object(path, ConfigError), path)

    def replace(self, **changes: Any) -> WorldModelConfig:
        """A copy with ``changes`` applied (checked as a new config)."""
        data = self.to_dict()
        data.update(changes)
        return WorldModelConfig.from_dict(data)


def check_int(value: Any, name: str, low: int = 1) -> int:
    """``value`` if it is an integer >= ``low`` (not a bool), else a ConfigError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}")
    return value


def dataclass_fields_from_dict(cls: type[Any], data: Mapping[str, Any], what: str, schema_version: int
                               ) -> dict[str, Any]:
    """The keyword arguments of the config dataclass ``cls`` in a ``config.json`` dict (a deep copy, without
    ``agent_type`` and ``simdist_version``); a ConfigError, naming the config ``what``, for a schema newer than
    ``schema_version``, unknown keys or missing required ones."""
    data = {k: v for k, v in dict(data).items() if k not in ("agent_type", "simdist_version")}
    version = data.get("schema_version", schema_version)
    if isinstance(version, int) and version > schema_version:
        raise ConfigError(f"{what} config schema_version {version} is newer than this simdist understands "
                          f"({schema_version}); upgrade simdist")
    unknown = set(data) - set(cls.__dataclass_fields__)
    if unknown:
        raise ConfigError(f"unknown {what} config keys: {sorted(unknown)}")
    missing = [k for k, f in cls.__dataclass_fields__.items()
               if f.default is MISSING and f.default_factory is MISSING and k not in data]
    if missing:
        raise ConfigError(f"{what} config is missing required keys: {missing}")
    return copy.deepcopy(data)


def migrate_config(data: dict[str, Any]) -> dict[str, Any]:
    """Bring a ``config.json`` dict of any known schema version to the current one.

    Version 0 (pre-release) stored the component specs under ``components`` and called the
    history length ``history_len``; it is converted here so old artefacts keep loading.
    """
    data = copy.deepcopy(data)
    data.pop("simdist_version", None)
    data.pop("agent_type", None)  # the agent class that reads the folder (simdist.agents), not the model's
    version = int(data.get("schema_version", 0))
    if version > CONFIG_SCHEMA_VERSION:
        raise ConfigError(
            f"config schema_version {version} is newer than this simdist understands "
            f"({CONFIG_SCHEMA_VERSION}); upgrade simdist"
        )
    if version == 0:
        comps = data.pop("components", {})
        for key in ("encoder", "dynamics", "reward_head", "value_head", "policy_head"):
            if key in comps:
                data[key] = comps[key]
        if "history_len" in data:
            data["history"] = data.pop("history_len")
        data["schema_version"] = 1
    return data
