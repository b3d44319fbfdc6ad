"""Tasks and agents are plug-ins: the core names no task, third-party packages add both, agents dispatch on type."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from simdist.agents import agent_types, load_agent, read_agent_type
from simdist.evaluation import EvaluationResult, bootstrap_ci, compare
from simdist.tasks import TaskError, make_task, task_names

ROOT = Path(__file__).resolve().parents[1]
#: words that name a built-in task or its robot; the generic core (everything under simdist/) must not use them
TASK_WORDS = re.compile(r"go2|toy|unitree|quadruped|ptfe|foam|ur5e|peg|table.leg|robotiq", re.IGNORECASE)


def test_core_names_no_task() -> None:
    offenders = []
    for path in sorted((ROOT / "simdist").rglob("*")):
        if path.suffix not in (".py", ".md", ".yaml", ".json") or "__pycache__" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if TASK_WORDS.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "the generic core names a task:\n" + "\n".join(offenders)


def test_builtin_tasks_and_agents_are_registered() -> None:
    assert {"go2", "toy-reach"} <= set(task_names())
    assert "simdist" in agent_types()
    with pytest.raises(TaskError, match="registered tasks: .*go2"):
        make_task("nope")


def test_every_command_lists_the_tasks_in_its_help() -> None:
    for command in ("evaluate", "adapt", "generate"):
        out = subprocess.run([sys.executable, "-m", "simdist.cli", command, "--help"], capture_output=True,
                             text=True, timeout=120, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        assert "go2" in out.stdout and "toy-reach" in out.stdout, (command, out.stdout)
    out = subprocess.run([sys.executable, "-m", "simdist.cli", "tasks"], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert "go2 (default): metric forward_progress" in out.stdout and "toy-reach" in out.stdout


def test_zoo_model_loads_as_its_agent_type(tmp_path: Path) -> None:
    agent = load_agent("simdist/go2-slope")
    assert type(agent).__name__ == "SimDistAgent" and agent.config.temporal_ensemble == 0.8
    folder = agent.with_settings(num_samples=8).save_pretrained(tmp_path / "saved")
    again = load_agent(folder)
    assert again.config.settings["num_samples"] == 8 and read_agent_type(folder / "config.json") == "simdist"
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "agent_type": "no-such-agent"}))
    with pytest.raises(ValueError, match="unknown agent_type 'no-such-agent'; registered agents: .*simdist"):
        load_agent(folder)
    from simdist import WorldModel

    with pytest.raises(ValueError, match="holds a 'no-such-agent' agent, not a SimDist world model"):
        WorldModel.from_pretrained(folder)


PLUGIN = '''
import json
from pathlib import Path

import numpy as np
import torch

from simdist import register
from simdist.agents import Agent
from simdist.components.tasks.toy_reach import ToyReachTask


@register("task", "plugin-reach")
class PluginReach(ToyReachTask):
    """toy-reach under another name, from a separate package."""


@register("agent", "plugin-zero")
class ZeroAgent(Agent):
    def __init__(self, action_dim):
        self.action_dim = action_dim

    def act(self, history):
        return torch.zeros(history.num_envs, self.action_dim)

    def new_history(self, num_envs):
        from simdist.planning.history import ObservationHistory

        return ObservationHistory(num_envs=num_envs, obs_spec={"state": (4,)}, history=1, action_dim=self.action_dim)

    def finetune(self, data, **kwargs):
        return self

    def save_pretrained(self, folder, **kwargs):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps({"agent_type": self.agent_type, "action_dim": self.action_dim}))
        return folder

    @classmethod
    def from_pretrained(cls, name_or_path, **kwargs):
        return cls(json.loads((Path(name_or_path) / "config.json").read_text())["action_dim"])
'''


def test_third_party_package_adds_a_task_and_an_agent(tmp_path: Path) -> None:
    """An installed distribution in group ``simdist.components`` registers both; the CLI runs them."""
    (tmp_path / "simdist_plugin_example.py").write_text(textwrap.dedent(PLUGIN))
    dist = tmp_path / "simdist_plugin_example-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: simdist-plugin-example\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[simdist.components]\nexample = simdist_plugin_example\n")
    (dist / "RECORD").write_text("")
    agent_dir = tmp_path / "zero-agent"
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    save = ("import simdist_plugin_example as p; p.ZeroAgent(2).save_pretrained(" + repr(str(agent_dir)) + ")")
    subprocess.run([sys.executable, "-c", save], check=True, env=env, timeout=120)
    listing = subprocess.run([sys.executable, "-m", "simdist.cli", "tasks"], capture_output=True, text=True,
                             env=env, timeout=120, check=True).stdout
    assert "plugin-reach" in listing
    out = subprocess.run([sys.executable, "-m", "simdist.cli", "evaluate", "--task", "plugin-reach", "--agent",
                          str(agent_dir), "--trials", "2", "--envs", "2", "--json"], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["task"] == "plugin-reach" and result["summary"]["trials"] == 2
    assert all(np.isfinite(result["values"]))


def test_bootstrap_interval_is_deterministic_and_honest() -> None:
    values = [0.1, 0.4, 0.35, 0.8, 0.2, 0.5]
    a, b = bootstrap_ci(values), bootstrap_ci(values)
    assert a == b and a.low < a.mean < a.high and a.n == 6
    assert a.mean == pytest.approx(np.mean(values))
    assert bootstrap_ci([0.3]).low == bootstrap_ci([0.3]).high == 0.3
    assert "n=6" in str(a)
    with pytest.raises(ValueError, match="non-finite"):
        bootstrap_ci([0.1, float("nan")])
    close = bootstrap_ci([0.42, 0.41, 0.45, 0.38])
    assert "no difference" in compare(a, close)
    far = bootstrap_ci([2.0, 2.1, 1.9, 2.05])
    assert "higher" in compare(a, far)


def test_evaluation_result_round_trip_and_table(tmp_path: Path) -> None:
    result = EvaluationResult(task="t", metric="m", values=[1.0, 2.0, 3.0, 4.0], success=[False, True, True, True],
                              groups=["a", "a", "b", "b"])
    table = result.table()
    assert "| a |" in table and "| all |" in table and "| 4 |" in table  # a trials column
    path = tmp_path / "r.json"
    path.write_text(json.dumps(result.to_dict()))
    assert EvaluationResult.load(path).values == result.values
    path.write_text("{}")
    with pytest.raises(ValueError, match="not an evaluation result"):
        EvaluationResult.load(path)
    with pytest.raises(ValueError, match="non-finite"):
        EvaluationResult(task="t", metric="m", values=[float("inf")], success=[False])
    with pytest.raises(ValueError, match="success has 1 entries for 2 trials"):
        EvaluationResult(task="t", metric="m", values=[1.0, 2.0], success=[True])
