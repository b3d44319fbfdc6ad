"""docs/extending.md's "a planner, step by step", followed from a folder outside the repository: a package that
registers a planner through the ``simdist.components`` entry point (installed as pip would: a ``.dist-info`` with
``entry_points.txt``) is listed by ``simdist components`` and acts in ``simdist evaluate --planner``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import torch

from simdist import WorldModel
from simdist.components.agents.simdist.configuration import SimDistAgentConfig
from simdist.components.agents.simdist.modeling import SimDistAgent
from simdist.model.presets import preset_config

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def _walk_code() -> str:
    """The planner module of the walk, as the docs print it."""
    text = DOC.read_text(encoding="utf-8")
    walk = text[text.index("**A planner, step by step**"):]
    match = re.search(r"```python\n(.*?)```", walk, re.S)
    assert match, "docs/extending.md: the planner walk has no python block"
    return match.group(1)


def _install(site: Path) -> None:
    """The walk's package, installed into ``site`` as ``pip install`` would leave it."""
    (site / "zero_planner").mkdir(parents=True)
    (site / "zero_planner" / "__init__.py").write_text(_walk_code(), encoding="utf-8")
    info = site / "zero_planner-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zero-planner\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[simdist.components]\nzero = zero_planner\n", encoding="utf-8")


def _simdist(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1"}
    code = "import sys; from simdist.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def test_a_planner_from_outside_the_repository_runs_from_the_command_line(tmp_path: Path) -> None:
    _install(tmp_path / "site")
    torch.manual_seed(0)
    agent = SimDistAgent(WorldModel(preset_config("toy")).eval(),
                         SimDistAgentConfig.from_planner_dict({"planner": "mppi", "num_samples": 8, "iterations": 1}))
    folder = agent.save_pretrained(tmp_path / "toy-agent")
    listed = _simdist(tmp_path / "site", "components")
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^planner +cem, mppi, mppi_naive, policy, zero$", listed.stdout, re.M), listed.stdout
    ran = _simdist(tmp_path / "site", "evaluate", "--task", "toy-reach", "--agent", str(folder), "--planner", "zero",
                   "--trials", "1", "--envs", "1", "--json")
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert result["details"]["settings"]["planner"] == "zero"
    assert len(result["values"]) == 1
