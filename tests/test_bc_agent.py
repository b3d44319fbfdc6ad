"""The single-step behaviour-cloning agent ``bc``: config, training on toy data, acting, finetuning, Hub I/O."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from simdist import WorldModel
from simdist.agents import load_agent, read_agent_type
from simdist.components.agents.bc import BCAgent, BCConfig, BCPolicy
from simdist.data import EpisodeWriter, gather_windows, iter_episodes, load_spec, load_stats, window_starts
from simdist.hub.load import CheckpointError
from simdist.model.config import ConfigError

pytestmark = pytest.mark.usefixtures("single_thread")

STEPS, BATCH = 60, 32


def toy_config(**changes) -> BCConfig:
    cfg = BCConfig.from_world_model_config(WorldModel.from_preset("toy").config, hidden=[64, 64])
    return cfg.replace(**changes) if changes else cfg


@pytest.fixture(scope="module")
def demo_data(sim_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same episodes as rollout-recorded demonstrations: no step expert-flagged."""
    out = tmp_path_factory.mktemp("bc") / "demos"
    with EpisodeWriter(out, load_spec(str(sim_data)), max_episodes_per_shard=4) as writer:
        for ep in iter_episodes(str(sim_data), shuffle_shards=False, split_by_node=False, split_by_worker=False):
            writer.write(dataclasses.replace(ep, expert=np.zeros_like(ep.expert)))
    return out


@pytest.fixture(scope="module")
def trained(sim_data: Path, tmp_path_factory: pytest.TempPathFactory) -> BCAgent:
    return BCAgent.train(sim_data, toy_config(), steps=STEPS, batch_size=BATCH, lr=3e-3, seed=0,
                         out=tmp_path_factory.mktemp("bc-run"), expert_only=True)


def expert_windows(data: Path, history: int) -> dict:
    """Every window of ``data`` whose first future step is expert-flagged, stacked (horizon 1)."""
    parts = []
    for ep in iter_episodes(str(data), shuffle_shards=False, split_by_node=False, split_by_worker=False):
        starts = window_starts(len(ep), history, 1)
        starts = starts[ep.expert[starts + history]]
        if len(starts):
            parts.append(gather_windows(ep, starts, history, 1))
    obs = {k: torch.from_numpy(np.concatenate([p["obs_hist"][k] for p in parts])) for k in parts[0]["obs_hist"]}
    return {"obs_hist": obs, "act_hist": torch.from_numpy(np.concatenate([p["act_hist"] for p in parts])),
            "fut_acts": torch.from_numpy(np.concatenate([p["fut_acts"] for p in parts]))}


def filled_history(agent: BCAgent, num_envs: int = 5, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    history = agent.new_history(num_envs)
    history.reset({"state": 3.0 * torch.randn(num_envs, 4, generator=g)})
    for _ in range(3):
        obs, prev_action = 3.0 * torch.randn(num_envs, 4, generator=g), 2.0 * torch.randn(num_envs, 2, generator=g)
        history.push({"state": obs}, prev_action)
    return history


# ------------------------------------------------------------------------------------------ config
def test_config_from_the_toy_preset() -> None:
    wm = WorldModel.from_preset("toy").config
    cfg = BCConfig.from_world_model_config(wm)
    assert cfg.obs_spec == {"state": [4]} and cfg.action_dim == 2 and cfg.command_dim == 0
    assert cfg.action_low == [-1.0, -1.0] and cfg.action_high == [1.0, 1.0]
    assert cfg.history == wm.history == 8 and cfg.latent_dim == wm.latent_dim
    assert (cfg.encoder.name, cfg.encoder.kwargs) == (wm.encoder.name, wm.encoder.kwargs)
    assert cfg.hidden == [256, 256] and cfg.stats is None
    assert BCConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
    policy = BCPolicy(cfg)  # the encoder is the world model's class, built from the same registry spec
    assert type(policy.encoder) is type(WorldModel(wm).encoder)


@pytest.mark.parametrize(("changes", "field"), [
    ({"hidden": [64, 0]}, r"hidden\[1\]"),
    ({"history": 0}, "history"),
    ({"action_dim": "2"}, "action_dim"),
    ({"action_low": [-1.0]}, "action_low"),
    ({"action_high": None}, "action_low and action_high"),
    ({"action_low": [2.0, -1.0]}, "action_low exceeds action_high"),
    ({"encoder": {"kwargs": {}}}, "encoder"),
    ({"obs_spec": {"state": [0]}}, r"obs_spec\['state'\]"),
    ({"stats": {"actions": {"mean": [0.0], "std": [1.0, 1.0]}}}, r"stats\['actions'\]\.mean"),
    ({"unknown_key": 1}, "unknown_key"),
])
def test_bad_config_names_the_field(changes: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        toy_config(**changes)


def test_unknown_encoder_is_refused() -> None:
    with pytest.raises(KeyError, match="no-such-encoder"):
        BCPolicy(toy_config(encoder={"name": "no-such-encoder"}))


# ------------------------------------------------------------------------------------------ training
def test_training_fits_the_normaliser_and_the_loss_falls(trained: BCAgent, sim_data: Path) -> None:
    losses = trained.train_losses
    assert len(losses) > STEPS // 2 and all(np.isfinite(losses))  # batches without an expert window are skipped
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])
    stats = load_stats(str(sim_data))
    np.testing.assert_allclose(trained.policy.normalizer.mean("obs/state").numpy(), stats.mean["obs/state"],
                               rtol=1e-6)
    np.testing.assert_allclose(trained.config.stats["actions"]["mean"], stats.mean["actions"], rtol=1e-6)
    # on the expert windows it imitates, it beats the same policy before training (same seed, same statistics)
    torch.manual_seed(0)
    untrained = BCPolicy(toy_config(stats=stats.to_dict())).eval()
    batch = expert_windows(sim_data, 8)
    target = batch["fut_acts"][:, 0]

    def mse(policy: BCPolicy) -> float:
        return float(((policy.act(batch["obs_hist"], batch["act_hist"]) - target) ** 2).mean())

    assert mse(trained.policy) < 0.5 * mse(untrained)


def test_acts_in_shape_within_bounds_and_deterministically(trained: BCAgent) -> None:
    history = filled_history(trained, num_envs=5)
    actions = trained.act(history)
    assert actions.shape == (5, 2) and actions.dtype == torch.float32
    assert bool((actions >= -1.0).all() and (actions <= 1.0).all())
    with torch.no_grad():
        raw = trained.policy.normalizer.denormalize("actions", trained.policy(*history.as_inputs()[:2]))
    assert bool((raw.abs() > 1.0).any()), "the far-out inputs should drive some raw action past the bounds"
    torch.testing.assert_close(actions, raw.clamp(-1.0, 1.0), rtol=0, atol=0)
    trained.reset(seed=123)
    trained.reset(ids=[0, 2])
    assert torch.equal(trained.with_settings(seed=7).act(history), actions)
    with pytest.raises(TypeError, match="num_samples"):
        trained.with_settings(num_samples=8)
    assert not trained.plans and trained.agent_type == "bc"


def test_expert_only_without_expert_steps_fails_before_training(demo_data: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import simdist.training.module as module

    def no_training(*args, **kwargs):
        raise AssertionError("training started")

    monkeypatch.setattr(module, "epoch_trainer", no_training)
    with pytest.raises(ValueError, match="expert_only=True but .* has no expert-flagged steps"):
        BCAgent.train(demo_data, toy_config(), steps=5, batch_size=8, out=tmp_path, expert_only=True)


# ------------------------------------------------------------------------------------------ finetuning
def test_finetune_on_demos_with_the_encoder_frozen(trained: BCAgent, demo_data: Path, tmp_path: Path) -> None:
    before = {k: v.clone() for k, v in trained.policy.state_dict().items()}
    tuned = trained.finetune(demo_data, freeze="heads_only", out=tmp_path, seed=1, epochs=1,
                             windows_per_epoch=20 * 16, batch_size=16, lr=1e-3)
    assert isinstance(tuned, BCAgent) and tuned is not trained
    assert len(tuned.train_losses) == 20  # every demo step counts although none is expert-flagged
    for key, value in trained.policy.state_dict().items():  # the original is untouched
        assert torch.equal(value, before[key]), key
    state = tuned.policy.state_dict()
    for key, value in before.items():
        moved = not torch.equal(state[key], value)
        assert moved == key.startswith("policy."), key  # the head trains; encoder and normaliser stay
    assert tuned.act(filled_history(tuned)).shape == (5, 2)


def test_finetune_all_trains_the_encoder(trained: BCAgent, demo_data: Path, tmp_path: Path) -> None:
    tuned = trained.finetune(demo_data, freeze="all", out=tmp_path, epochs=1, windows_per_epoch=5 * 16,
                             batch_size=16)
    assert not torch.equal(tuned.policy.encoder.net[0].weight, trained.policy.encoder.net[0].weight)
    assert torch.equal(tuned.policy.normalizer.mean("obs/state"), trained.policy.normalizer.mean("obs/state"))


@pytest.mark.parametrize("freeze", ["dynamics_only", "dynamics,encoder", "reward,value", "no-such-policy"])
def test_finetune_refuses_freeze_policies_without_meaning_for_bc(trained: BCAgent, demo_data: Path,
                                                                 tmp_path: Path, freeze: str) -> None:
    with pytest.raises(ValueError, match="freeze="):
        trained.finetune(demo_data, freeze=freeze, out=tmp_path, epochs=1, windows_per_epoch=16, batch_size=16)


# ------------------------------------------------------------------------------------------ Hub I/O
def test_save_and_load_round_trip(trained: BCAgent, tmp_path: Path) -> None:
    folder = trained.save_pretrained(tmp_path / "bc-toy", metrics={"steps": STEPS})
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "config.json", "model.safetensors"]
    assert read_agent_type(folder / "config.json") == "bc"
    card = (folder / "README.md").read_text()
    assert card.startswith("---\n") and "behavior-cloning" in card and "toy-reach" in card
    history = filled_history(trained)
    for loaded in (BCAgent.from_pretrained(folder), load_agent(folder)):
        assert type(loaded) is BCAgent
        assert torch.equal(loaded.act(history), trained.act(history))
        assert loaded.config == trained.policy.export_config()
        for key, value in trained.policy.state_dict().items():
            assert torch.equal(loaded.policy.state_dict()[key], value), key
    again = trained.save_pretrained(folder)  # a previous export is replaced, without temporaries left behind
    assert sorted(p.name for p in again.parent.iterdir()) == ["bc-toy"]
    with pytest.raises(FileExistsError, match="not empty"):
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "notes.txt").write_text("keep me")
        trained.save_pretrained(tmp_path / "other")


def test_loading_is_strict(trained: BCAgent, tmp_path: Path) -> None:
    folder = trained.save_pretrained(tmp_path / "bc-toy")
    weights = folder / "model.safetensors"
    state = load_file(str(weights))
    state.pop("policy.0.bias")
    save_file(state, str(weights), metadata={"format": "pt"})
    with pytest.raises(CheckpointError, match="missing keys"):
        load_agent(folder)
    config = json.loads((folder / "config.json").read_text())
    config["hidden"] = [32, 64]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="shape mismatches"):
        BCAgent.from_pretrained(folder)
    with pytest.raises(ConfigError, match="holds a 'bc' agent, not a SimDist world model"):
        WorldModel.from_pretrained(folder)


def test_expert_only_loss_counts_only_expert_windows() -> None:
    torch.manual_seed(0)
    policy = BCPolicy(toy_config())
    g = torch.Generator().manual_seed(1)
    batch = {"obs_hist": {"state": torch.randn(6, 9, 4, generator=g)}, "act_hist": torch.randn(6, 8, 2, generator=g),
             "fut_acts": torch.randn(6, 1, 2, generator=g), "fut_cmds": torch.zeros(6, 2, 0),
             "expert": torch.tensor([[1.0], [0.0], [0.0], [1.0], [0.0], [0.0]])}
    per_window = ((policy(batch["obs_hist"], batch["act_hist"]) - batch["fut_acts"][:, 0]) ** 2).mean(-1)
    torch.testing.assert_close(policy.loss(batch), per_window.mean())
    torch.testing.assert_close(policy.loss(batch, expert_only=True), per_window[[0, 3]].mean())
    assert policy.loss({**batch, "expert": torch.zeros(6, 1)}, expert_only=True) is None
