"""Value expansion (``value_expansion`` K): the policy head acts K imagined steps after a candidate's horizon and
the value is read there (tiny models, CPU)."""

from __future__ import annotations

import pytest
import torch

import simdist
from simdist import WorldModel
from simdist.components.planners.mppi import MPPIPlanner
from simdist.model.expansion import check_expansion, expand_imagination
from simdist.planning.base import eval_mode, plan_score
from tests.helpers import tiny_config
from tests.test_planners import history_for, tiny_model

pytestmark = pytest.mark.usefixtures("single_thread")

MLP_DYNAMICS = {"name": "mlp", "kwargs": {"hidden": [32], "action_context": 2}}


def model(seed: int = 0, **overrides) -> WorldModel:
    torch.manual_seed(seed)
    wm = WorldModel(tiny_config(**overrides))
    return wm.eval()


def test_an_assembled_window_is_the_encoding_of_the_same_observations():
    wm = model(command_dim=0)
    h, t = wm.config.history, wm.config.horizon
    g = torch.Generator().manual_seed(0)
    obs = {"state": torch.randn(2, h + 1 + t, 4, generator=g)}
    acts = torch.rand(2, h + t, 2, generator=g) * 2 - 1
    with torch.no_grad():
        later = wm.encode({"state": obs["state"][:, t:]}, acts[:, t:])  # the window t steps on, encoded
        latents = wm.encode_latent(obs)  # every step's E(o)
        acts_n = wm.normalizer.normalize("actions", acts)
        assembled = wm.encoder.from_latents(latents[:, t:t + h], latents[:, t + h], acts_n[:, t:])
    torch.testing.assert_close(assembled.context, later.context)
    torch.testing.assert_close(assembled.latent, later.latent)
    torch.testing.assert_close(wm.policy_actions(assembled), wm.policy_actions(later))


def test_the_expansion_continues_the_candidates_with_the_policy_chunk_of_the_imagined_window():
    wm = model(dynamics=MLP_DYNAMICS, command_dim=0, action_low=[-1.0, -1.0], action_high=[1.0, 1.0])
    hist = history_for(wm, 2)
    obs, act, _ = hist.as_inputs()
    t, k = wm.config.horizon, 2
    actions = torch.rand(2, 5, t, 2, generator=torch.Generator().manual_seed(1)) * 2 - 1
    with eval_mode(wm):
        encoding = wm.encode(obs, act)
        im = wm.imagine(encoding, actions, last_value_only=True)
        ex = expand_imagination(wm, encoding, im, actions, None, k)
        # the extension's actions: the policy head's chunk from the window at t+T, assembled from imagined latents
        series = torch.cat([encoding.obs_latents[:, None].expand(-1, 5, -1, -1),
                            encoding.z[:, None, None].expand(-1, 5, 1, -1), im.latents], dim=2)
        past = torch.cat([encoding.actions[:, None].expand(-1, 5, -1, -1),
                          wm.normalizer.normalize("actions", actions)], dim=2)
        h = wm.config.history
        window = wm.encoder.from_latents(series[:, :, t:t + h].flatten(0, 1), series[:, :, t + h].flatten(0, 1),
                                         past[:, :, t:t + h].flatten(0, 1))
        chunk = wm.policy_actions(window).clamp(-1.0, 1.0)[:, :k].reshape(2, 5, k, 2)
        # a Markov dynamics rolled over the candidate and the chunk in one go reaches the same latents
        whole = wm.imagine_latents(encoding, torch.cat([actions, chunk], dim=2))
    assert ex.rewards.shape == (2, 5, t + k) and ex.values.shape == (2, 5, 1)
    torch.testing.assert_close(ex.rewards[..., :t], im.rewards)
    torch.testing.assert_close(ex.latents, whole, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(ex.values, im.values)
    assert expand_imagination(wm, encoding, im, actions, None, 0) is im


@pytest.mark.parametrize("k", [0, 2])
def test_mppi_scores_with_the_expansion_on_the_fast_and_naive_paths_alike(k):
    wm = tiny_model(mlp=True).eval()
    hist = history_for(wm, 2)
    fast = MPPIPlanner(wm, num_samples=32, iterations=2, value_expansion=k)
    naive = simdist.create("planner", "mppi_naive", world_model=wm, num_samples=32, iterations=2, value_expansion=k)
    a, b = fast.plan(hist), naive.plan(hist)
    torch.testing.assert_close(a.returns, b.returns, atol=1e-4, rtol=1e-4)
    obs, act, cmd = hist.as_inputs()
    with eval_mode(wm):
        encoding = wm.encode(obs, act)
        plan = a.plan[:, None]
        im = expand_imagination(wm, encoding, wm.imagine(encoding, plan, cmd, last_value_only=True), plan, cmd, k)
        score = plan_score(im, 0.99, wm.config.value_offset)[:, 0]
        assert torch.allclose(fast._score_fast(plan, encoding, wm.dynamics.prepare(encoding), cmd)[:, 0], score)


def test_the_expansion_is_refused_where_it_cannot_act():
    wm = model()
    with pytest.raises(ValueError, match="value_expansion must be an integer 0 to the horizon"):
        check_expansion(wm, wm.config.horizon + 1)
    restricted = model(policy_input={"history": False})
    with pytest.raises(ValueError, match="policy_input restricts"):
        MPPIPlanner(restricted, num_samples=8, iterations=1, value_expansion=1)
    no_policy = model(policy_head=None)
    with pytest.raises(ValueError, match="needs a policy head"):
        check_expansion(no_policy, 1)
    assert check_expansion(no_policy, 0) == 0
