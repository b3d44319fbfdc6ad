"""Ranking distillation (``simdist value-rank``, docs/ranking.md): the listwise loss and the parts' regression,
the toy's critic truth against its expert's continuation on the same candidates, training that moves only the
reward and value heads, the sharded collection (spread over processes, resumed) and the held-out score report.
Random-init toy model at tiny scale: the plumbing and the losses, not a result."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import mppi_agent

from simdist.cli import main as cli_main
from simdist.components.agents.simdist.modeling import SimDistAgent
from simdist.diagnostics.mechanism import MechanismConfig, true_return_parts, visit_states
from simdist.tasks import TaskError, make_task
from simdist.training.candidate_ranking import (
    CandidateSet,
    collect_candidate_set,
    fit_candidate_ranking,
    listwise_loss,
    loss_scales,
    parts_loss,
    score_candidates,
)


def test_listwise_loss_ignores_each_states_offset_and_punishes_a_wrong_order() -> None:
    truth = torch.tensor([[1.0, 2.0, 3.0, 4.0], [10.0, 0.0, 5.0, 2.0]])
    shifted = truth + torch.tensor([[7.0], [-3.0]])
    assert float(listwise_loss(shifted, truth, temperature=1.0)) == pytest.approx(0.0, abs=1e-6)
    flat = listwise_loss(torch.zeros_like(truth), truth, temperature=1.0)
    reversed_ = listwise_loss(truth.flip(1), truth, temperature=1.0)
    assert 0.0 < float(flat) < float(reversed_)
    # a lower temperature weighs the top of the list more: the same flat scores cost more
    assert float(listwise_loss(torch.zeros_like(truth), truth, temperature=0.5)) > float(flat)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        listwise_loss(truth, truth, temperature=0.0)


def test_parts_loss_is_zero_on_the_true_parts_and_sees_a_swap_between_them() -> None:
    horizon = torch.tensor([[1.0, 2.0, 0.5], [3.0, 1.0, 2.0]])
    tail = torch.tensor([[4.0, 1.0, 2.0], [0.0, 5.0, 1.0]])
    units = {"within_scale": 1.0, "level_scale": 1.0, "level_weight": 0.1}
    assert float(parts_loss(horizon, tail, horizon, tail, **units)) == pytest.approx(0.0, abs=1e-9)
    # the whole score is right but its parts are swapped: the regression of the parts still sees it
    assert float(parts_loss(tail, horizon, horizon, tail, **units)) > 1.0


def _agent() -> SimDistAgent:
    return mppi_agent("toy", "paper", num_samples=16, iterations=2)


CFG = MechanismConfig(states=6, candidates=4, every=3, num_envs=3, seed=0)


@pytest.fixture(scope="module")
def expert_set() -> CandidateSet:
    """States and candidates with the expert's continuation as truth, its parts kept (no critic to fit: fast)."""
    return collect_candidate_set(make_task("toy-reach", profile="sim"), _agent(), CFG, parts=True)


@pytest.mark.slow  # fits the toy's critic (2 x 460 steps of 48 expert envs, 300 epochs): ~10-20 s on 2 cores
def test_critic_truth_shares_the_horizon_with_the_experts_and_ends_with_the_critic() -> None:
    task = make_task("toy-reach", profile="sim")
    data = collect_candidate_set(task, _agent(), CFG, truth="critic")
    assert len(data) == 6 and set(data.parts) == {"horizon", "tail"}
    assert torch.allclose(data.parts["horizon"] + data.parts["tail"], data.returns, atol=1e-4)
    # the same states and candidates (same seed), their expert continuation: identical horizon part
    visited = visit_states(task, _agent(), CFG)
    assert torch.equal(visited.candidates, data.candidates)
    expert = true_return_parts(task, visited, CFG)
    assert np.allclose(expert["horizon"], data.parts["horizon"].numpy(), atol=1e-4)
    # the critic approximates the expert's 400-step tail (the toy's returns are about 0-20)
    assert np.abs(expert["tail"] - data.parts["tail"].numpy()).mean() < 3.0
    with pytest.raises(TaskError, match="fitted on the training simulator"):
        collect_candidate_set(make_task("toy-reach", profile="real"), _agent(), CFG, truth="critic")
    with pytest.raises(ValueError, match="truth must be one of"):
        collect_candidate_set(task, _agent(), CFG, truth="oracle")


def test_listnet_fit_moves_only_the_score_heads_and_lowers_its_loss(expert_set: CandidateSet, tmp_path: Path) -> None:
    data = expert_set
    assert set(data.parts) == {"horizon", "tail"}
    assert torch.allclose(data.parts["horizon"] + data.parts["tail"], data.returns, atol=1e-4)
    agent = _agent()
    wm = agent.world_model
    before = {k: v.clone() for k, v in wm.state_dict().items()}

    def losses() -> tuple[float, float]:
        report = score_candidates({"m": wm}, data)["scores"]["m"]
        return report["within_state_error_rms"]["mean"], report["split"]["value_error"]["mean"]

    within0, value0 = losses()
    fit_candidate_ranking(wm, data, steps=40, batch_states=6, lr=3e-3, seed=0, objective="listnet",
                          trainable="score_heads", temperature=1.0)
    within1, value1 = losses()
    assert within1 < within0 and value1 < value0
    changed = {k.split(".")[0] for k, v in wm.state_dict().items() if not torch.equal(v, before[k])}
    assert changed == {"reward", "value"}
    path = data.save(tmp_path / "set.safetensors")
    back = CandidateSet.load(path)
    assert torch.equal(back.parts["horizon"], data.parts["horizon"]) and loss_scales(back.returns)[0] > 0
    assert set(CandidateSet.concat([back, back.rows([0])]).parts) == {"horizon", "tail"}


def test_sharded_collection_spreads_resumes_and_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "model"
    _agent().save_pretrained(model)
    shards = tmp_path / "shards"
    common = ["value-rank", "collect", "--task", "toy-reach", "--profile", "sim", "--agent", str(model),
              "--truth", "expert", "--parts", "--shards", "3", "--states", "2", "--candidates", "3", "--every", "3",
              "--envs", "2", "--seed", "5", "--out", str(shards), "--world", "2"]
    assert cli_main([*common, "--rank", "1"]) == 0
    assert sorted(p.name for p in shards.glob("*.safetensors")) == ["shard-0001.safetensors"]
    assert cli_main([*common, "--rank", "0"]) == 0
    assert sorted(p.name for p in shards.glob("*.safetensors")) == [f"shard-000{i}.safetensors" for i in range(3)]
    sidecar = json.loads((shards / "shard-0002.json").read_text())
    assert sidecar["seed"] == 7 and sidecar["truth"] == "expert" and sidecar["cpu_seconds_per_state"] > 0
    capsys.readouterr()
    assert cli_main([*common, "--rank", "0"]) == 0  # resumed: every shard of rank 0 is kept
    assert capsys.readouterr().out.count("exists: kept") == 2
    out = tmp_path / "score.json"
    assert cli_main(["value-rank", "score", "--model", f"m={model}", "--data", str(shards), "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["truth"]["states"] == 6 and report["scores"]["m"]["spearman"]["n"] == 6
    assert "rho_value" in report["scores"]["m"]["split"]
    with pytest.raises(SystemExit):
        cli_main([*common, "--rank", "2"])
    assert "--rank 2: must be below --world 2" in capsys.readouterr().err
