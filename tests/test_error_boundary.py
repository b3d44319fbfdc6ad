"""The error boundary of every command, the output-folder guard and the settings schema."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from simdist.errors import InputError, guarded
from simdist.fsutil import check_output_path, replace_dir
from simdist.schema import SettingError, Validated, bounds


def _fail(err: BaseException) -> int:
    raise err


def test_input_errors_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert guarded("simdist x", lambda: _fail(InputError("--out F: first\n  second"))) == 2
    assert capsys.readouterr().err == "simdist x: error: --out F: first; second\n"
    assert guarded("simdist x", lambda: _fail(FileNotFoundError(2, "No such file or directory", "data/x"))) == 2
    assert capsys.readouterr().err == "simdist x: error: data/x: no such file or directory\n"


def test_bugs_keep_their_traceback_and_debug_shows_input_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ZeroDivisionError):
        guarded("simdist x", lambda: 1 // 0)
    assert guarded("simdist x", lambda: _fail(InputError("bad")), debug=True) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.endswith("simdist x: error: bad\n")


def test_debug_flag_and_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    from simdist.cli import main

    (tmp_path / "F").write_text("")
    argv = ["export", "--ckpt", "x.ckpt", "--out", str(tmp_path / "F")]
    assert main(argv) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert main([*argv, "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setenv("SIMDIST_DEBUG", "1")
    assert main(argv) == 2
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize("where, expect", [
    ("file", "is a file, not a folder"), ("file/sub", "is a file, so nothing can be written under it"),
    ("/proc/simdist-none/out", "cannot write in /proc"), ("foreign", r"is not a dataset \(it holds notes.txt\)")])
def test_bad_output_folders_are_refused(where: str, expect: str, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("mine")
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("mine")
    path = where if where.startswith("/") else str(tmp_path / where)
    with pytest.raises(InputError, match=expect):
        check_output_path(path, kind="dataset", markers=("dataset.json",))


def test_own_folders_and_leftover_temporaries_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / ".dataset.json.0badc0de.tmp").write_text("half")
    assert check_output_path(tmp_path / "run", markers=("dataset.json",)) == tmp_path / "run"
    (tmp_path / "run" / "dataset.json").write_text("{}")
    (tmp_path / "run" / "notes.txt").write_text("a user's file in a dataset folder")
    check_output_path(tmp_path / "run", markers=("dataset.json",))
    check_output_path(tmp_path / "new" / "deeper", markers=("dataset.json",))


def test_replacing_a_folder_keeps_foreign_files_and_permissions(tmp_path: Path) -> None:
    old, new = tmp_path / "model", tmp_path / ".model.tmp-00000000"
    old.mkdir()
    (old / "config.json").write_text("old")
    (old / "planner.json").write_text("old planner")
    (old / "NOTES.md").write_text("the user's")
    os.chmod(old / "config.json", 0o600)
    os.chmod(old, 0o750)
    new.mkdir()
    (new / "config.json").write_text("new")
    replace_dir(new, old, own=("config.json", "planner.json"))
    assert (old / "config.json").read_text() == "new" and (old / "NOTES.md").read_text() == "the user's"
    assert not (old / "planner.json").exists()  # the writer's own file, not written again
    assert stat.S_IMODE((old / "config.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(old.stat().st_mode) == 0o750


@dataclass
class _Settings(Validated):
    count: int = field(default=1, metadata=bounds(ge=1))
    rate: float = field(default=0.5, metadata=bounds(gt=0, lt=1))
    mode: str = field(default="a", metadata=bounds(choices=("a", "b")))
    limit: int | None = None


@pytest.mark.parametrize("data, key", [({"count": 1.5}, "count"), ({"count": True}, "count"),
                                       ({"count": 0}, "count"), ({"rate": float("nan")}, "rate"),
                                       ({"rate": 1}, "rate"), ({"mode": "c"}, "mode"), ({"limit": "x"}, "limit"),
                                       ({"colour": 1}, "colour")])
def test_schema_refuses_each_bad_setting_by_name(data: dict, key: str) -> None:
    with pytest.raises(SettingError, match=f"key '{key}'"):
        _Settings.from_dict(data)
    assert _Settings.from_dict({"count": 3, "limit": None}).count == 3


def test_mppi_config_refuses_what_planner_json_may_hold() -> None:
    from simdist.components.planners.mppi import MPPIConfig

    for bad in ({"num_samples": "many"}, {"num_samples": 1.5}, {"temperature": -1}, {"init_std": float("nan")},
                {"samples_per_step": 4}):
        with pytest.raises(SettingError):
            MPPIConfig.from_dict(bad)
    from simdist.components.planners.presets import PLANNER_PRESETS

    for preset in PLANNER_PRESETS.values():  # every preset is a valid MPPIConfig, and reads back as one
        assert MPPIConfig.from_dict(preset.config.to_dict()) == preset.config
