"""Lightning DataModule streaming history/horizon windows from episode shards.

Episodes are streamed from shards (split by rank, then by DataLoader worker; when there are fewer
shards than consumers, every consumer reads the shards and keeps every n-th episode), windowed,
mixed through a window shuffle buffer and batched by the DataLoader into nested dicts, e.g.
``batch["obs_hist"]["proprio"]`` of shape ``(B, H+1, 35)``.

When ``val`` is not given, a deterministic ``heldout_fraction`` of the *episodes* of ``train``
(by a hash of the episode id, independent of ``seed``) is held out, so no validation window
overlaps a training window. ``data_fraction`` trains on that fraction of the training episodes (drawn by
episode id with ``data_fraction_seed``; the paper's data-scale ablation), validating on the same held-out
episodes as the full data.

``windows_per_epoch`` makes each training epoch finite and sized (the data are cycled as needed and
the count is split evenly over ranks and workers, which also keeps DDP ranks in step); without it an
epoch is one pass over the (rank's share of the) data. Under multi-process training an epoch must be
sized, or the ranks would run different numbers of steps and wait on each other forever: without
``windows_per_epoch`` the module sizes it from the dataset index as one pass over all training windows.

**Ranks.** Under a Lightning trainer the training stream takes the trainer's ``global_rank`` and
``world_size`` explicitly (they travel to DataLoader workers with the dataset, so spawned workers, which
see neither ``RANK`` nor an initialised process group, still read their rank's share). Without a trainer
(or ``rank``/``world_size`` not given) the environment decides (``webdataset.utils.pytorch_worker_info``).
Validation streams are read whole by every rank: the held-out metrics are then exact and equal on all
ranks without any communication (the held-out split is small).

``windows_per_chunk`` K > 1 (a divisor of ``batch_size``) draws training windows in chunks of K consecutive
windows of one episode (the shuffle mixes chunks; the last ``n mod K`` windows of an episode are left out)
and hands each batch over with ``fut_steps`` (:mod:`simdist.data.chunks`), so the loss encodes each chunk's
future observations once instead of ``T`` times per window: the same loss for the same windows, at fewer
encoder passes, from batches of ``batch_size / K`` episode stretches. Validation always reads single windows.

``perturbed_repeat`` R > 1 oversamples the training windows that hold an action-perturbation step R-fold (each
is listed R times in a pass; the episodes' ``noised_windows``, which the data engine records); validation
windows are never oversampled.

Every epoch's window order depends only on ``seed`` and the epoch, and the training loader is resumable
(Lightning checkpoints store how many batches of the epoch were consumed), so a run resumed from a
mid-epoch checkpoint sees the same batches as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import lightning as L
import numpy as np
import torch
import webdataset as wds
from torch.utils.data import DataLoader, IterableDataset

from simdist.data.chunks import ChunkCollate, chunk_at, chunk_starts
from simdist.data.schema import DataError, DatasetSpec, Episode, front_pad
from simdist.data.shards import dataset_dirs, iter_episodes, load_spec, load_stats, read_dataset_info, resolve_urls
from simdist.data.stats import Stats, compute_stats
from simdist.data.windows import check_perturbed_repeat, num_windows, perturbed_starts, window_at, window_starts

_HELDOUT_SALT = "simdist-heldout-v1"


def heldout_score(episode_id: int) -> float:
    """A deterministic pseudo-uniform number in [0, 1) per episode id (stable across runs and seeds)."""
    h = hashlib.blake2b(f"{_HELDOUT_SALT}:{int(episode_id)}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2**64


def subset_score(episode_id: int, seed: int) -> float:
    """A pseudo-uniform number in [0, 1) per (episode id, seed), independent of :func:`heldout_score`."""
    h = hashlib.blake2b(f"simdist-subset-v1:{int(seed)}:{int(episode_id)}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2**64


class EpisodeSplit:
    """Picklable episode-id filter: ``held_out=True`` keeps the held-out fraction, else the rest, of which
    ``keep`` (a fraction drawn by episode with ``keep_seed``) is kept."""

    def __init__(self, fraction: float, held_out: bool, keep: float = 1.0, keep_seed: int = 0) -> None:
        self.fraction = float(fraction)
        self.held_out = held_out
        self.keep, self.keep_seed = float(keep), int(keep_seed)

    def __call__(self, episode_id: int) -> bool:
        if (heldout_score(episode_id) < self.fraction) != self.held_out:
            return False
        return self.held_out or self.keep >= 1.0 or subset_score(episode_id, self.keep_seed) < self.keep


def _to_torch(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _to_torch(v) for k, v in x.items()}
    if x.dtype == np.bool_:
        return torch.from_numpy(x.astype(np.float32))
    return torch.from_numpy(x)


def _assign(urls: list[str], rank: int, world: int, worker: int, workers: int) -> tuple[list[str], int, int]:
    """This consumer's shards and episode filter ``index % mod == rem`` (node split, then worker split)."""
    mod, rem = 1, 0
    if world > 1:
        if len(urls) >= world:
            urls = urls[rank::world]
        else:
            mod, rem = world, rank
    if workers > 1:
        if mod == 1 and len(urls) >= workers:
            urls = urls[worker::workers]
        else:
            mod, rem = mod * workers, rem + mod * worker
    return urls, mod, rem


class WindowDataset(IterableDataset):
    """Iterable of single windows (dicts of float tensors) from a list of shard urls.

    With ``windows_per_chunk`` K > 1 the items are chunks of K consecutive windows of one episode
    (:func:`simdist.data.chunks.chunk_at`; :class:`~simdist.data.chunks.ChunkCollate` batches them), shuffled
    as units; ``windows_per_epoch`` and ``batch_size`` then count chunks. ``perturbed_repeat`` R > 1 lists every
    window that holds a perturbed (noised) action R times in the pass, which oversamples them R-fold
    (:func:`simdist.data.windows.perturbed_starts`).
    """

    def __init__(
        self,
        urls: list[str],
        spec: DatasetSpec | None,
        *,
        history: int = 25,
        horizon: int = 25,
        value_offset: int = 0,
        front_pad: int = 0,
        beg_pad: int = 5,
        end_pad: int = 5,
        shuffle: bool = True,
        shuffle_buffer: int = 10000,
        seed: int = 0,
        split_by_node: bool = True,
        select_ids: EpisodeSplit | None = None,
        windows_per_epoch: int | None = None,
        batch_size: int = 1,
        validate: bool = True,
        rank: int | None = None,
        world_size: int | None = None,
        return_ids: bool = False,
        windows_per_chunk: int = 1,
        perturbed_repeat: int = 1,
    ) -> None:
        super().__init__()
        if windows_per_chunk < 1:
            raise ValueError(f"windows_per_chunk must be >= 1, got {windows_per_chunk}")
        check_perturbed_repeat(perturbed_repeat, windows_per_chunk)
        self.windows_per_chunk = int(windows_per_chunk)
        self.perturbed_repeat = int(perturbed_repeat)
        if (rank is None) != (world_size is None):
            raise ValueError("give both rank and world_size, or neither")
        if world_size is not None and not 0 <= rank < world_size:  # type: ignore[operator]
            raise ValueError(f"rank must be in [0, world_size={world_size}), got {rank}")
        self.rank, self.world_size, self.return_ids = rank, world_size, return_ids
        self.urls = list(urls)
        self.spec = spec
        self.history, self.horizon, self.value_offset = history, horizon, value_offset
        self.front_pad, self.beg_pad, self.end_pad = front_pad, beg_pad, end_pad
        self.shuffle, self.shuffle_buffer, self.seed = shuffle, shuffle_buffer, seed
        self.split_by_node = split_by_node
        self.select_ids = select_ids
        self.windows_per_epoch = windows_per_epoch
        self.batch_size = batch_size
        self.validate = validate
        # shared with DataLoader workers (persistent ones too), so set_epoch in the main process reaches them
        self._epoch = torch.zeros((), dtype=torch.int64).share_memory_()
        self._skip = torch.zeros((), dtype=torch.int64).share_memory_()

    def set_epoch(self, epoch: int) -> None:
        """Select the epoch's shard order and shuffle (like ``DistributedSampler.set_epoch``)."""
        self._epoch.fill_(int(epoch))

    def set_skip_batches(self, batches: int) -> None:
        """Leave out the first ``batches`` batches of the next pass (of all consumers together, as the
        DataLoader hands them out: batch ``i`` comes from worker ``i % workers``), to resume an epoch.
        The skipped windows are drawn, so the rest of the pass is what an uninterrupted one yields, but
        never materialised. Exact with ``windows_per_epoch`` (equal streams per worker); without it, exact
        for up to one worker."""
        self._skip.fill_(int(batches))

    def _world(self) -> tuple[int, int, int, int]:
        """(rank, world size, DataLoader worker, workers): the rank as given, else from the environment."""
        rank, world, worker, workers = wds.utils.pytorch_worker_info()
        if self.world_size is not None:
            rank, world = int(self.rank), int(self.world_size)  # type: ignore[arg-type]
        if not self.split_by_node:
            rank, world = 0, 1
        return rank, world, worker, workers

    def _batches_per_node(self) -> int | None:
        if self.windows_per_epoch is None:
            return None
        world = self._world()[1]
        return max(1, self.windows_per_epoch // (self.batch_size * world))

    def __len__(self) -> int:
        nb = self._batches_per_node()
        if nb is None:
            raise TypeError("window stream has no length (set windows_per_epoch)")
        return nb * self.batch_size

    def _episodes(self, epoch: int, pass_idx: int, worker: int | None = None) -> Iterator[Episode]:
        """The episodes of (logical) DataLoader worker ``worker`` (default: this process's) in a pass."""
        rank, world, physical, workers = self._world()
        worker = physical if worker is None else worker
        urls = self.urls
        if self.shuffle:  # the same permutation on every consumer, so the splits stay disjoint
            perm = np.random.default_rng([self.seed, epoch, pass_idx]).permutation(len(urls))
            urls = [urls[i] for i in perm]
        urls, mod, rem = _assign(urls, rank, world, worker, workers)
        stream = iter_episodes(
            urls,
            shuffle_shards=False,
            split_by_node=False,
            split_by_worker=False,
            validate=self.validate,
            spec=self.spec,
            select_ids=self.select_ids,
        )
        for i, ep in enumerate(stream):
            if i % mod == rem:
                yield front_pad(ep, self.front_pad) if self.front_pad else ep

    def _windows(
        self, episodes: Iterator[Episode], rng: np.random.Generator | None
    ) -> Iterator[tuple[Episode, int]]:
        """(episode, start) of the windows of ``episodes``; with ``rng``, mixed through a buffer of
        ``shuffle_buffer`` windows.

        The buffer holds (episode, start) references, so memory is that of the episodes it touches.
        """
        buf: list[tuple[Episode, int]] = []
        cap = max(1, self.shuffle_buffer)
        for ep in episodes:
            starts = window_starts(len(ep), self.history, self.horizon, self.beg_pad, self.end_pad)
            if self.windows_per_chunk > 1:
                starts = chunk_starts(starts, self.windows_per_chunk)
            if self.perturbed_repeat > 1:
                starts = perturbed_starts(ep, starts, self.history + self.horizon, self.perturbed_repeat)
            for s in starts.tolist():
                if rng is None:
                    yield ep, s
                    continue
                buf.append((ep, s))
                if len(buf) >= cap:
                    i = int(rng.integers(len(buf)))
                    buf[i], buf[-1] = buf[-1], buf[i]
                    yield buf.pop()
        if rng is not None:
            for i in rng.permutation(len(buf)).tolist():
                yield buf[i]

    def _make(self, ep: Episode, start: int) -> dict[str, Any]:
        if self.windows_per_chunk > 1:
            window = _to_torch(chunk_at(ep, start, self.windows_per_chunk, self.history, self.horizon))
        else:
            window = _to_torch(window_at(ep, start, self.history, self.horizon, self.value_offset))
        if self.return_ids:  # which window this is (audits of the rank/worker split)
            window["episode_id"] = torch.tensor(int(ep.episode_id))
            window["start"] = torch.tensor(int(start))
        return window

    def __iter__(self) -> Iterator[dict[str, Any]]:
        epoch = int(self._epoch)
        rank, world, physical, workers = self._world()
        skip_batches = int(self._skip)
        # The DataLoader takes batch i from worker i % workers, always starting with worker 0. Resuming at
        # batch k, worker 0 plays the stream that batch k belongs to (logical worker k % workers), and so on.
        worker = (physical + skip_batches) % workers
        rng = np.random.default_rng([self.seed, epoch, rank, worker]) if self.shuffle else None
        skip = max(0, (skip_batches - worker + workers - 1) // workers) * self.batch_size  # this stream's share
        nb = self._batches_per_node()
        if nb is None:
            for i, (ep, s) in enumerate(self._windows(self._episodes(epoch, 0, worker), rng)):
                if i >= skip:
                    yield self._make(ep, s)
            return
        target = (nb // workers + (worker < nb % workers)) * self.batch_size
        produced, pass_idx = 0, 0
        while produced < target:
            n_before = produced
            for ep, s in self._windows(self._episodes(epoch, pass_idx, worker), rng):
                if produced >= skip:
                    yield self._make(ep, s)
                produced += 1
                if produced >= target:
                    return
            if produced == n_before:  # this consumer has no windows at all
                return
            pass_idx += 1


class _EpochDataLoader(DataLoader):
    """DataLoader that sets its :class:`WindowDataset`'s epoch before each iteration.

    The epoch is ``epoch_fn()`` (the trainer's current epoch, so a resumed run continues the
    sequence) or, when that gives None, the number of previous iterations of this loader.
    """

    def __init__(self, *args: Any, epoch_fn: Callable[[], int | None] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._epoch_fn = epoch_fn
        self._n_iter = 0
        self._iter_epoch: int | None = None  # the epoch of the running iteration

    def __iter__(self) -> Any:
        epoch = self._epoch_fn() if self._epoch_fn is not None else None
        self._iter_epoch = self._n_iter if epoch is None else epoch
        if isinstance(self.dataset, WindowDataset):
            self.dataset.set_epoch(self._iter_epoch)
            self.dataset.set_skip_batches(self._skip_for(self._iter_epoch))
        self._n_iter += 1
        return super().__iter__()

    def _skip_for(self, epoch: int) -> int:
        return 0


class _ResumableDataLoader(_EpochDataLoader):
    """The training loader: Lightning stores its ``state_dict`` in every checkpoint (the epoch and the
    batches the trainer has consumed of it) and hands it back on resume, so a run resumed mid-epoch
    continues with the next batch of the same epoch instead of replaying the epoch's first batches.

    ``progress_fn()`` gives the batches of the current epoch the trainer has processed.
    """

    def __init__(self, *args: Any, progress_fn: Callable[[], int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._progress_fn = progress_fn
        self._resume: tuple[int, int] | None = None

    def state_dict(self) -> dict[str, int]:
        epoch = self._iter_epoch if self._iter_epoch is not None else -1
        return {"epoch": int(epoch), "batches": int(self._progress_fn())}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self._resume = (int(state["epoch"]), int(state["batches"]))

    def _skip_for(self, epoch: int) -> int:
        resume, self._resume = self._resume, None
        return resume[1] if resume is not None and resume[0] == epoch else 0


class TrajectoryDataModule(L.LightningDataModule):
    """Windows of episode shards for world-model training (see module docstring)."""

    def __init__(
        self,
        train: str | list[str],
        val: str | list[str] | None = None,
        heldout_fraction: float = 0.02,
        history: int = 25,
        horizon: int = 25,
        batch_size: int = 512,
        num_workers: int = 0,
        shuffle_buffer: int = 10000,
        windows_per_epoch: int | None = None,
        value_offset: int = 0,
        front_pad: int = 0,
        beg_pad: int = 5,
        end_pad: int = 5,
        seed: int = 0,
        split_by_node: bool = True,
        validate: bool = True,
        multiprocessing_context: str | None = None,
        data_fraction: float = 1.0,
        data_fraction_seed: int = 0,
        windows_per_chunk: int = 1,
        perturbed_repeat: int = 1,
    ) -> None:
        super().__init__()
        check_perturbed_repeat(perturbed_repeat, windows_per_chunk, prefix="data.")
        if windows_per_chunk < 1 or batch_size % windows_per_chunk:
            raise ValueError(f"data.windows_per_chunk must be >= 1 and divide data.batch_size={batch_size}, got "
                             f"{windows_per_chunk}")
        if not 0.0 < data_fraction <= 1.0:
            raise ValueError(f"data.data_fraction must be in (0, 1], got {data_fraction}")
        if multiprocessing_context not in (None, "fork", "spawn", "forkserver"):
            raise ValueError("data.multiprocessing_context must be fork, spawn, forkserver or null, got "
                             f"{multiprocessing_context!r}")
        if not 0.0 <= heldout_fraction < 1.0:
            raise ValueError(f"heldout_fraction must be in [0, 1), got {heldout_fraction}")
        if value_offset not in (0, 1):
            raise ValueError(f"value_offset must be 0 or 1, got {value_offset}")
        # pass our frame inline (never as a local): Lightning's default stores its own frame in a local,
        # a reference cycle that keeps the caller's frame, and any DataLoader with persistent workers
        # created there, alive until a gc run
        self.save_hyperparameters(frame=inspect.currentframe())
        self.train_source = train
        self.val_source = val
        self.heldout_fraction = heldout_fraction
        self.history, self.horizon = history, horizon
        self.batch_size, self.num_workers = batch_size, num_workers
        self.shuffle_buffer, self.windows_per_epoch = shuffle_buffer, windows_per_epoch
        self.value_offset, self.front_pad = value_offset, front_pad
        self.beg_pad, self.end_pad = beg_pad, end_pad
        self.seed, self.split_by_node, self.validate = seed, split_by_node, validate
        self.multiprocessing_context = multiprocessing_context
        self.data_fraction, self.data_fraction_seed = data_fraction, data_fraction_seed
        self.windows_per_chunk = windows_per_chunk
        self.perturbed_repeat = perturbed_repeat
        self._spec: DatasetSpec | None = None
        self._stats: Stats | None = None

    def setup(self, stage: str | None = None) -> None:
        """Check that the data exist before any work: errors name the folder and what is missing."""
        if not self.train_urls:
            raise DataError(f"data.train {self.train_source!r}: no shards")
        if self.val_source is not None and not self.val_urls:
            raise DataError(f"data.val {self.val_source!r}: no shards")

    # -- metadata -----------------------------------------------------------------------------

    @property
    def train_urls(self) -> list[str]:
        """The training shards' paths."""
        return resolve_urls(self.train_source)

    @property
    def val_urls(self) -> list[str]:
        """The validation shards' paths (the training ones when no validation source is set)."""
        return resolve_urls(self.val_source) if self.val_source is not None else self.train_urls

    def _holds_out(self) -> bool:
        return self.val_source is None and self.heldout_fraction > 0

    def _split(self, held_out: bool) -> EpisodeSplit | None:
        """The episode filter of the validation (``held_out``) or the training split: training keeps
        ``data_fraction`` of its episodes (drawn by episode id with ``data_fraction_seed``; the held-out
        episodes are the same whatever the fraction, so variants are validated alike)."""
        fraction = self.heldout_fraction if self._holds_out() else 0.0
        if held_out:
            return EpisodeSplit(fraction, True) if self._holds_out() else None
        if not self._holds_out() and self.data_fraction >= 1.0:
            return None
        return EpisodeSplit(fraction, False, keep=self.data_fraction, keep_seed=self.data_fraction_seed)

    @property
    def spec(self) -> DatasetSpec:
        """From ``dataset.json``, else inferred from the first training episode."""
        if self._spec is None:
            spec = load_spec(self.train_source)
            if spec is None:
                first = next(self._train_episodes(), None)
                if first is None:
                    raise ValueError(f"no episodes in {self.train_source!r}")
                spec = DatasetSpec.from_episode(first)
            self._spec = spec
        return self._spec

    @property
    def stats(self) -> Stats:
        """From ``dataset.json`` (all episodes of the folders), else computed over the training episodes."""
        if self._stats is None:
            stats = load_stats(self.train_source)
            self._stats = stats if stats is not None else compute_stats(self._train_episodes())
        return self._stats

    def _train_episodes(self) -> Iterator[Episode]:
        return iter_episodes(
            self.train_urls,
            shuffle_shards=False,
            split_by_node=False,
            split_by_worker=False,
            validate=self.validate,
            spec=self._spec,
            select_ids=self._split(held_out=False),
        )

    def train_episode_ids(self) -> set[int]:
        """Ids of the training episodes (reads the shards)."""
        return {ep.episode_id for ep in self._train_episodes()}

    def val_episode_ids(self) -> set[int]:
        """Ids of the validation episodes (reads the shards)."""
        stream = iter_episodes(
            self.val_urls,
            shuffle_shards=False,
            split_by_node=False,
            split_by_worker=False,
            validate=False,
            select_ids=self._split(held_out=True),
        )
        return {ep.episode_id for ep in stream}

    # -- datasets and loaders -----------------------------------------------------------------

    def _ranks(self) -> tuple[int, int] | None:
        """The trainer's (global rank, world size), or None without a trainer."""
        if self.trainer is None:
            return None
        return int(getattr(self.trainer, "global_rank", 0)), int(getattr(self.trainer, "world_size", 1))

    def one_pass_windows(self) -> int:
        """Training windows in one pass over the data: from ``dataset.json`` (episode and step counts, the
        held-out fraction applied: an estimate within a few windows per episode), else counted by reading
        the episodes."""
        dirs = dataset_dirs(self.train_source)
        per_episode = self.history + self.horizon + self.beg_pad + self.end_pad - self.front_pad
        items = self.train_source if isinstance(self.train_source, (list, tuple)) else [self.train_source]
        if dirs and len(dirs) == len(items):
            infos = [read_dataset_info(d) for d in dirs]
            steps = sum(int(i["num_steps"]) for i in infos)
            episodes = sum(int(i["num_episodes"]) for i in infos)
            kept = (1.0 - (self.heldout_fraction if self._holds_out() else 0.0)) * self.data_fraction
            return max(0, int((steps - episodes * per_episode) * kept))
        return sum(num_windows(len(ep) + self.front_pad, self.history, self.horizon, self.beg_pad, self.end_pad)
                   for ep in self._train_episodes())

    def _windows_per_epoch(self, world: int) -> int | None:
        if self.windows_per_epoch is not None or world <= 1:
            return self.windows_per_epoch
        count = self.one_pass_windows()
        if count < self.batch_size * world:
            raise DataError(f"data.train {self.train_source!r}: {count} training windows cannot feed {world} ranks "
                            f"with batch {self.batch_size}; set data.windows_per_epoch to cycle the data")
        return count

    def dataset(self, split: str = "train") -> WindowDataset:
        """The window stream of ``split`` ("train" or "val").

        Under a trainer, training reads the share of the trainer's global rank (and a multi-process epoch is
        always sized: :meth:`one_pass_windows` when ``windows_per_epoch`` is not set); validation is read
        whole by every rank."""
        train = split == "train"
        if split not in ("train", "val"):
            raise ValueError(f"split must be 'train' or 'val', got {split!r}")
        ranks = self._ranks()
        if not train and ranks is not None:
            ranks = (0, 1)
        world = ranks[1] if ranks is not None else 1
        k = self.windows_per_chunk if train else 1  # validation reads every window, one by one
        per_epoch = self._windows_per_epoch(world) if train else None
        return WindowDataset(
            self.train_urls if train else self.val_urls,
            self.spec,
            history=self.history,
            horizon=self.horizon,
            value_offset=self.value_offset,
            front_pad=self.front_pad,
            beg_pad=self.beg_pad,
            end_pad=self.end_pad,
            shuffle=train,
            shuffle_buffer=self.shuffle_buffer,
            seed=self.seed,
            split_by_node=self.split_by_node,
            select_ids=self._split(held_out=not train),
            windows_per_epoch=per_epoch // k if per_epoch is not None else None,
            batch_size=self.batch_size // k,
            validate=self.validate,
            rank=ranks[0] if ranks is not None else None,
            world_size=world if ranks is not None else None,
            windows_per_chunk=k,
            perturbed_repeat=self.perturbed_repeat if train else 1,
        )

    def _loader(self, split: str) -> DataLoader:
        kwargs: dict[str, Any] = dict(batch_size=self.batch_size, num_workers=self.num_workers,
                                      persistent_workers=self.num_workers > 0, epoch_fn=self._trainer_epoch)
        if split == "train" and self.windows_per_chunk > 1:
            k = self.windows_per_chunk
            kwargs.update(batch_size=self.batch_size // k,
                          collate_fn=ChunkCollate(k, self.history, self.horizon, self.value_offset))
        if self.num_workers > 0 and self.multiprocessing_context is not None:
            kwargs["multiprocessing_context"] = self.multiprocessing_context
        if split == "train":
            return _ResumableDataLoader(self.dataset(split), progress_fn=self._trainer_batches, **kwargs)
        return _EpochDataLoader(self.dataset(split), **kwargs)

    def _trainer_epoch(self) -> int | None:
        return int(self.trainer.current_epoch) if self.trainer is not None else None

    def _trainer_batches(self) -> int:
        """Training batches of the current epoch the trainer has processed (0 without a trainer)."""
        if self.trainer is None:
            return 0
        progress = self.trainer.fit_loop.epoch_loop.batch_progress.current
        return int(progress.processed)  # type: ignore[attr-defined]  # a _ProcessedTracker, typed as its base

    def train_dataloader(self) -> DataLoader:
        """The training windows' loader."""
        return self._loader("train")

    def val_dataloader(self) -> DataLoader | list:
        """The validation windows' loader, or none without validation data."""
        if self.val_source is None and self.heldout_fraction <= 0:
            return []
        return self._loader("val")
