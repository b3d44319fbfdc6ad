"""Training that resumes: a real toy fit interrupted by SIGINT says how to resume; the same command again resumes
its newest checkpoint (saying so) and ends where an uninterrupted run ends, with the same weights and metrics;
an export picks the run's newest checkpoint, never a stale one."""

from __future__ import annotations

import csv
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from lightning.pytorch import Callback, LightningModule, Trainer

from simdist.cli import main
from simdist.training.run_state import RUN_STATE

#: the global step at which :class:`InterruptAt` sends SIGINT (read from the environment, so that the
#: interrupted and the resumed run are the same command)
ENV = "SIMDIST_TEST_SIGINT_AT_STEP"

RECIPE = """trainer:
  max_steps: 12
  logger:
    class_path: lightning.pytorch.loggers.CSVLogger
    init_args: {{save_dir: {root}/logs, name: run}}
  log_every_n_steps: 1
  enable_progress_bar: false
  enable_model_summary: false
  callbacks:
    - class_path: lightning.pytorch.callbacks.ModelCheckpoint
      init_args: {{dirpath: {root}/ckpt, save_last: true, every_n_train_steps: 4}}
    - class_path: test_fit_resume.InterruptAt
data:
  batch_size: 16
  windows_per_epoch: 96
"""


class InterruptAt(Callback):
    """Sends this process SIGINT (what Ctrl-C sends) after training step ``$SIMDIST_TEST_SIGINT_AT_STEP``."""

    def on_train_batch_end(self, trainer: Trainer, pl_module: LightningModule, *args: object) -> None:
        if os.environ.get(ENV) == str(trainer.global_step):
            os.kill(os.getpid(), signal.SIGINT)


@pytest.fixture(autouse=True)
def _restore_sigint() -> Iterator[None]:
    """Python's Ctrl-C handler during the test, whatever the suite was started with (a shell's background job
    starts with SIGINT ignored, which Python keeps), and the process's own handler back afterwards (Lightning
    ignores SIGINT after an interrupt, against a second Ctrl-C)."""
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, handler)


def _fit(root: Path, data: Path, *extra: str) -> int:
    recipe = root.parent / f"{root.name}.yaml"
    recipe.write_text(RECIPE.format(root=root))
    try:
        return main(["fit", "--config", "recipes/toy/base.yaml", "--config", "recipes/toy/pretrain.yaml",
                     "--config", str(recipe), "--data.train", str(data), "--trainer.default_root_dir", str(root),
                     *extra])
    except SystemExit as stop:
        return int(stop.code or 0)


def _last(root: Path) -> dict:
    return torch.load(root / "ckpt" / "last.ckpt", map_location="cpu", weights_only=False)


def _losses(root: Path) -> dict[int, str]:
    """The logged training loss of every step, over all of the run's CSV logs."""
    out = {}
    for path in sorted((root / "logs").rglob("metrics.csv")):
        for row in csv.DictReader(path.open()):
            if row.get("train/loss_step"):
                out[int(row["step"])] = row["train/loss_step"]
    return out


@pytest.fixture(scope="module")
def reference(sim_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fit") / "reference"
    assert _fit(root, sim_data) == 0
    return root


def test_an_interrupted_fit_resumes_to_the_same_end(reference: Path, sim_data: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "run"
    monkeypatch.setenv(ENV, "6")
    assert _fit(root, sim_data) == 130
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said == (f"simdist fit: interrupted at step 6; its newest checkpoint is {root}/ckpt/last.ckpt; rerun "
                    "the same command to resume (or add --fresh to start over)")
    assert json.loads((root / RUN_STATE).read_text())["status"] == "interrupted"
    assert _last(root)["global_step"] == 4

    monkeypatch.delenv(ENV)
    assert _fit(root, sim_data) == 0
    err = capsys.readouterr().err
    assert (f"simdist fit: resuming the interrupted run in {root} from {root}/ckpt/last.ckpt (it stopped at step 6); "
            "pass --fresh to start over") in err
    assert sorted(p.name for p in (root / "ckpt").glob("last*.ckpt")) == ["last.ckpt"]  # no last-v1.ckpt
    resumed, ref = _last(root), _last(reference)
    assert resumed["global_step"] == ref["global_step"] == 12
    for key, value in ref["state_dict"].items():
        assert torch.equal(resumed["state_dict"][key], value), key
    losses, ref_losses = _losses(root), _losses(reference)
    assert sorted(ref_losses) == sorted(losses) == list(range(12))
    assert all(losses[s] == ref_losses[s] for s in range(4, 12))  # the steps the resumed run trained
    assert json.loads((root / RUN_STATE).read_text())["status"] == "finished"


def test_fresh_starts_over_and_keeps_the_old_checkpoints(sim_data: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "run"
    monkeypatch.setenv(ENV, "5")
    assert _fit(root, sim_data, "--trainer.max_steps", "8") == 130
    monkeypatch.delenv(ENV)
    capsys.readouterr()
    assert _fit(root, sim_data, "--trainer.max_steps", "8", "--fresh") == 0
    err = capsys.readouterr().err
    assert f"simdist fit: starting over in {root} (--fresh); the interrupted run's checkpoints are kept in " in err
    assert "resuming" not in err
    kept = list(root.glob("superseded-*/ckpt/last.ckpt"))
    assert len(kept) == 1 and torch.load(kept[0], weights_only=False)["global_step"] == 4
    assert _last(root)["global_step"] == 8


def test_export_takes_the_newest_checkpoint(reference: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--ckpt", str(reference), "--out", str(tmp_path / "model")]) == 0
    assert f"exported {reference}/ckpt/last.ckpt" in capsys.readouterr().out
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / "last.ckpt").write_bytes((reference / "ckpt" / "last.ckpt").read_bytes())
    os.utime(stale / "last.ckpt", (1, 1))
    (stale / "last-v1.ckpt").write_bytes((reference / "ckpt" / "last.ckpt").read_bytes())
    assert main(["export", "--ckpt", str(stale / "last.ckpt"), "--out", str(tmp_path / "other")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"simdist export: error: --ckpt {stale}/last.ckpt: a newer checkpoint of the run lies beside it "
                   "(last-v1.ckpt); pass that one, or the run folder to take its newest"]
    assert not (tmp_path / "other").exists()


def test_a_fit_still_training_in_the_folder_is_refused(sim_data: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "run"
    root.mkdir()
    (root / RUN_STATE).write_text(json.dumps({"status": "running", "pid": os.getpid(), "step": 3}))
    assert _fit(root, sim_data) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"simdist fit: error: --trainer.default_root_dir {root}: a fit is training there now (pid "
                   f"{os.getpid()}, see {RUN_STATE}); wait until it ends or pass another folder"]
    assert sorted(p.name for p in root.iterdir()) == [RUN_STATE]
