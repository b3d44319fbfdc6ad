"""The plan-ranking levers: perturbation windows, oversampled perturbed windows, horizon-weighted consistency,
the toy loop's model/data/finetuning options and simulation windows mixed into finetuning."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from simdist.components.tasks.toy_reach.demo import TEST, ToyOptions, run_toy_pipeline
from simdist.data.schema import Episode, front_pad
from simdist.data.windows import noised_steps, perturbed_starts, window_starts
from simdist.model.losses import WorldModelLoss


def _episode(length: int, noised: list[list[int]]) -> Episode:
    return Episode(
        obs={"state": np.zeros((length + 1, 4), np.float32)}, actions=np.zeros((length, 2), np.float32),
        commands=np.zeros((length + 1, 0), np.float32), rewards=np.zeros(length, np.float32),
        values=np.zeros(length, np.float32), expert=np.ones(length, bool), episode_id=0,
        meta={"noised_windows": noised})


def test_perturbed_windows_are_listed_repeat_times_and_front_padding_shifts_them() -> None:
    ep = _episode(40, [[20, 22]])
    assert np.flatnonzero(noised_steps(ep)).tolist() == [20, 21]
    assert np.flatnonzero(noised_steps(front_pad(ep, 3))).tolist() == [23, 24]
    starts = window_starts(len(ep), 4, 4, 0, 0)
    out = perturbed_starts(ep, starts, span=8, repeat=3)
    holds = {s for s in starts.tolist() if s <= 21 < s + 8 or s <= 20 < s + 8}
    assert holds == set(range(13, 22)) & set(starts.tolist())
    for s in starts.tolist():
        assert out.tolist().count(s) == (3 if s in holds else 1)
    assert perturbed_starts(_episode(40, []), starts, 8, 3).tolist() == starts.tolist()


def test_perturbed_repeat_is_checked() -> None:
    from simdist.data import TrajectoryDataModule

    with pytest.raises(ValueError, match="data.perturbed_repeat must be an integer >= 1"):
        TrajectoryDataModule("x", perturbed_repeat=0)
    with pytest.raises(ValueError, match="perturbed_repeat > 1 needs single windows"):
        TrajectoryDataModule("x", perturbed_repeat=2, windows_per_chunk=2, batch_size=4)


def test_consistency_decay_weights_the_horizon_steps() -> None:
    from simdist.model.world_model import WorldModel

    torch.manual_seed(0)
    model = WorldModel.from_preset("toy")
    h, t = model.config.history, model.config.horizon
    batch = {"obs_hist": {"state": torch.randn(6, h + 1, 4)}, "act_hist": torch.randn(6, h, 2),
             "fut_acts": torch.randn(6, t, 2), "fut_cmds": torch.zeros(6, t + 1, 0),
             "fut_obs": {"state": torch.randn(6, t, 4)}}
    error = (model.predict(batch, heads=False).latents - model.consistency_targets(batch)).pow(2).mean((0, 2))
    uniform = WorldModelLoss.dynamics_only()(model, batch)["dynamics"]
    assert torch.allclose(uniform, error.mean())
    decayed = WorldModelLoss(1.0, 0.0, 0.0, 0.0, consistency_decay=0.5)(model, batch)["dynamics"]
    w = 0.5 ** torch.arange(t, dtype=torch.float32)
    assert torch.allclose(decayed, (error * w / w.mean()).mean(), rtol=1e-5)
    with pytest.raises(ValueError, match="consistency_decay must be a finite number > 0"):
        WorldModelLoss(consistency_decay=0.0)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"perturbed_repeat": 0}, "perturbed_repeat must be an integer >= 1"),
    ({"perturb_steps": 0}, "perturb_steps must be an integer >= 1"),
    ({"perturb_sigma": 3.0}, "perturb_sigma must be a noise std"),
    ({"history": 2, "dynamics_context": 4}, "history 2 must be >= dynamics_context 4"),
    ({"dynamics_hidden": (64, 0)}, "dynamics_hidden must be positive integer widths"),
    ({"history_dropout": 1.0}, "history_dropout must be a probability"),
    ({"consistency_decay": -1.0}, "consistency_decay must be a finite number > 0"),
    ({"sim_mix": 1.0}, "sim_mix must be a share in"),
])
def test_toy_options_name_the_bad_option(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ToyOptions(**kwargs)


def test_toy_options_map_to_the_model_and_the_data() -> None:
    assert ToyOptions(dynamics_context=0).model_overrides() is None  # the toy preset as it is
    assert ToyOptions().model_overrides() == {"dynamics": {"name": "mlp", "kwargs": {"hidden": [128, 128],
                                                                                   "action_context": 4}}}
    opts = ToyOptions(dynamics_context=4, dynamics_hidden=(256, 256), history=4, perturb_sigma=2.0, perturb_steps=10)
    assert opts.model_overrides() == {"dynamics": {"name": "mlp", "kwargs": {"hidden": [256, 256],
                                                                           "action_context": 4}}, "history": 4}
    p = opts.perturbation()
    assert (p.max_noise, p.noise_window, p.clean_window) == (2.0, (1, 11), (5, 11))
    default = ToyOptions().perturbation()
    assert (default.max_noise, default.noise_window) == (1.0, (1, 6))  # the toy's manipulation windows


@pytest.mark.usefixtures("single_thread")
def test_the_loop_runs_with_every_lever_and_mixes_simulation_into_finetuning(tmp_path, capsys) -> None:
    from simdist.cli import main
    from simdist.data.shards import read_dataset_info

    opts = ToyOptions(dynamics_context=2, dynamics_hidden=(32, 32), history=6, perturb_sigma=1.5, perturb_steps=8,
                      perturbed_repeat=3, history_dropout=0.2, consistency_decay=0.8)
    first = run_toy_pipeline(tmp_path / "a", TEST, seed=0, progress=False, real="lag", options=opts)
    assert first["dynamics"]["kwargs"] == {"hidden": [32, 32], "action_context": 2}
    assert first["options"]["perturbed_repeat"] == 3
    noise = read_dataset_info(tmp_path / "a" / "sim-data")["metadata"]["generator"]["perturbation"]
    assert noise["max_noise"] == 1.5 and noise["noise_window"] == [1, 9]
    timing = json.loads((tmp_path / "a" / "timing.json").read_text())
    assert timing["pretrain_cpu_seconds"] > 0

    mixed = run_toy_pipeline(tmp_path / "b", TEST, seed=0, progress=False, real="lag",
                             pretrained=tmp_path / "a" / "toy-sim", options=ToyOptions(sim_mix=0.5))
    sim = read_dataset_info(tmp_path / "b" / "sim-mix")
    real_steps = read_dataset_info(tmp_path / "b" / "real-data")["num_steps"]
    assert real_steps <= sim["num_steps"] < real_steps + 200  # about half of the finetuning transitions
    assert mixed["options"]["sim_mix"] == 0.5

    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "toy-sim").symlink_to(tmp_path / "a" / "toy-sim")
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["demo", "--task", "toy-reach", "--pretrained", str(tmp_path / "c" / "toy-sim"), "--option", "sim_mix=0.3",
              "--out", str(tmp_path / "d")])
    assert "--sim-mix: no simulation dataset at" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
    with pytest.raises(SystemExit):
        main(["demo", "--task", "toy-reach", "--option", "dynamics_hidden=64,x", "--out", str(tmp_path / "d")])


def test_heldout_rounds_continue_until_an_episode_holds_a_window() -> None:
    from simdist.components.tasks.toy_reach.loop import HELDOUT_ROUNDS, heldout_episodes
    from simdist.model.world_model import WorldModel

    model = WorldModel.from_preset("toy")
    seeds: list[int] = []

    def collect(lengths: list[int]):
        def run(seed: int) -> list[Episode]:
            seeds.append(seed)
            return [_episode(lengths[len(seeds) - 1], [])]
        return run

    short, long = 10, 40  # a window needs history + horizon + 11 steps once padded by the history
    assert len(heldout_episodes(collect([long]), model, 4)) == 1 and seeds == [4]
    seeds.clear()
    assert [len(ep) for ep in heldout_episodes(collect([short, short, long]), model, 4)] == [short, short, long]
    assert seeds == [4, 1004, 2004]
    seeds.clear()
    with pytest.raises(RuntimeError, match="none of 4 held-out real episodes is long enough"):
        heldout_episodes(collect([short] * HELDOUT_ROUNDS), model, 4)
