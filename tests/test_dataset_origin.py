"""Datasets that cannot mix: ``simdist generate`` into a folder another run made is refused (naming the first
difference) and nothing there changes; the same command resumes; paths read from a dataset's or an expert
set's files stay inside its folder."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from simdist.cli import main
from simdist.data.origin import ORIGIN_FILE
from simdist.data.shards import resolve_urls
from simdist.errors import InputError


def _generate(out: Path, *extra: str) -> int:
    return main(["generate", "--task", "toy-reach", "--envs", "2", "--transitions", "120",
                 "--no-progress", "--json", "--out", str(out), *extra])


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.startswith(".")}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("origin") / "data"
    assert _generate(out, "--seed", "1") == 0
    return out


def test_the_settings_are_recorded(dataset: Path) -> None:
    settings = json.loads((dataset / ORIGIN_FILE).read_text())["settings"]
    assert settings["task"] == "toy-reach" and settings["seed"] == 1
    assert settings["envs"] == 2 and settings["transitions"] == 120 and settings["parts"] is None
    assert "out" not in settings and "no_progress" not in settings


@pytest.mark.parametrize(("extra", "difference"), [
    (["--seed", "2"], "seed 1 there, 2 now"),
    (["--seed", "1", "--parts", "2"], "parts None there, 2 now"),
    (["--seed", "1", "--expert-only"], "expert_only False there, True now"),
])
def test_other_settings_are_refused_and_nothing_changes(dataset: Path, extra: list[str], difference: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    before = _digest(dataset)
    assert _generate(dataset, *extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"simdist generate: error: --out {dataset}: holds a dataset made")
    assert difference in err[0] and ORIGIN_FILE in err[0]
    assert _digest(dataset) == before


def test_the_same_command_resumes(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = json.loads((dataset / "dataset.json").read_text())["num_episodes"]
    capsys.readouterr()
    assert _generate(dataset, "--seed", "1") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["written_episodes"] == 0 and summary["skipped_existing"] == before


def test_a_folder_without_the_record_is_checked_by_its_index(dataset: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A dataset written before origin.json: its dataset.json's generator seed decides, then it is adopted."""
    old = tmp_path / "old"
    old.mkdir()
    for p in dataset.iterdir():
        if p.name != ORIGIN_FILE and not p.name.startswith("."):
            (old / p.name).write_bytes(p.read_bytes())
    assert _generate(old, "--seed", "3") == 2
    err = capsys.readouterr().err
    assert "seed 1 there, 3 now" in err and "dataset.json" in err
    assert not (old / ORIGIN_FILE).exists()
    assert _generate(old, "--seed", "1") == 0
    assert json.loads((old / ORIGIN_FILE).read_text())["settings"]["seed"] == 1


def test_a_shard_outside_the_folder_is_refused(dataset: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    info = json.loads((dataset / "dataset.json").read_text())
    info["shards"][0]["name"] = "../../outside.tar"
    (data / "dataset.json").write_text(json.dumps(info))
    (tmp_path.parent / "outside.tar").write_bytes((dataset / "episodes-000000.tar").read_bytes())
    try:
        with pytest.raises(InputError, match=r"dataset.json: key 'shards\[0\].name': '../../outside.tar' is not a "
                                             r"path inside"):
            resolve_urls(data)
    finally:
        (tmp_path.parent / "outside.tar").unlink()


def test_an_expert_file_outside_the_set_is_refused(tmp_path: Path) -> None:
    from simdist.experts import MANIFEST, load_expert_set

    (tmp_path / MANIFEST).write_text(json.dumps({"expert": {"file": "/etc/passwd"}, "suboptimal": []}))
    with pytest.raises(InputError, match=r"key 'expert.file': '/etc/passwd' is not a path inside"):
        load_expert_set(tmp_path)
