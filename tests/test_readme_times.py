"""The times the README and the getting-started page state are the last idle-machine measurement of
``benchmarks/readme_times.py``, committed as ``benchmarks/readme_times.json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MEASURED = json.loads((ROOT / "benchmarks" / "readme_times.json").read_text())
TIMINGS = {t["step"]: t for t in MEASURED["timings"]}


def shown(seconds: float) -> str:
    """A time as the pages write it: ``6 min 32 s`` (``20 s`` under a minute)."""
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def test_every_step_was_measured_idle_and_passed() -> None:
    cores = MEASURED["machine"]["cores"]
    for step in ("install", "quickstart", "evaluate", "checks", "tests", "demo", "go2-demo"):
        timing = TIMINGS[step]
        assert timing["returncode"] == 0, step
        assert timing["others_load"] < 0.1 * cores, f"{step}: other jobs' load {timing['others_load']:.2f} cores"


@pytest.mark.parametrize(("page", "steps"), [
    ("README.md", ("install", "checks", "tests", "demo", "go2-demo", "quickstart", "evaluate")),
    ("docs/getting-started.md", ("install", "checks", "tests", "demo", "go2-demo")),
])
def test_the_pages_state_the_measured_times(page: str, steps: tuple[str, ...]) -> None:
    text = " ".join((ROOT / page).read_text().split())
    for step in steps:
        assert shown(TIMINGS[step]["seconds"]) in text, f"{page}: {step} should read {shown(TIMINGS[step]['seconds'])}"
