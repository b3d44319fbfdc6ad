"""The value head on the model's own imagined λ-returns (``value-rank fit --objective imagined``) and the candidates'
reached observations (``value-rank collect --observations``, the split's true latents): a real collection on the
toy (random-init model, tiny scale: the plumbing, not a result), the λ-returns' ends, training that moves only the
value head and lowers the regression it optimises, and the command's refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import mppi_agent

from simdist.cli import main as cli_main
from simdist.components.agents.simdist.modeling import SimDistAgent
from simdist.diagnostics.mechanism import MechanismConfig
from simdist.tasks import make_task
from simdist.training.candidate_ranking import (
    CandidateSet,
    collect_candidate_set,
    score_candidates,
    train_on_states,
)
from simdist.training.imagined_value import ImaginedValueModule, lambda_returns

pytestmark = pytest.mark.usefixtures("single_thread")


def test_lambda_returns_are_td_at_zero_and_the_discounted_rollout_at_one() -> None:
    g = torch.Generator().manual_seed(0)
    rewards, values = torch.randn(3, 5, generator=g), torch.randn(3, 5, generator=g)
    gamma = 0.9
    one_step = lambda_returns(rewards, values, gamma=gamma, lam=0.0)
    torch.testing.assert_close(one_step[:, :-1], rewards[:, 1:] + gamma * values[:, 1:])
    whole = lambda_returns(rewards, values, gamma=gamma, lam=1.0)
    discount = gamma ** torch.arange(4, dtype=rewards.dtype)
    torch.testing.assert_close(whole[:, 0], (rewards[:, 1:] * discount).sum(1) + gamma ** 4 * values[:, -1])
    torch.testing.assert_close(whole[:, -1], values[:, -1])  # the bootstrap latent keeps its own value
    shifted = lambda_returns(rewards, values, gamma=gamma, lam=0.0, offset=1)  # V(ẑ_j) pairs with r̂_{j+1}
    torch.testing.assert_close(shifted[:, :-2], rewards[:, 2:] + gamma * values[:, 1:-1])
    with pytest.raises(ValueError, match="lam"):
        lambda_returns(rewards, values, gamma=gamma, lam=1.5)


def _agent(seed: int = 0) -> SimDistAgent:
    return mppi_agent("toy", "manipulation", seed, num_samples=16, iterations=2)


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> tuple[CandidateSet, Path]:
    task = make_task("toy-reach", profile="sim")
    data = collect_candidate_set(task, _agent(), MechanismConfig(states=4, candidates=4, every=3, num_envs=2, seed=0),
                                 parts=True, observations=True)
    path = data.save(tmp_path_factory.mktemp("imagined") / "set.safetensors")
    return data, path


def test_the_set_keeps_each_candidates_reached_observations(collected: tuple[CandidateSet, Path]) -> None:
    data, path = collected
    s, k, t = data.candidates.shape[:3]
    assert {name: tuple(v.shape[:3]) for name, v in data.observations.items()} == {"state": (s, k, t)}
    back = CandidateSet.load(path)
    assert torch.equal(back.observations["state"], data.observations["state"])
    assert torch.equal(back.rows([2]).observations["state"][0], data.observations["state"][2])
    # the candidates really differ, and so do the observations they reached
    assert not torch.equal(data.observations["state"][:, 0], data.observations["state"][:, 1])
    report = score_candidates({"m": _agent().world_model}, data, true_latents=True)
    control = report["scores"]["m"]["true_latents"]
    assert control["rho_value_on_true"]["n"] == s and np.isfinite(control["value_spread_on_true"]["mean"])
    with pytest.raises(ValueError, match="observations"):
        score_candidates({"m": _agent().world_model}, data.rows([0]).__class__(
            data.obs_hist, data.act_hist, data.command, data.candidates, data.returns, data.parts), true_latents=True)


def test_imagined_fit_moves_only_the_value_head_toward_its_returns(collected: tuple[CandidateSet, Path]) -> None:
    data, _ = collected
    wm = _agent().world_model
    before = {k: v.clone() for k, v in wm.state_dict().items()}
    # a target that barely follows: the λ-returns stay those of the starting head, so the regression must fall
    module = ImaginedValueModule(wm, data, gamma=0.99, lam=0.95, lr=3e-3, steps=40, level_weight=0.1, ema=1e-6,
                                 anchor_weight=0.0)
    assert module.policy_steps == wm.config.horizon  # the toy's encoder lets the policy head act in imagination
    with torch.no_grad():
        start = module.losses(data)
    train_on_states(module, len(data), steps=40, batch_states=4, seed=0)
    with torch.no_grad():
        end = module.losses(data)
    assert float(end["within"]) < 0.5 * float(start["within"])
    changed = {k.split(".")[0] for k, v in wm.state_dict().items() if not torch.equal(v, before[k])}
    assert changed == {"value"}
    # the anchor is the starting head: a trained head has moved away from it, the frozen copy has not
    assert float(end["anchor"]) > 0.0 and float(start["anchor"]) == pytest.approx(0.0, abs=1e-10)


def test_command_refuses_other_components_and_a_target_that_never_moves(
        collected: tuple[CandidateSet, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, path = collected
    model = tmp_path / "model"
    _agent().save_pretrained(model)
    base = ["value-rank", "fit", "--agent", str(model), "--data", str(path), "--objective", "imagined",
            "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit):
        cli_main([*base, "--train", "score_heads"])
    assert "--objective imagined trains the value head alone" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main([*base, "--ema", "0"])
    assert "--ema 0" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert cli_main([*base, "--steps", "2", "--batch-states", "4"]) == 0
    assert (tmp_path / "out" / "value_rank.json").is_file()
