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

import pytest
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


#: settings only MPPI has: the core names none of them (its plug-in, components/planners/, declares them)
MPPI_ONLY = ("num_samples", "num_policy_samples", "num_elites", "mixture_coef", "init_std", "min_std", "max_std",
             "base_act_std", "warm_start")
#: the one core module allowed to: the deprecated flags' table (removed with the flags)
ALLOWED = {"simdist/planning/legacy.py"}


def test_the_core_names_no_mppi_setting() -> None:
    root = Path(__file__).resolve().parents[1]
    pattern = re.compile(rf"\b({'|'.join(MPPI_ONLY)})\b")
    found = [f"{path.relative_to(root)}:{n}: {match.group(1)}"
             for path in sorted((root / "simdist").rglob("*")) if path.suffix in (".py", ".md", ".json", ".yaml")
             and path.relative_to(root).as_posix() not in ALLOWED
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for match in pattern.finditer(line)]
    assert not found, found
    assert all((root / path).is_file() for path in ALLOWED)  # the allow-list names a file that exists


def test_a_planner_with_its_own_schema_takes_overrides_with_no_core_edit() -> None:
    """A planner registered from outside the core with a ``config_class`` gets ``--planner NAME --planner.KEY
    VALUE``: the overrides are checked against its schema and reach its constructor."""
    from dataclasses import dataclass, field

    from simdist.arguments import add_planner_arguments, tool_parser
    from simdist.planning import build_planner
    from simdist.planning.settings import check_overrides
    from simdist.registry import _REGISTRY, register
    from simdist.schema import Validated, bounds

    @dataclass
    class StepConfig(Validated):
        step: float = field(default=0.5, metadata=bounds(gt=0))
        seed: int | None = None

    class StepPlanner:
        config_class = StepConfig

        def __init__(self, world_model: object, **settings: object) -> None:
            self.config = StepConfig(**settings)

    register("planner", "step-test")(StepPlanner)
    try:
        parser = tool_parser("test", "a planner of its own")
        add_planner_arguments(parser)
        args = parser.parse_args(["--planner", "step-test", "--planner.step", "0.25"])
        assert args.planner_overrides == {"step": 0.25}
        assert build_planner(None, {"planner": "step-test", **args.planner_overrides}).config.step == 0.25
        with pytest.raises(ValueError, match=r"--planner.step: expected a finite number > 0, got -1"):
            check_overrides("step-test", {"step": -1})
        with pytest.raises(SystemExit):
            parser.parse_args(["--planner", "step-test", "--planner.num_samples", "7"])
    finally:
        del _REGISTRY["planner"]["step-test"]
