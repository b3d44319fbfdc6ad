"""Value-head finetuning on the planner's candidates (``simdist value-rank``): the within-state loss, a real
collection on the UR5e peg (random-init model, tiny scale: the plumbing, not a result), training that moves only
the value head and lowers the loss it optimises, the set's file round trip, and the command's refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import mppi_agent

from simdist.cli import main as cli_main
from simdist.components.agents.simdist.modeling import SimDistAgent
from simdist.diagnostics.mechanism import MechanismConfig, predicted_returns
from simdist.tasks import make_task
from simdist.training.candidate_ranking import (
    CandidateSet,
    collect_candidate_set,
    fit_candidate_ranking,
    loss_scales,
    ranking_loss,
)


def test_ranking_loss_ignores_each_states_offset_but_not_the_order() -> None:
    truth = torch.tensor([[1.0, 2.0, 3.0], [10.0, 0.0, 5.0]])
    shifted = truth + torch.tensor([[7.0], [-3.0]])
    unit = {"within_scale": 1.0, "level_scale": 1.0}
    loss, within, level = ranking_loss(shifted, truth, **unit, level_weight=0.0)
    assert float(within) == pytest.approx(0.0, abs=1e-9) and float(loss) == pytest.approx(0.0, abs=1e-9)
    assert float(level) == pytest.approx((49 + 9) / 2)
    _, reversed_within, _ = ranking_loss(truth.flip(1), truth, **unit, level_weight=0.0)
    assert float(reversed_within) > 1.0
    assert loss_scales(torch.ones(2, 3)) == (1.0, 1.0)  # no spread: the units stay 1
    assert loss_scales(truth)[1] == pytest.approx(float(truth.std(correction=0)))


def _agent() -> SimDistAgent:
    return mppi_agent("ur5e-peg", "manipulation", num_samples=8, iterations=2)


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> tuple[CandidateSet, Path]:
    task = make_task("ur5e-peg", profile="sim")
    data = collect_candidate_set(task, _agent(), MechanismConfig(states=4, candidates=4, every=3, num_envs=2, seed=0))
    path = data.save(tmp_path_factory.mktemp("ranked") / "set.safetensors")
    return data, path


def test_collected_set_round_trips_and_is_checked(collected: tuple[CandidateSet, Path]) -> None:
    data, path = collected
    assert len(data) == 4 and tuple(data.candidates.shape) == (4, 4, 5, 7) and torch.isfinite(data.returns).all()
    back = CandidateSet.load(path)
    assert torch.equal(back.returns, data.returns) and torch.equal(back.obs_hist["proprio"], data.obs_hist["proprio"])
    assert len(CandidateSet.concat([data, back.rows([0, 2])])) == 6
    with pytest.raises(ValueError, match="not finite"):
        CandidateSet(data.obs_hist, data.act_hist, data.command, data.candidates, data.returns * float("nan"))
    with pytest.raises(ValueError, match="4 states x 4 candidates"):
        CandidateSet(data.obs_hist, data.act_hist[:3], data.command, data.candidates, data.returns)
    with pytest.raises(FileNotFoundError, match="no candidate set"):
        CandidateSet.load(path.with_name("absent.safetensors"))


def test_fit_trains_only_the_value_head_and_lowers_its_loss(collected: tuple[CandidateSet, Path]) -> None:
    data, _ = collected
    agent = _agent()
    wm = agent.world_model
    before = {k: v.clone() for k, v in wm.state_dict().items()}
    visited = _visited(data)
    within_scale, level_scale = loss_scales(data.returns)
    score0 = torch.as_tensor(predicted_returns(wm, visited, 0.99), dtype=torch.float32)
    units = {"within_scale": within_scale, "level_scale": level_scale, "level_weight": 0.1}
    within0 = float(ranking_loss(score0, data.returns, **units)[1])
    fit_candidate_ranking(wm, data, steps=30, batch_states=4, lr=3e-3, seed=0)
    score1 = torch.as_tensor(predicted_returns(wm, visited, 0.99), dtype=torch.float32)
    within1 = float(ranking_loss(score1, data.returns, **units)[1])
    assert within1 < 0.5 * within0
    changed = {k.split(".")[0] for k, v in wm.state_dict().items() if not torch.equal(v, before[k])}
    assert changed == {"value"}


def _visited(data: CandidateSet):  # type: ignore[no-untyped-def]
    from simdist.diagnostics.mechanism import VisitedStates

    return VisitedStates(states=None, obs_hist=data.obs_hist, act_hist=data.act_hist, command=data.command,
                         candidates=data.candidates)


def test_command_refuses_bad_input_before_any_work(collected: tuple[CandidateSet, Path], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _, path = collected
    model = tmp_path / "model"
    _agent().save_pretrained(model)
    with pytest.raises(SystemExit):
        cli_main(["value-rank", "fit", "--agent", str(model), "--data", str(tmp_path / "none.safetensors"),
                  "--out", str(tmp_path / "out")])
    assert "--data: no candidate set" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["value-rank", "fit", "--agent", str(model), "--data", str(path), "--out", str(tmp_path / "out"),
                  "--lr", "0"])
    assert "argument --lr: must be > 0" in capsys.readouterr().err  # at parse time
    with pytest.raises(SystemExit):
        cli_main(["value-rank", "fit", "--agent", str(model), "--data", str(path), "--out", str(tmp_path / "o"),
                  "--train", "valu"])
    assert "freeze='valu'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "o").exists()
    assert cli_main(["value-rank", "nothing"]) == 2


def test_command_fits_and_writes_a_planning_agent(collected: tuple[CandidateSet, Path], tmp_path: Path) -> None:
    _, path = collected
    model = tmp_path / "model"
    _agent().save_pretrained(model)
    out = tmp_path / "ranked"
    assert cli_main(["value-rank", "fit", "--agent", str(model), "--data", f"{path},{path}", "--out", str(out),
                     "--steps", "3", "--batch-states", "4"]) == 0
    assert {"config.json", "model.safetensors", "planner.json", "value_rank.json", "training_metrics.csv"} <= {
        p.name for p in out.iterdir()}
    assert not any(p.name.startswith(".ranked") for p in tmp_path.iterdir())
    loaded = SimDistAgent.from_pretrained(out)
    assert np.isfinite(predicted_returns(loaded.world_model, _visited(CandidateSet.load(path)), 0.99)).all()
