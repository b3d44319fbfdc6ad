"""The baseline comparison's protocol at toy scale (results/baselines/compare.py): every method gets the same
real-data budget, the demos it is due, and its updates, counted from the run folders."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.helpers import episodes_of, toy_world_model

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def compare():
    spec = importlib.util.spec_from_file_location("baselines_compare", ROOT / "results" / "baselines" / "compare.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["baselines_compare"] = module
    spec.loader.exec_module(module)
    return module


def test_tiny_protocol_budgets(compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, single_thread) -> None:
    from simdist.components.tasks.toy_reach import generate_toy_dataset
    from simdist.data import read_dataset_info

    monkeypatch.setattr(compare, "ROOT", tmp_path)
    work = tmp_path / "outputs" / "baselines" / "toy-test"
    results = tmp_path / "results"
    generate_toy_dataset(str(work / "sim"), transitions=400, num_envs=2, seed=0, values="mc")
    model = str(toy_world_model(work / "sim").save_pretrained(tmp_path / "model"))
    tiny = {**compare.TASKS["toy-reach"], "schedule": [0, 2, 3],
            "eval": {"episodes_per_eval": 2, "num_envs": 2, "planner_preset": "paper",
                     "planner_overrides": {"num_samples": 8, "iterations": 1}},
            "simdist": {"epochs": 1, "windows_per_epoch": 64, "batch_size": 16, "lr": 2e-4, "warmup_steps": 2},
            "bc": {"hidden": [16], "steps": 4, "batch_size": 16, "lr": 1e-3}, "rl": {"hidden": [16], "batch_size": 16},
            "iql": {"pretrain_updates": 4}, "rlpd": {"utd": 2, "num_critics": 3}, "dp": {"steps": 2, "batch_size": 8,
                                                                                       "down_dims": [8, 16, 32]}}
    monkeypatch.setitem(compare.TASKS, "toy-test", tiny)
    paths = compare.shared("toy-test", tiny, work, model, 0, False)
    assert [read_dataset_info(paths[k])["num_episodes"] for k in ("demos20", "demos100")] == [20, 100]
    agents = ["simdist", "iql", "rlpd", "bc", "diffusion_policy"]
    for name in agents:
        run = compare.adapt if name in compare.ADAPTING else compare.flat
        run(name, "toy-test", paths, work, results, 0)
    summary = compare.summarize("toy-test", results, agents, [0])
    budgets = {name: a["budget"][0] for name, a in summary["agents"].items()}
    # the same real-data budget for every adapting method, the demos each is due, and the RL updates (utd x real
    # transitions, one round after every episode)
    assert {budgets[n]["real_episodes"] for n in ("simdist", "iql", "rlpd")} == {3}
    assert [budgets[n]["demos"] for n in agents] == [0, 20, 20, 100, 100]
    assert budgets["iql"]["updates"] == budgets["iql"]["real_steps"] - _timeouts(work / "seed-0" / "iql")
    assert budgets["rlpd"]["updates"] == 2 * (budgets["rlpd"]["real_steps"] - _timeouts(work / "seed-0" / "rlpd"))
    assert budgets["simdist"]["updates"] == 2 * (64 // 16)  # two finetuning stages of one epoch
    assert budgets["bc"]["real_episodes"] == 0 and summary["agents"]["bc"]["flat"]
    assert [p["x"] for p in summary["agents"]["iql"]["points"]] == [0, 2, 3]
    assert (results / "table.md").read_text().count("|") > 20 and (results / "success.png").stat().st_size > 0
    assert json.loads((results / "summary.json").read_text())["seeds"] == [0]


def _timeouts(run: Path) -> int:
    """Episodes of a run that ended neither in success nor a fall: their last step has no next observation."""
    return sum(not (ep.meta["success"] or ep.meta.get("terminated")) for ep in episodes_of(run / "real-data"))
