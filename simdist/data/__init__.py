"""Trajectory data: schema v1 episodes, webdataset shards, statistics, windows and the DataModule; and the atomic
JSON write (temporary file, fsync, rename) that every result file of the project goes through.

The DataModule (torch + lightning) is imported lazily, so data tooling works without importing torch.
"""

from simdist.data.recorder import EpisodeRecorder
from simdist.data.schema import (
    SCHEMA_VERSION,
    DataError,
    DatasetSpec,
    Episode,
    episode_id_from_key,
    episode_key,
    front_pad,
    migrate,
)
from simdist.data.shards import (
    EpisodeWriter,
    iter_episodes,
    load_spec,
    load_stats,
    read_dataset_info,
    resolve_urls,
)
from simdist.data.stats import RunningStats, Stats, compute_stats
from simdist.data.windows import gather_windows, num_windows, window_at, window_starts
from simdist.fsutil import atomic_write_json
from simdist.lazy import lazy_getattr

__all__ = [
    "SCHEMA_VERSION",
    "DataError",
    "DatasetSpec",
    "Episode",
    "EpisodeRecorder",
    "EpisodeSplit",
    "EpisodeWriter",
    "RunningStats",
    "Stats",
    "TrajectoryDataModule",
    "WindowDataset",
    "atomic_write_json",
    "compute_stats",
    "episode_id_from_key",
    "episode_key",
    "front_pad",
    "gather_windows",
    "heldout_score",
    "iter_episodes",
    "load_spec",
    "load_stats",
    "migrate",
    "num_windows",
    "read_dataset_info",
    "resolve_urls",
    "window_at",
    "window_starts",
]

#: the DataModule's names, loaded with torch and lightning on first access
_LAZY = {name: "datamodule" for name in ("EpisodeSplit", "TrajectoryDataModule", "WindowDataset", "heldout_score")}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())
