"""The toy's actuator keys (latency, gain), the ``lag`` profile, its retuned expert, and the loop on any profile."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from simdist.components.tasks.toy_reach.clone import restore, snapshot
from simdist.components.tasks.toy_reach.expert import DelayCompensatedPD, expert_for, expert_policy
from simdist.components.tasks.toy_reach.pointmass import ToyReachEnv
from simdist.components.tasks.toy_reach.profiles import builtin_profiles, load_profile
from simdist.profiles import ProfileError
from simdist.workflows.rollout import rollout


def _positions(profile: dict, actions: np.ndarray) -> np.ndarray:
    env = ToyReachEnv(1, profile=profile, seed=0, randomize=False)
    env.reset(seed=3)
    out = []
    for a in actions:
        env.step(a[None])
        out.append(env.positions[0].copy())
    env.close()
    return np.array(out)


def test_lag_is_builtin_and_keys_are_checked() -> None:
    assert "lag" in builtin_profiles()
    lag = load_profile("lag")
    assert (lag.latency, lag.gain) == (4, 4.0)
    assert (load_profile("sim").latency, load_profile("sim").gain) == (0, 1.0)
    with pytest.raises(ProfileError, match="latency"):
        load_profile({"name": "x", "latency": -1})
    with pytest.raises(ProfileError, match="latency"):
        load_profile({"name": "x", "latency": 1.5})
    with pytest.raises(ProfileError, match="gain"):
        load_profile({"name": "x", "gain": 0.0})


def test_latency_delays_each_action_by_its_steps() -> None:
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (12, 2))
    delayed = _positions({"name": "d", "latency": 3}, actions)
    shifted = _positions({"name": "s"}, np.concatenate([np.zeros((3, 2)), actions[:-3]]))
    np.testing.assert_allclose(delayed, shifted, atol=1e-12)
    assert not np.allclose(delayed, _positions({"name": "s"}, actions))


def test_gain_scales_the_force() -> None:
    actions = np.random.default_rng(1).uniform(-0.25, 0.25, (10, 2))
    np.testing.assert_allclose(_positions({"name": "g", "gain": 4.0}, actions),
                               _positions({"name": "n"}, 4.0 * actions), atol=1e-12)


def test_snapshot_keeps_the_actions_in_flight() -> None:
    env = ToyReachEnv(2, profile="lag", seed=0)
    env.reset(seed=1)
    rng = np.random.default_rng(2)
    for _ in range(5):
        env.step(rng.uniform(-1, 1, (2, 2)))
    snap = snapshot(env, np.arange(2))
    future = rng.uniform(-1, 1, (6, 2, 2))
    reference = [env.step(a).obs["state"].copy() for a in future]
    twin = ToyReachEnv(2, profile="lag", seed=9)
    twin.reset(seed=9)
    restore(twin, snap)
    np.testing.assert_array_equal(np.array([twin.step(a).obs["state"] for a in future]), np.array(reference))
    env.close()
    twin.close()


def test_retuned_expert_solves_lag_where_the_pd_expert_degrades() -> None:
    def mean_return(profile: str, policy) -> float:
        env = ToyReachEnv(8, profile=profile, seed=4)
        try:
            return float(rollout(env, policy, episodes=16, seed=4).returns.mean())
        finally:
            env.close()

    sim = mean_return("sim", expert_policy())
    retuned = mean_return("lag", expert_for(load_profile("lag")))
    assert isinstance(expert_for(load_profile("lag")), DelayCompensatedPD)
    assert retuned >= 0.9 * sim
    assert mean_return("lag", expert_policy()) < retuned


def test_mlp_action_context_reads_the_past_actions() -> None:
    from simdist import WorldModel

    def model(context: int) -> WorldModel:
        torch.manual_seed(0)
        return WorldModel.from_preset("toy", dynamics={"name": "mlp", "kwargs": {"hidden": [32],
                                                                                 "action_context": context}})

    obs = {"state": torch.randn(3, 9, 4)}
    hist = torch.randn(3, 8, 2)
    fut = torch.rand(3, 8, 2) * 2 - 1
    changed = hist.clone()
    changed[:, -2] += 1.0  # an action two steps ago
    for context, depends in ((0, False), (4, True)):
        m = model(context).eval()
        with torch.no_grad():
            a = m.imagine(m.encode(obs, hist), fut).latents
            b = m.imagine(m.encode(obs, changed), fut).latents
        assert (not torch.allclose(a, b)) == depends
    plain = model(0).dynamics
    z = torch.randn(3, 32)
    expected, zk = [], z
    for k in range(8):  # context 0 is z_{k+1} = z_k + f(z_k, a_k), as before the option
        zk = zk + plain.net(torch.cat([zk, fut[:, k]], -1))
        expected.append(zk)
    torch.testing.assert_close(plain(None, z, fut), torch.stack(expected, 1))
    with pytest.raises(ValueError, match="action_context"):
        model(-1)
    with pytest.raises(ValueError, match="exceeds the model's history"):
        model(9)


@pytest.mark.usefixtures("single_thread")
def test_demo_runs_on_a_user_profile_with_the_diagnostics(tmp_path) -> None:
    from simdist.cli import main

    profile = tmp_path / "mine.yaml"
    profile.write_text("name: mine\nlatency: 2\ngain: 2.0\n")
    from simdist.components.tasks.toy_reach.demo import TEST, ToyOptions, run_toy_pipeline

    results = run_toy_pipeline(tmp_path / "run", TEST, seed=0, progress=False, real=profile,
                               options=ToyOptions(dynamics_context=2, explore=0.5, ranking=True, ranking_states=4))
    assert results["profile"]["latency"] == 2 and results["options"]["explore"] == 0.5
    saved = json.loads((tmp_path / "run" / "results.json").read_text())
    assert saved == json.loads(json.dumps(results))
    diag = saved["diagnostics"]
    assert set(diag["ranking"]) == {"profile/zero_shot", "profile/adapted", "sim/zero_shot"}
    assert all(-1 <= r["spearman"]["mean"] <= 1 for r in diag["ranking"].values())
    assert set(diag["action_information"]) == {"zero_shot", "adapted"}
    assert "plan ranking" in (tmp_path / "run" / "results.md").read_text()
    with pytest.raises(SystemExit):
        main(["demo", "--task", "toy-reach", "--real", str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "x")])
    assert not (tmp_path / "x").exists()
