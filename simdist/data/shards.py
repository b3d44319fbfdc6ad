"""Webdataset tar shards of episodes: an atomic, resumable writer and a validating reader.

One sample per episode, key ``ep{episode_id:09d}``, fields ``obs.<group>.npy``, ``actions.npy``,
``commands.npy``, ``rewards.npy``, ``values.npy``, ``expert.npy`` and ``meta.json`` (no pickle).
A dataset folder holds ``<prefix>-NNNNNN.tar`` shards and ``dataset.json``, which lists the
completed shards and is rewritten atomically after each shard closes. Shards are written as
``.tar.tmp`` and renamed when complete, so a crash never leaves a truncated ``.tar``.

One writer per folder: parallel generators should write to separate folders and read them
together by passing a list of folders.
"""

from __future__ import annotations

import glob
import json
import math
import os
import re
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, cast

import numpy as np
import webdataset as wds

from simdist.data.schema import (
    SCHEMA_VERSION,
    DataError,
    DatasetSpec,
    Episode,
    episode_id_from_key,
    json_default,
)
from simdist.data.stats import RunningStats, Stats
from simdist.fsutil import atomic_write_json, inside, remove_stale_temporaries
from simdist.schema import SettingError, Validated, bounds

DATASET_INFO = "dataset.json"
#: entries that make a folder a dataset (or a generation run's output): its index, shards, parts, summary, critic
DATASET_MARKERS = (DATASET_INFO, "generate.json", "origin.json", "*.tar", "part-*", "critic.json",
                   "critic.safetensors")
FORMAT_NAME = "simdist-episodes"

Source = str | os.PathLike | Sequence["Source"]  # a folder, pattern or url, or a list of these


def read_dataset_info(path: str | os.PathLike) -> dict[str, Any]:
    """Contents of ``dataset.json`` of a dataset folder (or the path of the file itself)."""
    p = os.fspath(path)
    if os.path.isdir(p):
        p = os.path.join(p, DATASET_INFO)
    try:
        with open(p) as f:
            info = json.load(f)
    except FileNotFoundError as e:
        raise DataError(f"{p}: no dataset info file") from e
    except ValueError as e:
        raise DataError(f"{p}: invalid JSON: {e}") from e
    if not isinstance(info, dict) or info.get("format") != FORMAT_NAME:
        got = info.get("format") if isinstance(info, dict) else type(info).__name__
        raise DataError(f"{p}: not a simdist episode dataset (format={got!r})")
    if info.get("schema_version", -1) != SCHEMA_VERSION:
        raise DataError(f"{p}: schema version {info.get('schema_version')} != {SCHEMA_VERSION}")
    try:
        DatasetInfo.from_dict(info)
        for key in ("stats", "stats_state"):
            _check_finite(info.get(key, {}), key)
    except SettingError as err:
        raise DataError(f"{p}: {err}: regenerate the dataset or fix the file") from err
    for k, shard in enumerate(info["shards"]):
        name = shard.get("name") if isinstance(shard, dict) else None
        inside(os.path.dirname(p) or ".", name, f"{p}: key 'shards[{k}].name'", DataError)
    return info


def check_data_for_model(folder: str | os.PathLike, config: Any) -> dict[str, Any]:
    """The dataset ``folder``'s info, once its spec fits a model of ``config`` (a ``WorldModelConfig``): every
    observation group the model reads with its shape, the action and command sizes; else a :class:`DataError`
    naming both (data of another task)."""
    info = read_dataset_info(folder)
    spec = info["spec"]
    obs = {k: list(v) for k, v in spec.get("obs", {}).items()}
    wanted = {k: list(v) for k, v in config.obs_spec.items()}
    wrong = {k: v for k, v in wanted.items() if obs.get(k) != v}
    if wrong or spec.get("action_dim") != config.action_dim or spec.get("command_dim", 0) != config.command_dim:
        raise DataError(f"{folder}: data of another task: it holds observations {obs}, action_dim "
                        f"{spec.get('action_dim')}, command_dim {spec.get('command_dim', 0)}; the model reads "
                        f"{wanted}, action_dim {config.action_dim}, command_dim {config.command_dim}")
    return info


@dataclass
class DatasetInfo(Validated):
    """The schema of ``dataset.json`` (what :class:`EpisodeWriter` and a parted run's index write); the
    statistics must moreover hold finite numbers only."""

    format: str
    schema_version: int
    spec: dict[str, Any]
    shards: list[Any]
    prefix: str = "episodes"
    dropped_episode_ids: list[Any] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    stats_state: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    num_episodes: int = field(default=0, metadata=bounds(ge=0))
    num_steps: int = field(default=0, metadata=bounds(ge=0))
    dropped_episodes: int = field(default=0, metadata=bounds(ge=0))
    updated: str = ""


def _check_finite(node: Any, key: str) -> None:
    """Raise :class:`SettingError` naming the first non-finite (or non-numeric) leaf under ``node``."""
    if isinstance(node, dict):
        for k, v in node.items():
            _check_finite(v, f"{key}.{k}")
    elif isinstance(node, list):
        for k, v in enumerate(node):
            _check_finite(v, f"{key}[{k}]")
    elif node is not None and not (isinstance(node, (int, float)) and math.isfinite(node)):
        raise SettingError(key, f"expected a finite number, got {node!r}")


class EpisodeWriter:
    """Write episodes into size-capped shards of a dataset folder; resumes an interrupted write.

    Episodes shorter than ``min_length`` (and, with ``drop_invalid``, episodes failing validation,
    e.g. diverged physics) are dropped and counted. Statistics, episode ids and the dropped count
    are committed to ``dataset.json`` only together with the shard that holds the episodes, so a
    crash loses at most the open shard, and its episodes are simply not in
    :attr:`completed_episode_ids` when the writer is reopened.
    """

    def __init__(
        self,
        out_dir: str | os.PathLike,
        spec: DatasetSpec,
        prefix: str = "episodes",
        max_episodes_per_shard: int = 256,
        max_bytes: int = 512 * 2**20,
        metadata: dict[str, Any] | None = None,
        min_length: int = 1,
        drop_invalid: bool = False,
    ) -> None:
        if not re.match(r"^[A-Za-z0-9_]+$", prefix):
            raise ValueError(f"prefix must match [A-Za-z0-9_]+, got {prefix!r}")
        self.out_dir = os.fspath(out_dir)
        self.spec = spec
        self.prefix = prefix
        self.max_episodes_per_shard = int(max_episodes_per_shard)
        self.max_bytes = int(max_bytes)
        self.min_length = int(min_length)
        self.drop_invalid = drop_invalid
        os.makedirs(self.out_dir, exist_ok=True)
        self.info_path = os.path.join(self.out_dir, DATASET_INFO)

        if os.path.exists(self.info_path):
            info = read_dataset_info(self.info_path)
            if info["spec"] != spec.to_dict():
                raise DataError(f"{self.info_path}: existing spec {info['spec']} != {spec.to_dict()}")
            if info.get("prefix", prefix) != prefix:
                raise DataError(f"{self.info_path}: existing prefix {info['prefix']!r} != {prefix!r}")
        else:
            info = {
                "format": FORMAT_NAME,
                "schema_version": SCHEMA_VERSION,
                "spec": spec.to_dict(),
                "prefix": prefix,
                "shards": [],
                "dropped_episode_ids": [],
                "metadata": {},
                "stats_state": {},
            }
        info["metadata"].update(metadata or {})
        self._info = info
        self._stats = RunningStats.from_state_dict(info.get("stats_state", {}), where=f"{self.info_path}: stats_state")
        self._done_ids: set[int] = {i for s in info["shards"] for i in s["episode_ids"]}
        self._done_ids.update(info.get("dropped_episode_ids", []))

        for tmp in glob.glob(os.path.join(self.out_dir, f"{prefix}-*.tar.tmp")):
            os.remove(tmp)
        remove_stale_temporaries(self.out_dir)
        listed = {s["name"] for s in info["shards"]}
        indices = [self._index(n) for n in listed]
        for path in sorted(glob.glob(os.path.join(self.out_dir, f"{prefix}-*.tar"))):
            name = os.path.basename(path)
            if self._index(name) is None:
                continue
            indices.append(self._index(name))
            if name not in listed:  # renamed, but the crash came before dataset.json was rewritten
                self._recover(path)
        self._next_index = max([i for i in indices if i is not None], default=-1) + 1

        self._file: IO[bytes] | None = None
        self._tar: wds.TarWriter | None = None
        self._broken = False
        self._reset_pending()
        self._write_info()

    # -- public -----------------------------------------------------------------------------

    @property
    def completed_episode_ids(self) -> set[int]:
        """Ids of episodes committed to complete shards or recorded as dropped (skip these on resume)."""
        return set(self._done_ids)

    @property
    def dropped_episode_ids(self) -> set[int]:
        """Ids of the committed episodes that were dropped (too short, invalid, or diverged)."""
        return {int(i) for i in self._info.get("dropped_episode_ids", [])}

    @property
    def num_shards(self) -> int:
        """How many shards have been written so far."""
        return len(self._info["shards"])

    @property
    def shard_paths(self) -> list[str]:
        """The paths of the shards written so far."""
        return [os.path.join(self.out_dir, s["name"]) for s in self._info["shards"]]

    def write(self, ep: Episode) -> bool:
        """Append ``ep``; returns False if it was dropped (too short, or invalid with ``drop_invalid``)."""
        eid = ep.episode_id
        if eid in self._done_ids or eid in self._pending_id_set:
            raise DataError(f"{self.out_dir}: episode id {eid} was already written")
        if len(ep) < self.min_length:
            self.record_dropped(eid)
            return False
        try:
            ep.validate(self.spec, where=f"{self.out_dir}: writing {ep.key}")
        except DataError as e:
            if not self.drop_invalid:
                raise
            warnings.warn(f"dropping invalid episode: {e}", stacklevel=2)
            self.record_dropped(eid)
            return False
        if self._tar is None:
            self._open_shard()
        assert self._tar is not None
        sample = ep.to_sample()
        try:
            self._bytes += self._tar.write(sample) + 512 * len(sample)
        except BaseException:
            self._broken = True  # a half-written tar member: never commit this shard
            raise
        self._pending_ids.append(eid)
        self._pending_id_set.add(eid)
        self._pending_steps += len(ep)
        self._pending_stats.update_episode(ep)
        if len(self._pending_ids) >= self.max_episodes_per_shard or self._bytes >= self.max_bytes:
            self.close_shard()
        return True

    def record_dropped(self, episode_id: int) -> None:
        """Count an episode the generator discarded (committed with the next shard or on close)."""
        self._pending_dropped.append(int(episode_id))
        self._pending_id_set.add(int(episode_id))

    def close_shard(self) -> None:
        """Finish the open shard (if any): rename it into place and rewrite ``dataset.json``."""
        if self._tar is not None:
            assert self._file is not None
            self._tar.close()
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self._tmp_path, self._shard_path)
            self._info["shards"].append(
                {
                    "name": os.path.basename(self._shard_path),
                    "episodes": len(self._pending_ids),
                    "steps": self._pending_steps,
                    "episode_ids": list(self._pending_ids),
                }
            )
            self._tar = self._file = None
            self._next_index += 1
        if self._pending_ids or self._pending_dropped:
            self._stats.merge(self._pending_stats)
            self._done_ids.update(self._pending_ids)
            self._done_ids.update(self._pending_dropped)
            self._info["dropped_episode_ids"] = sorted(
                set(self._info.get("dropped_episode_ids", [])) | set(self._pending_dropped)
            )
            self._reset_pending()
            self._write_info()

    def close(self) -> None:
        """Commit the open shard, or discard it if a write into it was interrupted."""
        if self._broken:
            self.abort()
        self.close_shard()

    def abort(self) -> None:
        """Discard the open shard (its ``.tmp`` file) without committing it."""
        if self._tar is not None:
            assert self._file is not None
            self._file.close()
            os.remove(self._tmp_path)
            self._tar = self._file = None
        self._broken = False
        self._reset_pending()

    def __enter__(self) -> EpisodeWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        # an exception still commits what was written: every episode in the shard is complete
        self.close()

    def stats(self) -> Stats:
        """Statistics of the committed episodes."""
        return self._stats.finalize()

    # -- internals ----------------------------------------------------------------------------

    def _index(self, name: str) -> int | None:
        m = re.match(rf"^{re.escape(self.prefix)}-(\d+)\.tar$", name)
        return int(m.group(1)) if m else None

    def _reset_pending(self) -> None:
        self._pending_ids: list[int] = []
        self._pending_id_set: set[int] = set()
        self._pending_dropped: list[int] = []
        self._pending_steps = 0
        self._pending_stats = RunningStats()
        self._bytes = 0

    def _open_shard(self) -> None:
        self._shard_path = os.path.join(self.out_dir, f"{self.prefix}-{self._next_index:06d}.tar")
        self._tmp_path = self._shard_path + ".tmp"
        self._file = open(self._tmp_path, "wb")
        self._tar = wds.TarWriter(self._file, encoder=False, mtime=int(time.time()))

    def _recover(self, path: str) -> None:
        ids, steps, acc = [], 0, RunningStats()
        for ep in iter_episodes([path], shuffle_shards=False, split_by_node=False, split_by_worker=False,
                                spec=self.spec):
            ids.append(ep.episode_id)
            steps += len(ep)
            acc.update_episode(ep)
        self._info["shards"].append(
            {"name": os.path.basename(path), "episodes": len(ids), "steps": steps, "episode_ids": ids}
        )
        self._info["shards"].sort(key=lambda s: s["name"])
        self._stats.merge(acc)
        self._done_ids.update(ids)

    def _write_info(self) -> None:
        info = self._info
        info["num_episodes"] = sum(s["episodes"] for s in info["shards"])
        info["num_steps"] = sum(s["steps"] for s in info["shards"])
        info["dropped_episodes"] = len(info.get("dropped_episode_ids", []))
        info["stats"] = self._stats.finalize().to_dict()
        info["stats_state"] = self._stats.state_dict()
        info["updated"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        atomic_write_json(self.info_path, info, default=json_default)


# -- reading ------------------------------------------------------------------------------------


def resolve_urls(source: Source) -> list[str]:
    """Shard urls of a dataset folder (from ``dataset.json``), a brace pattern, a url, or a list of these."""
    if isinstance(source, (list, tuple)):
        return [u for s in source for u in resolve_urls(s)]
    s = os.fspath(cast("str | os.PathLike", source))
    if os.path.isdir(s):
        if os.path.exists(os.path.join(s, DATASET_INFO)):
            urls = [os.path.join(s, sh["name"]) for sh in read_dataset_info(s)["shards"]]
            missing = [u for u in urls if not os.path.isfile(u)]
            if missing:
                raise DataError(f"{os.path.join(s, DATASET_INFO)} lists {len(missing)} shard(s) that do not exist: "
                                f"{', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}; restore them, or "
                                "regenerate the dataset (rerun the same `simdist generate` command in a new folder)")
            return urls
        shards = sorted(glob.glob(os.path.join(s, "*.tar")))
        if not shards:
            raise DataError(_no_dataset_message(s))
        return shards
    if "{" in s or "::" in s:
        return list(wds.shardlists.expand_urls(s))
    return [s]


def _no_dataset_message(folder: str) -> str:
    """Why ``folder`` is not a dataset, and what to do about it."""
    parts = sorted(p for p in glob.glob(os.path.join(folder, "*", DATASET_INFO)))
    if parts:
        names = ", ".join(os.path.basename(os.path.dirname(p)) for p in parts[:3])
        return (f"{folder}: no {DATASET_INFO} index and no *.tar shards at the top level, but part folders "
                f"({names}{', ...' if len(parts) > 3 else ''}) with their own index: an interrupted generation run "
                f"writes the top-level index once a part finishes; rerun the same `simdist generate` command to "
                f"finish it, or pass a part folder")
    return f"{folder}: not a dataset (no {DATASET_INFO} and no *.tar shards)"


def dataset_dirs(source: Source) -> list[str]:
    """Dataset folders named in ``source`` (only folders, not shard urls)."""
    if isinstance(source, (list, tuple)):
        return [d for s in source for d in dataset_dirs(s)]
    s = os.fspath(cast("str | os.PathLike", source))
    return [s] if os.path.isdir(s) and os.path.exists(os.path.join(s, DATASET_INFO)) else []


def load_spec(source: Source) -> DatasetSpec | None:
    """The spec from ``dataset.json`` of the first folder in ``source`` (or of a shard's folder)."""
    dirs = dataset_dirs(source)
    if not dirs:
        urls = resolve_urls(source)
        if urls:
            d = os.path.dirname(urls[0])
            if os.path.exists(os.path.join(d, DATASET_INFO)):
                dirs = [d]
    if not dirs:
        return None
    spec = DatasetSpec.from_dict(read_dataset_info(dirs[0])["spec"])
    for d in dirs[1:]:
        other = DatasetSpec.from_dict(read_dataset_info(d)["spec"])
        if other.to_dict() != spec.to_dict():
            raise DataError(f"{d}: spec {other.to_dict()} differs from {dirs[0]}: {spec.to_dict()}")
    return spec


def load_stats(source: Source) -> Stats | None:
    """Merged statistics of ``source`` if it consists only of dataset folders with stored statistics."""
    items = list(source) if isinstance(source, (list, tuple)) else [source]
    dirs = dataset_dirs(items)
    if len(dirs) != len(items):
        return None
    acc = RunningStats()
    for d in dirs:
        state = read_dataset_info(d).get("stats_state")
        if not state:
            return None
        acc.merge(RunningStats.from_state_dict(state, where=f"{os.path.join(d, DATASET_INFO)}: stats_state"))
    return acc.finalize()


def _all_nodes(src: Any) -> Iterator[Any]:
    yield from src


def iter_episodes(
    source: Source,
    *,
    shuffle_shards: bool,
    seed: int = 0,
    split_by_node: bool = True,
    split_by_worker: bool = True,
    validate: bool = True,
    spec: DatasetSpec | None = None,
    select_ids: Callable[[int], bool] | None = None,
) -> Iterator[Episode]:
    """Stream episodes from shards, validated against ``spec`` (default: ``dataset.json``, else the first).

    ``shuffle_shards`` permutes the whole shard list with ``seed`` before the node/worker split;
    ``select_ids`` filters episode ids by sample key before anything is decoded.
    """
    urls = resolve_urls(source)
    if shuffle_shards:
        urls = [urls[i] for i in np.random.default_rng(seed).permutation(len(urls))]
    if not urls:
        return
    if validate and spec is None:
        spec = load_spec(source)
    last = {"key": None, "url": None}

    def corrupt(exn: Exception) -> bool:
        """webdataset's error handler: name the shard and the last episode read before the damage."""
        if isinstance(exn, DataError):  # explained by an earlier stage (which may have appended to its args)
            raise DataError(exn.args[0]) from exn.__cause__
        url = getattr(exn, "filename", None) or next(
            (a for a in reversed(getattr(exn, "args", ())) if isinstance(a, str) and a.endswith(".tar")), last["url"])
        after = f" after episode key {last['key']!r}" if last["key"] and last["url"] == url else " at its start"
        reason = exn.args[0] if getattr(exn, "args", None) else exn
        raise DataError(f"shard {url}: unreadable{after} ({type(exn).__name__}: {reason}); the shard is "
                        "truncated or corrupt: regenerate it or drop it from the dataset's index") from exn

    ds = wds.WebDataset(
        urls,
        shardshuffle=False,
        nodesplitter=wds.split_by_node if split_by_node else _all_nodes,
        workersplitter=wds.split_by_worker if split_by_worker else None,
        empty_check=False,
        handler=corrupt,
    )
    for sample in ds:
        key = sample.get("__key__", "?")
        last.update(key=key, url=sample.get("__url__"))
        if select_ids is not None:
            eid = episode_id_from_key(key)
            if eid is not None and not select_ids(eid):
                continue
        where = f"shard {sample.get('__url__', '?')}"
        ep = Episode.from_sample(sample, where=where)
        if select_ids is not None and not select_ids(ep.episode_id):
            continue
        if validate:
            if spec is None:
                spec = DatasetSpec.from_episode(ep)
            ep.validate(spec, where=f"{where} key {key!r}")
        yield ep
