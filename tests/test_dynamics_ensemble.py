"""``dynamics/ensemble`` and MPPI's disagreement penalty, on real tiny world models (beyond the paper)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import simdist
from simdist import FreezePolicy, WorldModel, WorldModelLoss
from simdist.components.agents.simdist import SimDistAgent, SimDistAgentConfig
from simdist.diagnostics.mechanism import VisitedStates, planner_disagreement, predicted_returns
from simdist.model.types import Imagination
from simdist.planning import ObservationHistory, discounted_return, plan_score
from tests.helpers import random_batch, toy_history

pytestmark = pytest.mark.usefixtures("single_thread")

MEMBER = {"name": "mlp", "kwargs": {"hidden": [128, 128]}}  # the toy preset's own dynamics
SMALL = dict(num_samples=16, iterations=2, num_elites=4)


def ensemble(members: int = 3, member: dict | None = None) -> dict:
    return {"name": "ensemble", "kwargs": {"members": members, "member": member or MEMBER}}


def toy(members: int = 3, seed: int = 0) -> WorldModel:
    torch.manual_seed(seed)
    return WorldModel.from_preset("toy", dynamics=ensemble(members)).eval()


def history(wm: WorldModel, batch: int = 2, seed: int = 1) -> ObservationHistory:
    return toy_history(wm, batch, seed)


def member_model(wm: WorldModel, k: int) -> WorldModel:
    """A single-dynamics toy model holding ``wm``'s weights with member ``k`` as its dynamics."""
    single = WorldModel.from_preset("toy").eval()
    prefix = f"dynamics.members.{k}."
    state = {("dynamics." + key[len(prefix):] if key.startswith(prefix) else key): value
             for key, value in wm.state_dict().items()
             if key.startswith(prefix) or not key.startswith("dynamics.")}
    single.load_state_dict(state)
    return single


def test_forward_is_the_mean_of_forward_members_and_members_differ_at_init() -> None:
    torch.manual_seed(0)
    dyn = simdist.create("dynamics", "ensemble", latent_dim=8, action_dim=2, members=3,
                         member={"name": "mlp", "kwargs": {"hidden": [16]}})
    z0, actions = torch.randn(4, 8), torch.randn(4, 6, 5, 2)
    prepared = dyn.prepare(None)
    members = dyn.forward_members(prepared, z0, actions)
    assert members.shape == (3, 4, 6, 5, 8)
    torch.testing.assert_close(dyn(prepared, z0, actions), members.mean(0))
    assert not dyn.uses_action_embedding
    first, second = (dict(m.named_parameters()) for m in dyn.members[:2])
    assert all(not torch.equal(first[name], second[name]) for name in first if name.endswith("weight"))
    assert not torch.allclose(members[0], members[1])


def test_transformer_members_keep_their_own_prepared_context() -> None:
    wm = WorldModel.from_preset("toy", dynamics=ensemble(2, {"name": "transformer",
                                                            "kwargs": {"num_layers": 1, "num_heads": 2}})).eval()
    assert wm.dynamics.uses_action_embedding and wm.action_embedding is not None
    batch = random_batch(wm.config)
    encoding = wm.encode(batch["obs_hist"], batch["act_hist"])
    prepared = wm.dynamics.prepare(encoding)
    assert len(prepared) == 2 and not torch.equal(prepared[0][0][0], prepared[1][0][0])
    with torch.no_grad():
        pred = wm.predict(batch)
    assert pred.member_latents.shape == (2, 3, 8, 32)
    torch.testing.assert_close(pred.latents, pred.member_latents.mean(0))


@pytest.mark.parametrize("members", [1, 0, True, 2.0, "3"])
def test_bad_member_counts_are_refused_naming_the_option(members) -> None:
    with pytest.raises(ValueError, match="members must be an integer >= 2"):
        WorldModel.from_preset("toy", dynamics=ensemble(members))


def test_an_ensemble_of_ensembles_is_refused() -> None:
    with pytest.raises(ValueError, match="member must name a single dynamics"):
        WorldModel.from_preset("toy", dynamics=ensemble(2, ensemble(2)))


def test_predict_imagine_and_disagreement() -> None:
    wm = toy()
    assert wm.dynamics_members == 3 and WorldModel.from_preset("toy").dynamics_members == 1
    batch = random_batch(wm.config)
    with torch.no_grad():
        pred = wm.predict(batch)
        assert pred.member_latents.shape == (3, 3, 8, 32)
        torch.testing.assert_close(pred.latents, pred.member_latents.mean(0))
        encoding = wm.encode(batch["obs_hist"], batch["act_hist"])
        actions = torch.rand(3, 5, 8, 2) * 2 - 1
        im = wm.imagine(encoding, actions)
        members = wm.dynamics.forward_members(wm.dynamics.prepare(encoding), encoding.z,
                                              wm.normalizer.normalize("actions", actions))
    assert im.disagreement.shape == (3, 5, 8) and bool((im.disagreement > 0).all())
    spread = ((members - members.mean(0)) ** 2).mean(0).sqrt().mean(-1)  # population std over members
    torch.testing.assert_close(im.disagreement, spread)
    single = WorldModel.from_preset("toy").eval()
    with torch.no_grad():
        assert single.imagine(single.encode(batch["obs_hist"], batch["act_hist"]), actions).disagreement is None
        assert single.predict(batch).member_latents is None
    for m in wm.dynamics.members[1:]:  # identical members agree: no disagreement
        m.load_state_dict(wm.dynamics.members[0].state_dict())
    with torch.no_grad():
        same = wm.imagine(encoding, actions)
    torch.testing.assert_close(same.disagreement, torch.zeros_like(same.disagreement), atol=1e-6, rtol=0)


def test_the_dynamics_loss_is_the_mean_of_each_members_own_loss() -> None:
    wm = toy()
    batch = random_batch(wm.config, seed=3)
    loss = WorldModelLoss.dynamics_only()
    ensemble_term = loss(wm, batch)["dynamics"]
    singles = [member_model(wm, k) for k in range(3)]
    own = [loss(s, batch)["dynamics"] for s in singles]
    torch.testing.assert_close(ensemble_term, torch.stack(own).mean())
    with torch.no_grad():
        of_the_mean = (wm.predict(batch, heads=False).latents - wm.consistency_targets(batch)).pow(2).mean()
    assert not torch.allclose(ensemble_term, of_the_mean)  # not trained through the members' mean
    ensemble_term.backward()
    own[1].backward()  # member 1's gradient is its own loss's, scaled by 1/K
    for (name, p), q in zip(wm.dynamics.members[1].named_parameters(), singles[1].dynamics.parameters()):
        torch.testing.assert_close(p.grad, q.grad / 3, msg=name)


def test_dynamics_only_finetuning_trains_every_member_and_nothing_else() -> None:
    wm = toy().train()
    policy = FreezePolicy.parse("dynamics_only")
    policy.apply(wm)
    policy.set_modes(wm, training=True)
    before = {k: v.clone() for k, v in wm.state_dict().items()}
    opt = torch.optim.Adam([p for p in wm.parameters() if p.requires_grad], lr=1e-2)
    loss = WorldModelLoss.dynamics_only()(wm, random_batch(wm.config, seed=1))["loss"]
    opt.zero_grad()
    loss.backward()
    opt.step()
    after = wm.state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert all(k.startswith("dynamics.") for k in changed)
    for k in range(3):
        params = [n for n, _ in wm.dynamics.members[k].named_parameters()]
        assert all(f"dynamics.members.{k}.{n}" in changed for n in params), k


def test_save_and_load_round_trip(tmp_path) -> None:
    wm = toy()
    batch = random_batch(wm.config)
    wm.save_pretrained(tmp_path / "m")
    again = WorldModel.from_pretrained(tmp_path / "m").eval()
    assert again.dynamics_members == 3
    assert json.loads((tmp_path / "m" / "config.json").read_text())["dynamics"] == ensemble(3)
    with torch.no_grad():
        encoding, actions = wm.encode(batch["obs_hist"], batch["act_hist"]), torch.rand(3, 4, 8, 2)
        a = wm.imagine(encoding, actions)
        b = again.imagine(again.encode(batch["obs_hist"], batch["act_hist"]), actions)
    for field in ("latents", "rewards", "values", "disagreement"):
        torch.testing.assert_close(getattr(a, field), getattr(b, field), rtol=0, atol=0)


def test_plan_score_subtracts_the_discounted_disagreement() -> None:
    rewards, values = torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[0.0, 0.0, 4.0]])
    u = torch.tensor([[0.5, 1.0, 2.0]])
    im = Imagination(latents=torch.zeros(1, 3, 1), rewards=rewards, values=values, disagreement=u)
    g, lam = 0.9, 0.3
    expected = 1 + 2 * g + 3 * g**2 + 4 * g**4 - lam * (0.5 + 1.0 * g + 2.0 * g**2)  # value_offset 1: γ^(T+1)
    torch.testing.assert_close(plan_score(im, g, 1, lam), torch.tensor([expected]))
    torch.testing.assert_close(plan_score(im, g, 1), discounted_return(rewards, values, g, 1))
    with pytest.raises(ValueError, match="disagreement"):
        plan_score(Imagination(latents=im.latents, rewards=rewards, values=values), g, 0, lam)


def test_mppi_scores_return_minus_disagreement_and_the_ranking_diagnostic_agrees() -> None:
    wm, lam = toy(), 0.5
    hist = history(wm)
    planner = simdist.create("planner", "mppi", world_model=wm, disagreement=lam, keep_candidates=True, **SMALL)
    result = planner.plan(hist)
    candidates, scores = result.diagnostics["candidates"], result.diagnostics["candidate_returns"]
    obs, act, cmd = hist.as_inputs()
    with torch.no_grad():
        im = wm.imagine(wm.encode(obs, act), candidates, last_value_only=True)
    gammas = 0.99 ** torch.arange(8.0)
    by_hand = (im.rewards * gammas).sum(-1) + 0.99**8 * im.values[..., -1] - lam * (im.disagreement * gammas).sum(-1)
    torch.testing.assert_close(scores, by_hand, rtol=1e-5, atol=1e-5)
    visited = VisitedStates(states=None, obs_hist=obs, act_hist=act, command=cmd, candidates=candidates)
    np.testing.assert_allclose(predicted_returns(wm, visited, 0.99, disagreement=lam), scores.numpy(),
                               rtol=1e-4, atol=1e-4)
    naive = simdist.create("planner", "mppi_naive", world_model=wm, disagreement=lam, **SMALL)
    torch.testing.assert_close(naive.plan(hist).plan, simdist.create(
        "planner", "mppi", world_model=wm, disagreement=lam, **SMALL).plan(hist).plan, atol=1e-4, rtol=0)
    with torch.no_grad():  # a heavy penalty ranks first the candidate the members agree on most
        u = (im.disagreement * gammas).sum(-1)
        assert torch.equal(plan_score(im, 0.99, 0, 1e6).argmax(1), u.argmin(1))


def test_a_penalty_without_an_ensemble_or_out_of_range_is_refused() -> None:
    single = WorldModel.from_preset("toy")
    with pytest.raises(ValueError, match="disagreement=0.5 .*single dynamics"):
        simdist.create("planner", "mppi", world_model=single, disagreement=0.5)
    simdist.create("planner", "mppi", world_model=single, disagreement=0.0)  # no penalty: fine
    for bad in (-0.1, float("nan"), float("inf"), "1", True):
        with pytest.raises(ValueError, match="disagreement.*a finite number >= 0"):
            simdist.create("planner", "mppi", world_model=toy(2), disagreement=bad)


def test_planner_settings_round_trip_through_planner_json(tmp_path) -> None:
    wm = toy(2)
    agent = SimDistAgent(wm, SimDistAgentConfig.from_planner_dict({"planner": "mppi", "disagreement": 0.25,
                                                                   "temporal_ensemble": 0.5, **SMALL}))
    agent.save_pretrained(tmp_path / "agent")
    assert json.loads((tmp_path / "agent" / "planner.json").read_text())["disagreement"] == 0.25
    loaded = SimDistAgent.from_pretrained(tmp_path / "agent")
    assert loaded.planner.disagreement == 0.25 and planner_disagreement(loaded) == 0.25
    assert loaded.with_settings(disagreement=0.75).planner.disagreement == 0.75
    assert planner_disagreement(SimDistAgent(WorldModel.from_preset("toy"))) == 0.0
    assert planner_disagreement(object()) == 0.0
    torch.testing.assert_close(loaded.with_settings(seed=3).act(history(wm)), agent.with_settings(seed=3).act(
        history(wm)))


def test_the_ranking_diagnostic_scores_with_each_agents_own_penalty() -> None:
    from simdist.diagnostics.mechanism import MechanismConfig, run_mechanism, visit_states
    from simdist.tasks import make_task

    task = make_task("toy-reach", profile="real")
    task.expert_steps = 20
    wm = toy(2)
    wm.normalizer.set_stats({k: {"mean": [0.0] * wm.normalizer.mean(k).numel(),
                                 "std": [1.0] * wm.normalizer.mean(k).numel()} for k in wm.normalizer.keys})
    settings = {"planner": "mppi", "num_samples": 8, "iterations": 2, "num_elites": 4}
    penalised = SimDistAgent(wm, SimDistAgentConfig.from_planner_dict({**settings, "disagreement": 2.0}))
    plain = penalised.with_settings(disagreement=0.0)
    cfg = MechanismConfig(states=3, candidates=4, every=2, num_envs=2, seed=0)
    report = run_mechanism(task, penalised, {"penalised": penalised, "plain": plain}, cfg)
    visited = visit_states(task, penalised, cfg)  # the same states and candidates, from the same seed
    for name, lam in (("penalised", 2.0), ("plain", 0.0)):
        np.testing.assert_allclose(report["models"][name]["predicted_returns"],
                                   predicted_returns(wm, visited, cfg.gamma, lam), atol=1e-4)
    gap = np.array(report["models"]["plain"]["predicted_returns"]) - report["models"]["penalised"]["predicted_returns"]
    assert (gap > 0).all()


def test_toy_demo_trains_and_plans_with_an_ensemble_and_a_penalty(tmp_path) -> None:
    from simdist.cli import main
    from simdist.components.tasks.toy_reach.demo import TEST, ToyOptions, run_toy_pipeline
    from simdist.errors import InputError

    results = run_toy_pipeline(tmp_path / "run", TEST, seed=0, progress=False,
                               options=ToyOptions(ensemble=2, disagreement=0.5))
    assert results["options"]["ensemble"] == 2 and results["options"]["disagreement"] == 0.5
    assert results["dynamics"] == ensemble(2, {"name": "mlp", "kwargs": {"hidden": [128, 128], "action_context": 4}})
    assert json.loads((tmp_path / "run" / "results.json").read_text()) == json.loads(json.dumps(results))
    assert all(np.isfinite(v) for v in results["return"].values())
    sim = WorldModel.from_pretrained(tmp_path / "run" / "toy-sim").state_dict()
    real = WorldModel.from_pretrained(tmp_path / "run" / "toy-real").state_dict()
    changed = {k for k in sim if not torch.equal(sim[k], real[k])}
    assert {k.split(".")[2] for k in changed} == {"0", "1"} and all(k.startswith("dynamics.members.") for k in changed)
    with pytest.raises(InputError, match="--ensemble 1: .* has 2 dynamics member"):
        run_toy_pipeline(tmp_path / "again", TEST, progress=False, pretrained=tmp_path / "run" / "toy-sim")
    for flags in (["--option", "disagreement=0.5"], ["--option", "ensemble=0"],
                  ["--option", "ensemble=2", "--option", "disagreement=-1"]):
        with pytest.raises(SystemExit):
            main(["demo", "--task", "toy-reach", *flags, "--out", str(tmp_path / "x")])
    assert not (tmp_path / "again").exists() and not (tmp_path / "x").exists()
