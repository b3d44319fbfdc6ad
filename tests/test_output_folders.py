"""Output folders never lose a file: ``simdist export`` replaces an earlier export only with ``--overwrite``, and
then only the files an export writes, keeping the user's other files and the permissions; a foreign non-empty
folder is refused naming what it holds."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from fault_harness import tiny_checkpoint

from simdist.cli import main
from simdist.hub.files import MODEL_FILES


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode)) for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "toy.ckpt")


def test_export_replaces_only_its_own_files_and_only_when_asked(ckpt: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "model"
    assert main(["export", "--ckpt", str(ckpt), "--out", str(out)]) == 0
    (out / "NOTES.md").write_text("the user's notes\n")
    (out / "config.json").chmod(0o600)
    out.chmod(0o750)
    capsys.readouterr()
    before = _snapshot(out)

    assert main(["export", "--ckpt", str(ckpt), "--out", str(out)]) == 2  # an earlier export: refused
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"--out {out}: holds a model already (config.json, model.safetensors, README.md)" in err
    assert "pass --overwrite" in err and _snapshot(out) == before

    assert main(["export", "--ckpt", str(ckpt), "--out", str(out), "--overwrite"]) == 0
    after = _snapshot(out)
    assert after["NOTES.md"] == before["NOTES.md"]  # not the export's: kept as it was
    assert after["config.json"][1] == 0o600 and stat.S_IMODE(out.stat().st_mode) == 0o750  # permissions kept
    assert set(after) == set(before) and set(after) - {"NOTES.md"} <= set(MODEL_FILES)


def test_export_refuses_a_foreign_folder_naming_what_is_there(ckpt: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "thesis"
    out.mkdir()
    (out / "chapter1.tex").write_text("mine")
    for extra in ([], ["--overwrite"]):
        assert main(["export", "--ckpt", str(ckpt), "--out", str(out), *extra]) == 2
        err = capsys.readouterr().err
        assert "is not a model folder (it holds chapter1.tex)" in err and err.count("\n") == 1
    assert sorted(p.name for p in out.iterdir()) == ["chapter1.tex"]


def test_fit_refuses_a_foreign_folder_and_accepts_one_holding_only_its_inputs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``simdist fit`` writes into ``--trainer.default_root_dir`` only when it is new, empty, a training run's, or
    holds nothing but the command's own inputs (here its recipe and data); a folder of something else is refused
    before any work, naming what it holds, and left as it was."""
    import yaml

    from tests.helpers import tiny_config, write_linear_dataset

    def recipe(root: Path, data: Path, at: Path) -> Path:
        path = at / "recipe.yaml"
        path.write_text(yaml.safe_dump({
            "seed_everything": 0,
            "trainer": {"accelerator": "cpu", "max_steps": 2, "logger": False, "enable_progress_bar": False,
                        "default_root_dir": str(root), "limit_val_batches": 1, "num_sanity_val_steps": 0},
            "model": {"class_path": "simdist.training.PretrainModule",
                      "init_args": {"model": tiny_config().to_dict(), "warmup_steps": 1}},
            "data": {"train": str(data), "history": 4, "horizon": 3, "batch_size": 8, "windows_per_epoch": 16,
                     "heldout_fraction": 0.2}}))
        return path

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("the user's\n")
    data = write_linear_dataset(tmp_path / "data", episodes=4, length=20)
    path = recipe(foreign, data, at=tmp_path)
    before = _snapshot(foreign)
    capsys.readouterr()
    assert main(["fit", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"--trainer.default_root_dir {foreign}: the folder is not empty and is not a training run" in err
    assert "thesis.tex" in err and _snapshot(foreign) == before

    own = tmp_path / "own"  # the recipe and the data inside the run folder are the command's inputs
    own.mkdir()
    inside = write_linear_dataset(own / "data", episodes=4, length=20)
    assert main(["fit", "--config", str(recipe(own, inside, at=own))]) == 0
    assert list(own.rglob("*.ckpt"))
