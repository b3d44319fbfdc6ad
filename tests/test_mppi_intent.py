"""MPPI's intent term (``intent_weight``, ``intent_model``): the distance of a candidate's latents to the policy
chunk's latents under a reference dynamics, what it does to the plan, and the settings refused (CPU, tiny model)."""

from __future__ import annotations

import json

import pytest
import torch

from simdist.components.planners.mppi import MPPIPlanner
from simdist.components.planners.policy import PolicyPlanner
from simdist.planning.intent import IntentReference
from simdist.schema import SettingError
from tests.test_planners import history_for, tiny_model

SETTINGS = dict(num_samples=128, iterations=3, num_elites=32, init_std=0.3, base_act_std=0.1, warm_start="policy",
                action_low=-5.0, action_high=5.0)

pytestmark = pytest.mark.usefixtures("single_thread")


def _encoding(planner: MPPIPlanner, hist):  # the tick's encoding, command and policy chunk
    wm = planner.world_model
    obs, act, cmd = planner._inputs(hist)
    encoding = wm.encode(obs, act)
    return encoding, cmd, planner.clip(wm.policy_actions(encoding, cmd))


@torch.no_grad()
def test_the_policy_chunk_is_at_zero_distance_from_its_own_intent_and_others_are_not() -> None:
    wm = tiny_model(seed=3).eval()
    planner = MPPIPlanner(wm, **SETTINGS, intent_weight=1.0, seed=0)
    encoding, cmd, chunk = _encoding(planner, history_for(wm, 2))
    intent = planner.intent.latents(encoding, chunk)
    moved = torch.stack([chunk, chunk + 0.5], dim=1)  # (B, 2, T, A)
    distance = IntentReference.distance(wm.imagine(encoding, moved, cmd).latents, intent)
    assert torch.allclose(distance[:, 0], torch.zeros(2), atol=1e-10) and (distance[:, 1] > 1e-6).all()


@torch.no_grad()
def test_a_heavy_intent_keeps_the_plan_where_the_reference_dynamics_sends_the_policy() -> None:
    wm = tiny_model(seed=3).eval()
    hist = history_for(wm, 2)
    policy = PolicyPlanner(wm, action_low=-5.0, action_high=5.0).plan(hist).plan

    def gap(weight: float) -> float:
        planner = MPPIPlanner(wm, **SETTINGS, intent_weight=weight, seed=0)
        return float((planner.plan(hist).plan - policy).abs().mean())

    free, held = gap(0.0), gap(1e5)
    assert held < 0.5 * free, (free, held)


@torch.no_grad()
def test_another_reference_moves_the_plan_and_a_folder_reference_loads_from_planner_json(tmp_path) -> None:
    from simdist.components.agents.simdist import SimDistAgentConfig
    from simdist.components.agents.simdist.modeling import SimDistAgent

    wm, base = tiny_model(seed=3).eval(), tiny_model(seed=3).eval()
    with torch.no_grad():  # an "adapted" dynamics: the same model but for its dynamics
        for p in wm.dynamics.parameters():
            p.add_(0.2 * torch.randn_like(p))
    base.save_pretrained(tmp_path / "base")
    hist = history_for(wm, 2)
    own = MPPIPlanner(wm, **SETTINGS, intent_weight=100.0, seed=0).plan(hist).plan
    via = MPPIPlanner(wm, **SETTINGS, intent_weight=100.0, intent_model=base, seed=0).plan(hist).plan
    assert not torch.allclose(own, via)
    config = SimDistAgentConfig.from_planner_dict({"planner": "mppi", **SETTINGS, "intent_weight": 100.0,
                                                   "intent_model": str(tmp_path / "base"), "seed": 0})
    loaded = SimDistAgent(wm, config).planner
    torch.testing.assert_close(loaded.plan(hist).plan, via)


def test_refused_settings_name_their_key(tmp_path) -> None:
    from simdist.components.agents.simdist import SimDistAgentConfig
    from simdist.model.config import ConfigError

    wm = tiny_model(seed=3).eval()
    with pytest.raises(SettingError, match="intent_weight"):
        MPPIPlanner(wm, intent_weight=1.0, naive=True)
    with pytest.raises(ValueError, match="intent_model .* latent_dim"):
        MPPIPlanner(wm, intent_weight=1.0, intent_model=tiny_model(seed=3, latent_dim=wm.config.latent_dim + 4))
    (tmp_path / "planner.json").write_text(json.dumps({"planner": "mppi", "intent_weight": -1.0}))
    with pytest.raises(ConfigError, match="intent_weight"):
        SimDistAgentConfig.from_folder(tmp_path)
