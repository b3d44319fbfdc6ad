"""Resume building blocks: stale temporaries of killed writes, the resumable training loader, per-step seeds
and atomic checkpoint files (the slow end-to-end checks are in test_fault_injection.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from simdist.data import DatasetSpec, Episode, EpisodeWriter, TrajectoryDataModule
from simdist.fsutil import atomic_write_json, remove_stale_temporaries, replace_dir

SPEC = DatasetSpec(obs={"state": (3,)}, action_dim=2, dt=0.1)


def test_remove_stale_temporaries(tmp_path: Path) -> None:
    keep = ["dataset.json", "episodes-000000.tar", ".hidden", "notes.tmp.txt", "stage-1"]
    for name in keep[:4]:
        (tmp_path / name).write_text("x")
    (tmp_path / "stage-1").mkdir()
    stale = [".dataset.json.0123abcd.tmp", ".curve.png.89abcdef.tmp.png", ".last.ckpt.deadbeef.tmp"]
    for name in stale:
        (tmp_path / name).write_text("half")
    (tmp_path / ".stage-2.tmp-0badc0de").mkdir()
    (tmp_path / ".stage-2.tmp-0badc0de" / "model.safetensors").write_bytes(b"\0")
    # a replace_dir killed between its renames: the target is gone, the previous folder set aside
    (tmp_path / ".stage-3.old-01234567").mkdir()
    (tmp_path / ".stage-3.old-01234567" / "config.json").write_text("{}")
    # a previous folder set aside after the new one was in place: deleted
    (tmp_path / ".stage-1.old-76543210").mkdir()
    removed = remove_stale_temporaries(tmp_path)
    assert sorted(removed) == sorted([*stale, ".stage-2.tmp-0badc0de", ".stage-1.old-76543210"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*keep, "stage-3"])
    assert (tmp_path / "stage-3" / "config.json").read_text() == "{}"
    assert remove_stale_temporaries(tmp_path / "missing") == []


def test_atomic_writers_leave_nothing_behind(tmp_path: Path) -> None:
    atomic_write_json(tmp_path / "a.json", {"x": 1})
    new = tmp_path / ".b.tmp-00000000"
    new.mkdir()
    (new / "f").write_text("1")
    replace_dir(new, tmp_path / "b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b"]


def test_episode_writer_removes_stale_temporaries(tmp_path: Path) -> None:
    EpisodeWriter(tmp_path, SPEC).close()
    (tmp_path / ".dataset.json.0badc0de.tmp").write_text('{"half": ')
    (tmp_path / "episodes-000000.tar.tmp").write_bytes(b"\0" * 100)
    EpisodeWriter(tmp_path, SPEC).close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dataset.json"]


def _episode(eid: int, length: int) -> Episode:
    i = (100.0 * eid + np.arange(length))[:, None]
    return Episode(obs={"state": np.repeat(i, 3, 1)}, actions=np.repeat(i, 2, 1), commands=np.zeros((length, 0)),
                   rewards=i[:, 0], values=i[:, 0], expert=np.zeros(length, bool), episode_id=eid,
                   meta={"dt": 0.1})


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = tmp_path_factory.mktemp("resume-data")
    with EpisodeWriter(d, SPEC, max_episodes_per_shard=4) as w:
        for e in range(12):
            w.write(_episode(e, 18 + e))
    return str(d)


def _loader(data: str, workers: int):
    dm = TrajectoryDataModule(data, history=3, horizon=3, batch_size=4, windows_per_epoch=48, heldout_fraction=0.0,
                              num_workers=workers, shuffle_buffer=16, beg_pad=0, end_pad=0, seed=1)
    return dm.train_dataloader()


def _ids(batch: dict) -> list[float]:
    return batch["obs_hist"]["state"][:, -1, 0].tolist()


@pytest.mark.parametrize("workers", [0, 2])
def test_training_loader_resumes_inside_the_epoch(data: str, workers: int) -> None:
    """A loader given the state of a checkpoint taken after k batches yields batches k.. of the same epoch."""
    full = [_ids(b) for b in _loader(data, workers)]
    assert len(full) == 12 and len({tuple(b) for b in full}) == 12
    for k in (1, 5, 12):
        loader = _loader(data, workers)
        loader.load_state_dict({"epoch": 0, "batches": k})
        assert [_ids(b) for b in loader] == full[k:]
        assert [_ids(b) for b in loader] != full  # the next pass is the next epoch, from its start
    other_epoch = _loader(data, workers)
    other_epoch.load_state_dict({"epoch": 3, "batches": 5})  # a state of another epoch skips nothing
    assert len(list(other_epoch)) == 12


def test_step_seed_depends_on_the_step_not_the_history() -> None:
    from conftest import tiny_config

    from simdist.training import PretrainModule
    from simdist.training.module import WorldModelModule

    module = PretrainModule(model=tiny_config().to_dict())
    torch.manual_seed(7)
    module.on_fit_start()
    draws = []
    for burn in (0, 5):
        torch.rand(burn)  # other draws before the step must not matter
        WorldModelModule.on_train_batch_start(module, None, 3)
        draws.append(torch.rand(4))
    torch.testing.assert_close(draws[0], draws[1])
    WorldModelModule.on_train_batch_start(module, None, 4)
    assert not torch.equal(torch.rand(4), draws[0])


def test_checkpoint_io_writes_atomically(tmp_path: Path) -> None:
    from simdist.training.checkpoint_io import AtomicCheckpointIO

    (tmp_path / ".last.ckpt.0badc0de.tmp").write_bytes(b"half")  # left by a killed run
    io = AtomicCheckpointIO()
    io.save_checkpoint({"state_dict": {"w": torch.ones(2)}, "global_step": 3}, tmp_path / "last.ckpt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.ckpt"]
    assert io.load_checkpoint(tmp_path / "last.ckpt")["global_step"] == 3
