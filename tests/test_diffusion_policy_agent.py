"""The Diffusion Policy agent ``diffusion_policy``: training and co-training on toy data, receding-horizon acting,
finetuning, Hub I/O, the noise schedule, multimodality and settings checks."""

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
from simdist.components.agents.diffusion_policy import DiffusionPolicyAgent, DiffusionPolicyConfig
from simdist.components.agents.diffusion_policy.network import ConditionalUnet1D
from simdist.components.agents.diffusion_policy.policy import ema_decay
from simdist.components.agents.diffusion_policy.schedulers import inference_scheduler, training_scheduler
from simdist.components.agents.diffusion_policy.windows import BatchStream, encode_windows, window_times
from simdist.data import EpisodeWriter, load_spec
from simdist.hub.load import CheckpointError
from simdist.model.config import ConfigError
from tests.helpers import episodes_of as episodes
from tests.helpers import toy_world_model

pytestmark = pytest.mark.usefixtures("single_thread")

STEPS, BATCH = 60, 32
#: a tiny U-Net (the CPU default is [64, 128, 256] with a 256-d step embedding)
TINY = {"down_dims": [16, 32, 64], "step_embed_dim": 32, "lr": 2e-3, "warmup_steps": 5}


@pytest.fixture(scope="module")
def demo_data(sim_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same episodes as rollout-recorded demonstrations: no step expert-flagged."""
    out = tmp_path_factory.mktemp("dp") / "demos"
    with EpisodeWriter(out, load_spec(str(sim_data)), max_episodes_per_shard=4) as writer:
        for ep in episodes(sim_data):
            writer.write(dataclasses.replace(ep, expert=np.zeros_like(ep.expert)))
    return out


@pytest.fixture(scope="module")
def world_model(sim_data: Path) -> WorldModel:
    """The toy preset with normaliser statistics fitted on the simulation data (its encoder is the frozen one)."""
    torch.manual_seed(0)
    return toy_world_model(sim_data)


@pytest.fixture(scope="module")
def trained(demo_data: Path, sim_data: Path, world_model: WorldModel,
            tmp_path_factory: pytest.TempPathFactory) -> DiffusionPolicyAgent:
    """Trained on the demos, co-trained with the expert-flagged windows of the simulation data."""
    return DiffusionPolicyAgent.train(demo_data, world_model, prior=sim_data, steps=STEPS, batch_size=BATCH, seed=0,
                                      out=tmp_path_factory.mktemp("dp-run"), **TINY)


def filled_history(agent: DiffusionPolicyAgent, num_envs: int = 3, seed: int = 0, pushes: int = 3):
    g = torch.Generator().manual_seed(seed)
    history = agent.new_history(num_envs)
    history.reset({"state": torch.randn(num_envs, 4, generator=g)})
    for _ in range(pushes):
        history.push({"state": torch.randn(num_envs, 4, generator=g)}, torch.rand(num_envs, 2, generator=g) * 2 - 1)
    return history


# ------------------------------------------------------------------------------------------ training and acting
def test_trains_acts_by_receding_horizon_and_finetunes(trained: DiffusionPolicyAgent, demo_data: Path,
                                                       tmp_path: Path) -> None:
    losses = trained.train_losses
    assert len(losses) == STEPS and all(np.isfinite(losses))
    assert np.mean(losses[-20:]) < 0.85 * np.mean(losses[:20])
    assert trained.agent_type == "diffusion_policy" and not trained.plans
    cfg = trained.config
    assert (cfg.obs_steps, cfg.horizon, cfg.action_steps, cfg.sampler, cfg.inference_steps) == (2, 16, 8, "ddim", 16)
    assert int(trained.model.ema_updates) == STEPS
    assert trained.new_history(2).history == 8 + 1  # the encoder's history and one more step for f_{t-1}
    assert not any(p.requires_grad for p in trained.model.backbone.parameters())

    calls: list[int] = []
    sample = trained.model.sample

    def counting(cond, *args, **kwargs):
        calls.append(cond.shape[0])
        return sample(cond, *args, **kwargs)

    trained.model.sample = counting
    try:
        history = filled_history(trained)
        trained.reset(seed=5)
        first = []
        for step in range(2 * cfg.action_steps + 1):
            actions = trained.act(history)
            assert actions.shape == (3, 2) and actions.dtype == torch.float32
            assert bool((actions >= -1.0).all() and (actions <= 1.0).all())
            first.append(actions)
            history.push({"state": torch.full((3, 4), 0.1 * step)}, actions)
        assert calls == [3, 3, 3]  # one batched replanning every T_a steps
        trained.reset(ids=[1])
        trained.act(history)
        assert calls[-1] == 1  # only the env whose queue was emptied replans
        history = filled_history(trained)
        trained.reset(seed=5)  # the same seed and observations give the same actions
        for step in range(cfg.action_steps + 1):
            actions = trained.act(history)
            torch.testing.assert_close(actions, first[step], rtol=0, atol=0)
            history.push({"state": torch.full((3, 4), 0.1 * step)}, actions)
        trained.reset(seed=6)
        assert not torch.equal(trained.act(filled_history(trained)), first[0])
    finally:
        del trained.model.sample

    with pytest.raises(ValueError, match="past actions"):
        from simdist.planning.history import ObservationHistory

        short = ObservationHistory({"state": [4]}, 2, 0, 8, 3)
        short.reset({"state": torch.zeros(3, 4)})
        trained.act(short)

    before = {k: v.clone() for k, v in trained.model.state_dict().items()}
    tuned = trained.finetune(demo_data, freeze="heads_only", out=tmp_path, seed=1, steps=10, epochs=3,
                             windows_per_epoch=100, batch_size=8, lr=1.0, warmup_steps=0, obs_noise=None,
                             loss_weights={"dynamics": 1.0}, prior=None)
    assert isinstance(tuned, DiffusionPolicyAgent) and tuned is not trained and len(tuned.train_losses) == 10
    for key, value in trained.model.state_dict().items():  # the original is untouched
        assert torch.equal(value, before[key]), key
    state = tuned.model.state_dict()
    assert all(torch.equal(state[k], v) for k, v in before.items() if k.startswith("backbone."))
    assert not torch.equal(state["net.head.1.weight"], before["net.head.1.weight"])
    assert int(tuned.model.ema_updates) == STEPS + 10 and tuned.config.action_min == trained.config.action_min
    assert tuned.act(filled_history(tuned)).shape == (3, 2)
    with pytest.raises(ValueError, match="freeze="):
        trained.finetune(demo_data, freeze="dynamics_only", out=tmp_path, steps=1)


def test_act_time_settings(trained: DiffusionPolicyAgent) -> None:
    history = filled_history(trained)
    try:
        trained.with_settings(sampler="ddpm", inference_steps=4, seed=3)
        assert trained.model.inference_scheduler().timesteps.numel() == 4
        assert trained.act(history).shape == (3, 2)
        with pytest.raises(ConfigError, match="sampler"):
            trained.with_settings(sampler="euler")
        with pytest.raises(TypeError, match="num_samples"):
            trained.with_settings(num_samples=8)
    finally:
        trained.with_settings(sampler="ddim", inference_steps=16)
    assert trained.config.sampler == "ddim"


# ------------------------------------------------------------------------------------------ Hub I/O
def test_save_and_load_round_trip(trained: DiffusionPolicyAgent, tmp_path: Path) -> None:
    folder = trained.save_pretrained(tmp_path / "dp-toy", metrics={"steps": STEPS})
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "config.json", "model.safetensors"]
    assert read_agent_type(folder / "config.json") == "diffusion_policy"
    assert "diffusion-policy" in (folder / "README.md").read_text()
    history = filled_history(trained)
    trained.reset(seed=11)
    expected = trained.act(history)
    for loaded in (DiffusionPolicyAgent.from_pretrained(folder), load_agent(folder)):
        assert type(loaded) is DiffusionPolicyAgent
        assert loaded.config.to_dict() == trained.export_config().to_dict()
        for key, value in trained.model.state_dict().items():
            assert torch.equal(loaded.model.state_dict()[key], value), key
        loaded.reset(seed=11)
        assert torch.equal(loaded.act(history), expected)
    assert sorted(p.name for p in trained.save_pretrained(folder).parent.iterdir()) == ["dp-toy"]


def test_loading_is_strict(trained: DiffusionPolicyAgent, tmp_path: Path) -> None:
    folder = trained.save_pretrained(tmp_path / "dp-toy")
    weights = folder / "model.safetensors"
    state = load_file(str(weights))
    save_file({**state, "net.extra": torch.zeros(1)}, str(weights), metadata={"format": "pt"})
    with pytest.raises(CheckpointError, match="unexpected keys"):
        load_agent(folder)
    state.pop("ema_net.head.1.bias")
    save_file(state, str(weights), metadata={"format": "pt"})
    with pytest.raises(CheckpointError, match="missing keys"):
        DiffusionPolicyAgent.from_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "sampler": "euler"}))
    with pytest.raises(ConfigError, match="sampler"):
        DiffusionPolicyAgent.from_pretrained(folder)
    (folder / "config.json").write_text(json.dumps({**config, "agent_type": "bc"}))
    with pytest.raises(ConfigError, match="holds a 'bc' agent"):
        DiffusionPolicyAgent.from_pretrained(folder)


# ------------------------------------------------------------------------------------------ diffusion
def test_noise_schedule_and_ema(trained: DiffusionPolicyAgent) -> None:
    cfg = trained.config
    ddpm = training_scheduler(cfg)
    alphas = ddpm.alphas_cumprod
    assert alphas.numel() == 100 and bool((alphas > 0).all() and (alphas < 1).all())
    assert bool((alphas[1:] < alphas[:-1]).all())
    assert ddpm.config.beta_schedule == "squaredcos_cap_v2" and ddpm.config.clip_sample
    ddim = inference_scheduler(cfg)
    assert type(ddim).__name__ == "DDIMScheduler" and ddim.timesteps.numel() == 16
    assert ema_decay(0) == ema_decay(1) == 0.0
    assert ema_decay(2) == pytest.approx(1 - 2 ** -0.75) and ema_decay(10**9) == 0.9999


def test_samples_cover_both_modes() -> None:
    """One condition, targets at +1 and -1 with equal odds: DDIM samples land near both (an MSE regressor would
    predict their mean, 0)."""
    from simdist.components.agents.diffusion_policy.policy import DiffusionPolicy

    torch.manual_seed(0)
    cfg = DiffusionPolicyConfig(policy={"obs_spec": {"state": [1]}, "action_dim": 2, "encoder": "mlp",
                                        "latent_dim": 4, "history": 1, "hidden": [],
                                        "stats": {"obs/state": {"mean": [0.0], "std": [1.0]},
                                                  "actions": {"mean": [0.0, 0.0], "std": [1.0, 1.0]}}},
                                horizon=2, obs_steps=1, action_steps=1, down_dims=[16], step_embed_dim=32)
    model = DiffusionPolicy(cfg)
    opt = torch.optim.AdamW(model.net.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    cond = torch.zeros(128, cfg.cond_dim)
    for _ in range(200):
        sign = torch.randint(0, 2, (128, 1, 1), generator=g).float() * 2 - 1
        batch = {"cond": cond, "actions": sign.expand(128, 2, 2), "mask": torch.ones(128, 2)}
        loss = model.loss(batch, g)
        opt.zero_grad()
        loss.backward()
        opt.step()
    samples = model.sample(torch.zeros(256, cfg.cond_dim), torch.Generator().manual_seed(1), net=model.net)[:, 0]
    high, low = (samples > 0.5).all(dim=-1), (samples < -0.5).all(dim=-1)
    assert int(high.sum()) >= 64 and int(low.sum()) >= 64, samples  # each mode at least a quarter of the samples
    assert int((high | low).sum()) >= 218  # and few (under 15 %) in between


def test_network_shapes() -> None:
    net = ConditionalUnet1D(3, 10, [8, 16, 32], 5, 8, 16)
    out = net(torch.randn(4, 16, 3), torch.tensor(7), torch.randn(4, 10))
    assert out.shape == (4, 16, 3)
    assert net(torch.randn(4, 16, 3), torch.arange(4), torch.randn(4, 10)).shape == (4, 16, 3)


# ------------------------------------------------------------------------------------------ co-training data
def test_co_training_uses_only_expert_flagged_prior_steps(trained: DiffusionPolicyAgent, sim_data: Path,
                                                          demo_data: Path, tmp_path: Path) -> None:
    cfg = trained.config
    to, tp, ta = cfg.obs_steps, cfg.horizon, cfg.action_steps
    windows = encode_windows(trained.model.backbone, sim_data, obs_steps=to, horizon=tp, action_steps=ta,
                             expert_only=True)
    expected_masks, expert_steps = [], 0
    for ep in episodes(sim_data):
        expert_steps += int(ep.expert.sum())
        for t in window_times(len(ep), to, tp, ta):
            executed = np.minimum(t + np.arange(ta), len(ep) - 1)
            if ep.expert[executed].all():
                expected_masks.append(ep.expert[np.clip(t - to + 1 + np.arange(tp), 0, len(ep) - 1)])
    assert windows is not None and 0 < len(windows) == len(expected_masks) == trained.train_counts["prior_windows"]
    masks = windows.batch(torch.arange(len(windows)))["mask"]
    np.testing.assert_array_equal(masks.numpy(), np.stack(expected_masks).astype(np.float32))
    assert 0 < trained.train_counts["prior_steps"] <= expert_steps
    total = sum(len(ep) for ep in episodes(sim_data))
    assert trained.train_counts["demo_steps"] == total  # every demo step is a target
    stream = BatchStream(windows, windows, steps=2, batch_size=BATCH, prior_fraction=0.5, seed=0)
    assert stream.n_prior == BATCH // 2 and stream[0]["actions"].shape == (BATCH, tp, 2)
    # rollout-recorded demos carry no expert flag: as an expert-only prior they give nothing, and training stops
    with pytest.raises(ValueError, match="no expert-flagged windows"):
        DiffusionPolicyAgent.train(demo_data, trained.model.backbone, prior=demo_data, steps=1, out=tmp_path, **TINY)


def test_training_conditions_match_acting_conditions(trained: DiffusionPolicyAgent, demo_data: Path) -> None:
    """The condition of training window t (front-padded episode, f_{-1} = f_0) is the one the agent computes from its
    observation history after reset(o_0) and t pushes."""
    cfg, model = trained.config, trained.model
    windows = encode_windows(model.backbone, demo_data, obs_steps=cfg.obs_steps, horizon=cfg.horizon,
                             action_steps=cfg.action_steps)
    assert windows is not None
    ep = episodes(demo_data)[0]
    history = trained.new_history(1)
    history.reset({"state": ep.obs["state"][:1]})
    for t in range(12):
        if t:
            history.push({"state": ep.obs["state"][t:t + 1]}, ep.actions[t - 1:t])
        assert int(windows.time[t]) == t and int(windows.offset[t]) == 0
        with torch.no_grad():
            acting = model.condition(*history.as_inputs()[:2])
        torch.testing.assert_close(acting, windows.batch(torch.tensor([t]))["cond"], rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------------------ settings
@pytest.mark.parametrize(("settings", "field"), [
    ({"down_dims": [12, 32]}, "down_dims"),
    ({"horizon": 10}, "horizon"),
    ({"action_steps": 16}, "action_steps"),
    ({"sampler": "euler"}, "sampler"),
    ({"inference_steps": 0}, "inference_steps"),
    ({"inference_steps": 101}, "inference_steps"),
    ({"kernel_size": 4}, "kernel_size"),
    ({"lr": -1.0}, "lr"),
    ({"betas": [0.9]}, "betas"),
    ({"prior_fraction": 1.5}, "prior_fraction"),
    ({"ema_max_decay": 1.0}, "ema_max_decay"),
    ({"no_such_setting": 1}, "no_such_setting"),
    ({"steps": 0}, "steps"),
    ({"batch_size": 0}, "batch_size"),
])
def test_bad_settings_raise_before_any_work(settings: dict, field: str, world_model: WorldModel, demo_data: Path,
                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import simdist.components.agents.diffusion_policy.training as training

    def no_work(*args, **kwargs):
        raise AssertionError("data were read")

    monkeypatch.setattr(training, "encode_windows", no_work)
    monkeypatch.setattr(training, "fit", no_work)
    args = {"steps": 1, **settings}
    with pytest.raises(ConfigError, match=field):
        DiffusionPolicyAgent.train(demo_data, world_model, out=tmp_path, **args)
    if "steps" not in settings and "batch_size" not in settings:
        with pytest.raises(ConfigError, match=field):
            DiffusionPolicyAgent.from_world_model(world_model, **settings)
