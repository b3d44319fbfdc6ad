"""The wheel: it ships the zoo (index, bundled models, expert sets) and the built-in reality profiles, leaves
training state out, and an unpacked copy serves the zoo offline from any folder (no network, empty HF cache)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import simdist
from simdist import zoo

REPO = Path(__file__).resolve().parents[1]
#: What the build reads: the project files, the readme, the licence files and the folders pyproject's package-dir maps.
SOURCES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "NOTICE", "simdist", "components", "hub")
ZOO = "simdist/zoo_files"
PROFILES = re.compile(r"simdist/(components/tasks|envs)/go2/profiles/[^/]+\.yaml")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the sources (so no build/ or egg-info lands in the checkout)."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
        else:
            shutil.copy2(path, src / name)
    out = tmp_path_factory.mktemp("dist")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", str(out), str(src)], capture_output=True, text=True, timeout=600, env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = out.glob("simdist-*.whl")
    return built


def shipped_files(folder: Path) -> list[Path]:
    """The files under ``folder`` an install needs: everything except training state."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and "train_state" not in p.parts
                  and "__pycache__" not in p.parts)


def test_wheel_holds_the_zoo_and_profiles(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        assert f"{ZOO}/{zoo.INDEX_NAME}" in names
        assert "simdist/templates/model_card.md" in names and "simdist/hub/load.py" in names
        assert "simdist/py.typed" in names  # users' type checkers read the annotations
        for notice in ("LICENSE", "NOTICE"):  # the licence and third-party notices, byte-identical
            (name,) = [n for n in names if n.endswith(f".dist-info/licenses/{notice}")]
            assert zf.read(name) == (REPO / notice).read_bytes(), name

        entries = zoo.load_index(REPO / "hub")
        bundled = [e for e in entries if e.bundled() is not None]
        assert {"go2-slope", "go2-foam"} <= {e.name for e in bundled}
        for entry in bundled:
            for file in ("config.json", "model.safetensors", "README.md"):
                assert f"{ZOO}/{entry.folder}/{file}" in names, (entry.name, file)

        manifest = json.loads((REPO / "hub" / "experts" / "go2" / zoo.EXPERT_MANIFEST).read_text())
        listed = [manifest["expert"]["file"], *(s["file"] for s in manifest["suboptimal"])]
        for file in (zoo.EXPERT_MANIFEST, *listed):
            assert f"{ZOO}/experts/go2/{file}" in names, file

        for folder in ("models", "experts"):  # every run-time file, byte-identical
            for path in shipped_files(REPO / "hub" / folder):
                name = f"{ZOO}/{path.relative_to(REPO / 'hub').as_posix()}"
                assert name in names, name
                assert zf.read(name) == path.read_bytes(), name

        profiles = sorted(n for n in names if PROFILES.fullmatch(n))
        assert len(profiles) >= 3, profiles
        assert not [n for n in names if "train_state" in n]
        assert not [n for n in names if n.endswith((".ckpt", ".pt"))]


def test_unpacked_wheel_serves_the_zoo_offline(wheel: Path, tmp_path: Path) -> None:
    """What a regular (non-editable) install sees: the zoo found through the package, not the checkout."""
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    work = tmp_path / "elsewhere"
    work.mkdir()
    script = """
import sys
import simdist
from simdist import WorldModel, zoo
from simdist.cli import main
from pathlib import Path
site = Path(sys.argv[1]).resolve()
assert Path(simdist.__file__).resolve().is_relative_to(site), simdist.__file__
assert zoo.zoo_root() == site / "simdist" / "zoo_files", zoo.zoo_root()
print("experts", zoo.expert_set("go2").relative_to(site))
print("params", WorldModel.from_pretrained("simdist/go2-slope").count_parameters()["total"])
main(["zoo", "list"])
main(["--version"])
"""
    env = {key: value for key, value in os.environ.items() if key not in (zoo.ENV_VAR, "HF_HUB_CACHE")}
    env.update(PYTHONPATH=str(site), HF_HOME=str(tmp_path / "hf-home"), HF_HUB_OFFLINE="1")
    result = subprocess.run([sys.executable, "-c", script, str(site)], cwd=work, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "experts simdist/zoo_files/experts/go2" in out and "params 667758" in out
    assert out.splitlines()[-1] == f"simdist {simdist.__version__}"  # an installed wheel has no commit
    rows = {line.split()[0]: line.split() for line in out.splitlines()[3:-1]}
    assert rows["go2-slope"][4] == "yes" and rows["go2-foam"][4] == "yes" and rows["go2-slope"][1] == "simdist", out
    assert not (tmp_path / "hf-home" / "hub").exists() or not any((tmp_path / "hf-home" / "hub").iterdir())


def test_wheel_ships_every_package_folder(wheel: Path) -> None:
    """A new task, agent or component folder ships without a central edit (setup.py discovers the packages):
    every folder with an ``__init__.py`` under the folders pyproject's package-dir maps is in the wheel."""
    import tomllib

    mapped = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    expected = set()
    for name, folder in mapped.items():
        for init in (REPO / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(REPO / folder).parts
            if "__pycache__" not in parts and not any(p.endswith(".egg-info") for p in parts):
                expected.add("/".join((*name.split("."), *parts, "__init__.py")))
    with zipfile.ZipFile(wheel) as zf:
        assert sorted(expected - set(zf.namelist())) == []

