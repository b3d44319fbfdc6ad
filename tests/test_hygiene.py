"""Project hygiene a user relies on: the paper's citation on every model card, in the README and in
CITATION.cff (all the same paper), the version with its source commit, and the version declared once."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import tiny_config

import simdist
from simdist.cli import main
from simdist.hub.files import OFFICIAL_CODE_URL, PAPER_BIBTEX
from simdist.model.model_card import render_model_card
from simdist.model.world_model import WorldModel

REPO = Path(__file__).resolve().parents[1]
SHIPPED_CARDS = sorted((REPO / "hub" / "models").glob("*/README.md"))


def citation_section(card: str) -> str:
    """The card's text from its ``## Citation`` heading to the end."""
    start = card.find("\n## Citation\n")
    assert start >= 0, "the card has no Citation section"
    return card[start:]


@pytest.fixture(scope="module")
def fresh_card(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = WorldModel(tiny_config()).save_pretrained(tmp_path_factory.mktemp("card") / "model")
    return (folder / "README.md").read_text(encoding="utf-8")


def test_fresh_card_cites_the_paper_and_credits_the_official_code(fresh_card: str) -> None:
    section = citation_section(fresh_card)
    assert f"```bibtex\n{PAPER_BIBTEX}\n```" in section
    assert OFFICIAL_CODE_URL in section and "MIT" in section


def test_a_models_own_citation_comes_after_the_papers() -> None:
    own = "@misc{mine, title={My adapted model}}"
    section = citation_section(render_model_card(WorldModel(tiny_config()), citation=own))
    assert section.index(PAPER_BIBTEX) < section.index(own)


@pytest.mark.parametrize("card", SHIPPED_CARDS, ids=lambda p: p.parent.name)
def test_every_shipped_card_carries_the_templates_citation(card: Path, fresh_card: str) -> None:
    """Each bundled zoo card ends with the Citation section the template renders today."""
    assert citation_section(card.read_text(encoding="utf-8")) == citation_section(fresh_card)


def test_shipped_cards_exist() -> None:
    assert len(SHIPPED_CARDS) >= 4, SHIPPED_CARDS


def bibtex_field(name: str) -> str:
    match = re.search(rf"^\s*{name}=\{{(.*?)\}},?$", PAPER_BIBTEX, re.MULTILINE | re.DOTALL)
    assert match, name
    return " ".join(match.group(1).split())


def test_readme_and_citation_cff_cite_the_same_paper() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"```bibtex\n{PAPER_BIBTEX}\n```" in readme
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    paper = cff["preferred-citation"]
    assert paper["title"] == bibtex_field("title")
    authors = [f"{a['family-names']}, {a['given-names']}" for a in paper["authors"]]
    assert authors == bibtex_field("author").split(" and ")
    assert str(paper["year"]) == bibtex_field("year") and paper["url"] == bibtex_field("url")
    assert cff["version"] == simdist.__version__ and cff["license"] == "Apache-2.0"


def test_version_is_declared_once() -> None:
    import tomllib  # Python 3.11+

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == simdist.__version__
    assert project["license"] == "Apache-2.0" and set(project["license-files"]) == {"LICENSE", "NOTICE"}
    assert "Apache License" in (REPO / "LICENSE").read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="not a git checkout")
def test_version_in_a_checkout_names_the_source_commit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    out = capsys.readouterr().out.strip()
    commit = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%H", "--", "simdist", "components"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert re.fullmatch(rf"simdist {re.escape(simdist.__version__)} \(commit {commit}(\+dirty)?\)", out), out


def test_version_outside_a_checkout(tmp_path: Path) -> None:
    """A copy of the package outside any git repository (as an installed wheel is) prints the version alone."""
    shutil.copytree(REPO / "simdist", tmp_path / "simdist", ignore=shutil.ignore_patterns("__pycache__"))
    result = subprocess.run([sys.executable, "-m", "simdist.cli", "--version"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"simdist {simdist.__version__}\n"
