"""Trajectory schema v1: one :class:`Episode` per simulated or real episode.

Index alignment (SIMDIST.md 3.5): for step ``i`` of an episode,

- ``obs[g][i]`` is the pre-step observation o_i,
- ``actions[i]`` is the *applied* action a_i (injected noise included),
- ``commands[i]`` is c_i (``C`` may be 0),
- ``rewards[i]`` is r(s_i, a_i), dt-scaled,
- ``values[i]`` is V(s_{i+1}), the critic on the post-step state,
- ``expert[i]`` says a_i came from the expert without injected noise.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from simdist.errors import InputError

#: The trajectory schema's version; :func:`migrate` upgrades samples written with an older one.
SCHEMA_VERSION = 1

#: Per-step array fields of an episode besides the observation groups.
STEP_FIELDS: tuple[str, ...] = ("actions", "commands", "rewards", "values", "expert")

_GROUP_RE = re.compile(r"^[a-z0-9_]+$")


class DataError(InputError):
    """Malformed trajectory data; the message names where (shard url, sample key) and which key."""


def _check_group_name(name: str) -> None:
    # webdataset splits sample keys at the first dot and lowercases suffixes
    if not _GROUP_RE.match(name):
        raise DataError(f"observation group name {name!r} must match [a-z0-9_]+")


@dataclass
class DatasetSpec:
    """Shapes and rates shared by every episode of a dataset."""

    obs: dict[str, tuple[int, ...]]
    action_dim: int
    command_dim: int = 0
    dt: float = 0.02
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        self.obs = {str(k): tuple(int(s) for s in v) for k, v in self.obs.items()}
        for k in self.obs:
            _check_group_name(k)
        self.action_dim = int(self.action_dim)
        self.command_dim = int(self.command_dim)
        self.dt = float(self.dt)
        self.schema_version = int(self.schema_version)

    def to_dict(self) -> dict[str, Any]:
        """The spec as a JSON-ready dict (a dataset's ``dataset.json``)."""
        return {
            "obs": {k: list(v) for k, v in self.obs.items()},
            "action_dim": self.action_dim,
            "command_dim": self.command_dim,
            "dt": self.dt,
            "schema_version": self.schema_version,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DatasetSpec:
        """The spec back from :meth:`to_dict`'s dict."""
        return cls(
            obs={k: tuple(v) for k, v in d["obs"].items()},
            action_dim=d["action_dim"],
            command_dim=d.get("command_dim", 0),
            dt=d.get("dt", 0.02),
            schema_version=d.get("schema_version", SCHEMA_VERSION),
        )

    @classmethod
    def from_env(cls, env: Any, command_dim: int = 0) -> DatasetSpec:
        """Spec of a :class:`simdist.envs.base.BatchedEnv` (observation groups, flat action)."""
        obs = {k: tuple(s.shape) for k, s in env.observation_spec.items()}
        action_dim = int(np.prod(env.action_spec.shape))
        return cls(obs=obs, action_dim=action_dim, command_dim=command_dim, dt=env.dt)

    @classmethod
    def from_episode(cls, ep: Episode) -> DatasetSpec:
        """Infer a spec from one episode (``dt`` from ``ep.meta`` if present)."""
        return cls(
            obs={k: tuple(v.shape[1:]) for k, v in ep.obs.items()},
            action_dim=ep.actions.shape[1],
            command_dim=ep.commands.shape[1],
            dt=ep.meta.get("dt", 0.02),
        )


def _f32(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


@dataclass
class Episode:
    """One trajectory; every per-step array has the episode length ``L`` as its first dimension."""

    obs: dict[str, np.ndarray]
    actions: np.ndarray
    commands: np.ndarray
    rewards: np.ndarray
    values: np.ndarray
    expert: np.ndarray
    episode_id: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.obs = {k: _f32(v) for k, v in self.obs.items()}
        self.actions = _f32(self.actions)
        self.commands = _f32(self.commands)
        if self.commands.ndim == 1 and self.commands.size == 0:
            self.commands = self.commands.reshape(len(self.actions), 0)
        self.rewards = _f32(self.rewards)
        self.values = _f32(self.values)
        self.expert = np.asarray(self.expert, dtype=bool)
        self.episode_id = int(self.episode_id)

    def __len__(self) -> int:
        return int(self.actions.shape[0])

    @property
    def length(self) -> int:
        """The number of steps."""
        return len(self)

    @property
    def key(self) -> str:
        """The webdataset sample key of this episode."""
        return episode_key(self.episode_id)

    def arrays(self) -> dict[str, np.ndarray]:
        """All per-step arrays keyed as in a shard sample (``obs.<group>``, ``actions``, ...)."""
        out = {f"obs.{g}": v for g, v in self.obs.items()}
        out.update({k: getattr(self, k) for k in STEP_FIELDS})
        return out

    def validate(self, spec: DatasetSpec, where: str = "episode") -> Episode:
        """Check keys, shapes, lengths and finiteness against ``spec``; raise :class:`DataError`."""
        where = f"{where} (episode {self.episode_id})"
        missing = [g for g in spec.obs if g not in self.obs]
        if missing:
            raise DataError(f"{where}: missing key 'obs.{missing[0]}'")
        extra = [g for g in self.obs if g not in spec.obs]
        if extra:
            raise DataError(f"{where}: unexpected key 'obs.{extra[0]}' (spec has {sorted(spec.obs)})")
        L = len(self)
        expected: dict[str, tuple[int, ...]] = {f"obs.{g}": (L, *s) for g, s in spec.obs.items()}
        expected.update(
            actions=(L, spec.action_dim),
            commands=(L, spec.command_dim),
            rewards=(L,),
            values=(L,),
            expert=(L,),
        )
        arrays = self.arrays()
        for k, shape in expected.items():
            a = arrays[k]
            if a.shape != shape:
                raise DataError(f"{where}: key '{k}' has shape {a.shape}, expected {shape} (length {L})")
            if a.dtype != bool and a.size and not np.isfinite(a).all():
                bad = np.argwhere(~np.isfinite(a))[0]
                kind = "NaN" if np.isnan(a[tuple(bad)]) else "Inf"
                raise DataError(f"{where}: key '{k}' contains {kind} at index {tuple(int(b) for b in bad)}")
        return self

    def to_sample(self) -> dict[str, Any]:
        """Encode as a webdataset sample: ``.npy`` bytes for arrays, ``meta.json`` bytes (no pickle)."""
        sample: dict[str, Any] = {"__key__": self.key}
        for k, v in self.arrays().items():
            sample[f"{k}.npy"] = npy_bytes(v)
        meta = {**self.meta, "episode_id": self.episode_id, "schema_version": SCHEMA_VERSION}
        sample["meta.json"] = json.dumps(meta, default=json_default, sort_keys=True).encode("utf-8")
        return sample

    @classmethod
    def from_sample(cls, sample: dict[str, Any], where: str = "sample") -> Episode:
        """Decode a raw webdataset sample (bytes values) or an already decoded one."""
        key = sample.get("__key__", "?")
        where = f"{where} key {key!r}"
        if "meta.json" not in sample:
            raise DataError(f"{where}: missing key 'meta.json'")
        meta = sample["meta.json"]
        if isinstance(meta, (bytes, bytearray)):
            try:
                meta = json.loads(meta)
            except ValueError as e:
                raise DataError(f"{where}: key 'meta.json' is not valid JSON: {e}") from e
        version = int(meta.get("schema_version", SCHEMA_VERSION))
        sample = migrate({**sample, "meta.json": meta}, version)
        meta = dict(sample["meta.json"])

        def get(name: str) -> np.ndarray:
            k = f"{name}.npy"
            if k not in sample:
                raise DataError(f"{where}: missing key '{k}'")
            v = sample[k]
            if isinstance(v, (bytes, bytearray, memoryview)):
                try:
                    v = np.lib.format.read_array(io.BytesIO(v), allow_pickle=False)
                except ValueError as e:
                    raise DataError(f"{where}: key '{k}' is not a valid .npy array: {e}") from e
            return np.array(v)  # writable copy (arrays read from bytes are read-only)

        groups = sorted(k[4:-4] for k in sample if k.startswith("obs.") and k.endswith(".npy"))
        obs = {g: get(f"obs.{g}") for g in groups}
        arrays = {k: get(k) for k in STEP_FIELDS}
        episode_id = meta.pop("episode_id", None)
        if episode_id is None:
            episode_id = episode_id_from_key(key)
        if episode_id is None:
            raise DataError(f"{where}: missing 'episode_id' in meta.json and key is not 'ep<id>'")
        meta.pop("schema_version", None)
        return cls(obs=obs, **arrays, episode_id=episode_id, meta=meta)


def episode_key(episode_id: int) -> str:
    """The sample key of episode ``episode_id`` in a shard: ``ep`` and nine digits (``ep000000042``)."""
    return f"ep{int(episode_id):09d}"


def episode_id_from_key(key: str) -> int | None:
    """The episode id encoded in a sample key ``ep000000042``, or None."""
    m = re.match(r"^ep(\d+)$", key)
    return int(m.group(1)) if m else None


def npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(a), allow_pickle=False)
    return buf.getvalue()


def json_default(o: Any) -> Any:
    """JSON encoder fallback for numpy scalars and arrays in ``meta``."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (set, tuple)):
        return list(o)
    raise TypeError(f"meta value of type {type(o).__name__} is not JSON serialisable")


def migrate(sample: dict[str, Any], from_version: int) -> dict[str, Any]:
    """Convert a decoded-meta sample dict written with schema ``from_version`` to the current schema."""
    if from_version == SCHEMA_VERSION:
        return sample
    raise DataError(
        f"sample key {sample.get('__key__', '?')!r}: unknown schema version {from_version} "
        f"(this simdist reads version {SCHEMA_VERSION})"
    )


def front_pad(ep: Episode, n: int = 25) -> Episode:
    """Prepend ``n`` copies of the first observation with zero actions/commands/rewards/values.

    Mimics the controller's history buffer at reset (SIMDIST.md 5.3); padded steps are never expert.
    """
    if n <= 0:
        return ep
    if len(ep) == 0:
        raise DataError(f"episode {ep.episode_id}: cannot front-pad an empty episode")

    def zeros(a: np.ndarray) -> np.ndarray:
        return np.concatenate([np.zeros((n, *a.shape[1:]), a.dtype), a])

    obs = {g: np.concatenate([np.repeat(v[:1], n, axis=0), v]) for g, v in ep.obs.items()}
    meta = {**ep.meta, "front_pad": int(ep.meta.get("front_pad", 0)) + n}
    return replace(
        ep,
        obs=obs,
        actions=zeros(ep.actions),
        commands=zeros(ep.commands),
        rewards=zeros(ep.rewards),
        values=zeros(ep.values),
        expert=zeros(ep.expert),
        meta=meta,
    )
