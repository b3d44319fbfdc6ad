"""Multi-process diagnostics: ``ShardAudit`` (what each training process reads and holds, written per rank)
and ``StepTimer`` (training throughput).

Add it to a run (``--trainer.callbacks+=simdist.training.audit.ShardAudit
--trainer.callbacks.init_args.out_dir DIR``) and every rank writes ``DIR/rank-<global rank>.json``:

* ``episode_ids``: the training episodes this rank's share holds, read once through a DataLoader built like
  the trainer's (same workers and start method), so it shows what spawned or forked workers really read;
* ``windows``: how many windows that share yields in one pass;
* ``weights_sha256`` and ``global_step`` at the end of training: after a synchronised step every rank holds
  the same weights.

The shares of all ranks are disjoint and together cover the training split when the data are sharded
correctly (``tests/test_distributed_training.py`` checks it with 2 processes, fork and spawn).
"""

from __future__ import annotations

import copy
import hashlib
import time
from pathlib import Path
from typing import Any

import lightning as L
from torch.utils.data import DataLoader

from simdist.data.datamodule import TrajectoryDataModule, WindowDataset
from simdist.fsutil import atomic_write_json


def weights_digest(module: L.LightningModule) -> str:
    """SHA-256 over every parameter and buffer (name, dtype, shape, bytes), in ``state_dict`` order."""
    h = hashlib.sha256()
    for name, tensor in module.state_dict().items():
        t = tensor.detach().cpu().contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        h.update(t.numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def share_ids(datamodule: TrajectoryDataModule) -> tuple[list[int], int]:
    """(sorted episode ids, window count) of one pass over this rank's training share."""
    dataset: WindowDataset = copy.copy(datamodule.train_dataloader().dataset)  # type: ignore[assignment]
    dataset.return_ids, dataset.windows_per_epoch, dataset.shuffle = True, None, False
    kwargs: dict[str, Any] = {"batch_size": 256, "num_workers": datamodule.num_workers}
    if datamodule.num_workers > 0 and datamodule.multiprocessing_context is not None:
        kwargs["multiprocessing_context"] = datamodule.multiprocessing_context
    ids: set[int] = set()
    windows = 0
    for batch in DataLoader(dataset, **kwargs):
        ids.update(int(i) for i in batch["episode_id"].tolist())
        windows += int(batch["episode_id"].numel())
    return sorted(ids), windows


class ShardAudit(L.Callback):
    """Writes each rank's data share and final weight digest to ``out_dir/rank-<rank>.json``."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = Path(out_dir)
        self.record: dict[str, Any] = {}

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        dm = getattr(trainer, "datamodule", None)
        if not isinstance(dm, TrajectoryDataModule):
            raise TypeError("ShardAudit needs the trajectory DataModule (data: in the recipe)")
        ids, windows = share_ids(dm)
        self.record = {"global_rank": trainer.global_rank, "world_size": trainer.world_size,
                       "episode_ids": ids, "windows": windows,
                       "multiprocessing_context": dm.multiprocessing_context, "num_workers": dm.num_workers}

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.record.update(global_step=int(trainer.global_step), weights_sha256=weights_digest(pl_module))
        self.out_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.out_dir / f"rank-{trainer.global_rank}.json", self.record)


class StepTimer(L.Callback):
    """Training steps per second after ``skip`` warm-up steps, written by rank 0 to ``out_dir/timing.json``
    (with the world size and the global batch: the scaling measurements of docs/distributed.md). Lightning's
    ``ThroughputMonitor`` reports through a logger and needs a batch-size function, which a recipe cannot
    give; this needs neither."""

    def __init__(self, out_dir: str, skip: int = 5) -> None:
        self.out_dir, self.skip = Path(out_dir), skip
        self.times: list[float] = []
        self.batch = 0

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        self.times.append(time.perf_counter())
        self.batch = int(batch["act_hist"].shape[0])

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.global_rank != 0 or len(self.times) <= self.skip + 1:
            return
        timed = self.times[self.skip:]
        steps_per_s = (len(timed) - 1) / (timed[-1] - timed[0])
        global_batch = self.batch * trainer.world_size
        self.out_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.out_dir / "timing.json", {
            "world_size": trainer.world_size, "batch_per_rank": self.batch, "global_batch": global_batch,
            "timed_steps": len(timed) - 1, "steps_per_s": steps_per_s, "samples_per_s": steps_per_s * global_batch})
