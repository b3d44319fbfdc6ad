"""The documentation site builds offline under ``mkdocs build --strict`` (a broken link or anchor, a page missing from
the navigation, a public name without a docstring fail it), and its API reference covers the public API."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from test_results_api import PUBLIC_MODULES

REPO = Path(__file__).resolve().parents[1]


def load_hooks() -> ModuleType:
    """docs/_hooks.py as a module (MkDocs loads it by path, so it is not importable by name)."""
    spec = importlib.util.spec_from_file_location("simdist_docs_hooks", REPO / "docs" / "_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once with ``mkdocs build --strict`` into a temporary folder (about 30 s on 2 cores)."""
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=REPO,
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "HF_HUB_OFFLINE": "1"})
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stderr[-6000:]}"
    return out


def test_the_site_builds_strict_with_every_page(site: Path) -> None:
    for page in ("index.html", "getting-started/index.html", "results/index.html", "api/simdist/index.html",
                 "guide/load-and-plan/index.html", "plan-ranking/index.html", "repository/results/README.md"):
        assert (site / page).is_file(), page
    results = (site / "results" / "index.html").read_text(encoding="utf-8")
    assert "--8&lt;--" not in results and results.count("Question.") == 8  # every lab report's summary is included


def test_every_public_name_is_in_the_reference(site: Path) -> None:
    hooks = load_hooks()
    assert set(hooks.API_PACKAGES) == {"simdist", *PUBLIC_MODULES}  # the public API of docs/architecture.md
    for package in hooks.API_PACKAGES:
        module = importlib.import_module(package)
        html = (site / "api" / package / "index.html").read_text(encoding="utf-8")
        for name in module.__all__:
            target = hooks.resolve(module, name)
            anchor = f'id="{target}"' if target else f"<code>{package}.{name}</code>"
            assert anchor in html, f"{package}.{name} is not in the API reference ({anchor})"


def test_an_undocumented_public_method_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    hooks = load_hooks()

    class Documented:
        """Documented."""

        def run(self) -> None:
            pass

    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.simdist"):
        hooks.check_documented("pkg.Documented", Documented)
    assert [r.getMessage() for r in caplog.records] == ["API reference: pkg.Documented.run has no docstring"]


def test_links_out_of_docs_are_found(tmp_path: Path) -> None:
    hooks = load_hooks()
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "guide" / "page.md").write_text(
        "[a](../../results/README.md#x) [b](../index.md) [c](https://example.org/x.md) ![d](../../f.png)\n")
    assert hooks.repository_links(tmp_path / "docs", "guide/page.md") == {"../results/README.md", "../f.png"}
