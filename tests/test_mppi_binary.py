"""MPPI's binary action dimensions (a gripper the env thresholds at 0): the official weighted mean against the
elite's sign and the hysteresis, on a tiny model (CPU)."""

from __future__ import annotations

import pytest
import torch

from simdist.components.planners.mppi import MPPIPlanner
from tests.test_planners import history_for, tiny_model

SETTINGS = dict(num_samples=64, iterations=2, num_elites=32, init_std=1.0, warm_start="none")


def flips(planner: MPPIPlanner, wm, ticks: int = 40) -> tuple[int, torch.Tensor]:
    """Sign changes of the binary dimension's command over ``ticks`` ticks from one history, with scores that
    are noise (a ranking as weak as it gets: the elites are a random half of the samples), and the last
    commands."""
    gen = torch.Generator().manual_seed(0)
    planner._score = lambda samples, ctx: torch.randn(samples.shape[:2], generator=gen)
    hist = history_for(wm, 4)
    signs, last = [], None
    for _ in range(ticks):
        last = planner.plan(hist).action
        signs.append(torch.sign(last[:, 1]))
    s = torch.stack(signs)
    return int((s[1:] != s[:-1]).sum()), last


@pytest.mark.usefixtures("single_thread")
def test_the_weighted_mean_chatters_and_the_hysteresis_does_not():
    wm = tiny_model(seed=3)
    official, _ = flips(MPPIPlanner(wm, **SETTINGS, seed=0), wm)
    held, last = flips(MPPIPlanner(wm, **SETTINGS, seed=0, binary_dims=[1], binary_mode="hysteresis"), wm)
    assert official > 20  # the mean of near-uniformly weighted elites changes sign often
    assert held < official / 5
    assert set(last[:, 1].tolist()) <= {-1.0, 1.0}


@pytest.mark.usefixtures("single_thread")
def test_the_elite_mode_commands_the_best_sequence_sign_and_the_other_dims_are_unchanged():
    wm = tiny_model(seed=3)
    hist = history_for(wm, 3)
    base = MPPIPlanner(wm, **SETTINGS, seed=0).plan(hist)
    elite = MPPIPlanner(wm, **SETTINGS, seed=0, binary_dims=[1], binary_mode="elite").plan(hist)
    assert torch.equal(base.plan[..., 0], elite.plan[..., 0])
    assert set(elite.plan[..., 1].flatten().tolist()) <= {-1.0, 1.0}


def test_the_hysteresis_holds_inside_the_band_and_flips_beyond_it():
    wm = tiny_model(seed=3)
    p = MPPIPlanner(wm, **SETTINGS, binary_dims=[1], binary_mode="hysteresis", hysteresis=0.5)
    best = torch.zeros(2, 5, 2)
    plan = torch.zeros(2, 5, 2)
    plan[:, 0, 1] = torch.tensor([0.3, -0.3])
    assert p._binary(plan, best)[:, 0, 1].tolist() == [1.0, -1.0]  # unset: the sign of the mean
    plan[:, 0, 1] = torch.tensor([-0.4, 0.6])
    assert p._binary(plan, best)[:, 0, 1].tolist() == [1.0, 1.0]  # -0.4 is inside the band, 0.6 beyond it
    p.reset(ids=[0])
    assert p._binary(plan, best)[:, 0, 1].tolist() == [-1.0, 1.0]  # a reset env starts from the mean again


def test_bad_binary_settings_are_refused():
    wm = tiny_model(seed=3)
    with pytest.raises(ValueError, match="binary_mode"):
        MPPIPlanner(wm, binary_dims=[1], binary_mode="vote")
    with pytest.raises(ValueError, match="binary_dims"):
        MPPIPlanner(wm, binary_dims=[2])
    with pytest.raises(ValueError, match="hysteresis"):
        MPPIPlanner(wm, binary_dims=[1], hysteresis=1.0)


def test_a_planner_json_with_binary_settings_is_read_and_checked(tmp_path) -> None:
    """A model folder's planner.json may set the binary-action settings; a bad mode is refused naming the key."""
    import json

    from simdist.components.agents.simdist import SimDistAgentConfig
    from simdist.model.config import ConfigError

    good = {"planner": "mppi", "num_samples": 64, "binary_dims": [6], "binary_mode": "hysteresis", "hysteresis": 0.5}
    (tmp_path / "planner.json").write_text(json.dumps(good))
    config = SimDistAgentConfig.from_folder(tmp_path)
    assert config is not None and config.settings["binary_mode"] == "hysteresis"
    (tmp_path / "planner.json").write_text(json.dumps({**good, "binary_mode": "sometimes"}))
    with pytest.raises(ConfigError, match="binary_mode"):
        SimDistAgentConfig.from_folder(tmp_path)
