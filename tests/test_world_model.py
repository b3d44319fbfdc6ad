"""WorldModel: official Go2 parameter counts, shapes, imagination, normalisation, errors."""

from __future__ import annotations

import json

import pytest
import torch

from simdist import WorldModel, WorldModelConfig
from simdist.model.config import ConfigError
from tests.helpers import random_batch, tiny_config

GO2_COUNTS = {
    "encoder": 149_408, "dynamics": 133_504, "reward": 56_769, "value": 56_001, "policy": 267_788,
    "action_embedding": 2_432, "command_embedding": 1_856, "total": 667_758,
}


def test_go2_preset_parameter_counts() -> None:
    counts = WorldModel.from_preset("go2").count_parameters(trainable_only=True)
    assert {k: counts[k] for k in GO2_COUNTS} == GO2_COUNTS
    stats = sum(b.numel() for n, b in WorldModel.from_preset("go2").normalizer.named_buffers() if n != "fitted")
    assert stats == 734  # the official scaler's 734 statistics


def test_go2_forward_shapes() -> None:
    wm = WorldModel.from_preset("go2")
    batch = random_batch(wm.config, batch=2)
    pred = wm.predict(batch)
    assert pred.latents.shape == (2, 25, 64)
    assert pred.rewards.shape == pred.values.shape == (2, 25)
    assert pred.actions.shape == (2, 25, 12)
    enc = wm.encode(batch["obs_hist"], batch["act_hist"])
    assert enc.context.shape == (2, 51, 64)  # 25 obs + 25 action tokens + the latent token


@pytest.mark.parametrize("dynamics", ["transformer", "mlp"])
def test_imagine_matches_per_sample_prediction(dynamics: str) -> None:
    """Imagining N sequences against one shared context equals N separate forward passes."""
    cfg = tiny_config(dynamics={"name": dynamics, "kwargs": {"hidden": [32]} if dynamics == "mlp" else
                                {"num_layers": 1, "num_heads": 2}})
    wm = WorldModel(cfg).eval()
    batch = random_batch(cfg, batch=2)
    enc = wm.encode(batch["obs_hist"], batch["act_hist"])
    actions = torch.randn(2, 5, cfg.horizon, cfg.action_dim)
    im = wm.imagine(enc, actions, batch["fut_cmds"])
    assert im.latents.shape == (2, 5, cfg.horizon, cfg.latent_dim)
    for n in range(5):
        single = wm.predict({**batch, "fut_acts": actions[:, n]})
        torch.testing.assert_close(im.latents[:, n], single.latents, atol=1e-5, rtol=1e-5)
        rewards = wm.normalizer.denormalize("rewards", single.rewards.unsqueeze(-1)).squeeze(-1)
        torch.testing.assert_close(im.rewards[:, n], rewards, atol=1e-5, rtol=1e-5)


def test_normalizer_applied_inside_and_unnormalised_outputs() -> None:
    cfg = tiny_config()
    wm = WorldModel(cfg).eval()
    batch = random_batch(cfg)
    enc = wm.encode(batch["obs_hist"], batch["act_hist"])
    base = wm.imagine(enc, batch["fut_acts"], batch["fut_cmds"])
    stats = wm.normalizer.stats()
    stats["rewards"] = {"mean": [3.0], "std": [2.0]}
    stats["values"] = {"mean": [-1.0], "std": [10.0]}
    wm.normalizer.set_stats(stats)
    shifted = wm.imagine(enc, batch["fut_acts"], batch["fut_cmds"])
    torch.testing.assert_close(shifted.rewards, base.rewards * 2.0 + 3.0, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(shifted.values, base.values * 10.0 - 1.0, atol=1e-4, rtol=1e-4)
    # input statistics change the encoding: they are applied inside the model
    stats["obs/state"] = {"mean": [1.0] * 4, "std": [3.0] * 4}
    wm.normalizer.set_stats(stats)
    assert not torch.allclose(wm.encode(batch["obs_hist"], batch["act_hist"]).z, enc.z)


def test_normalizer_rejects_bad_stats() -> None:
    wm = WorldModel(tiny_config())
    stats = wm.normalizer.stats()
    with pytest.raises(ValueError, match="NaN or Inf"):
        wm.normalizer.set_stats({**stats, "actions": {"mean": [float("nan"), 0.0], "std": [1.0, 1.0]}})
    with pytest.raises(ValueError, match="expected 2"):
        wm.normalizer.set_stats({**stats, "actions": {"mean": [0.0], "std": [1.0]}})
    with pytest.raises(KeyError, match="missing keys"):
        wm.normalizer.set_stats({"actions": stats["actions"]})


def test_bad_inputs_name_the_problem() -> None:
    cfg = tiny_config()
    wm = WorldModel(cfg)
    batch = random_batch(cfg)
    with pytest.raises(KeyError, match="missing keys"):
        wm.predict({k: v for k, v in batch.items() if k != "fut_acts"})
    with pytest.raises(ValueError, match="fut_acts"):
        wm.predict({**batch, "fut_acts": torch.randn(3, cfg.horizon, 5)})
    with pytest.raises(KeyError, match="'state' missing"):
        wm.encode({"other": torch.randn(3, 5, 4)}, batch["act_hist"])
    with pytest.raises(ValueError, match="trailing shape"):
        wm.encode({"state": torch.randn(3, 5, 7)}, batch["act_hist"])


def test_config_json_round_trip_and_errors() -> None:
    cfg = tiny_config()
    again = WorldModelConfig.from_dict(cfg.to_dict())
    assert again == cfg
    with pytest.raises(ConfigError, match="unknown world-model config keys"):
        WorldModelConfig.from_dict({**cfg.to_dict(), "bogus": 1})
    with pytest.raises(ConfigError, match="newer"):
        WorldModelConfig.from_dict({**cfg.to_dict(), "schema_version": 99})
    v0 = cfg.to_dict()
    v0["schema_version"] = 0
    v0["history_len"] = v0.pop("history")
    v0["components"] = {k: v0.pop(k) for k in ("encoder", "dynamics", "reward_head", "value_head", "policy_head")}
    assert WorldModelConfig.from_dict(v0) == cfg


def test_heightmap_cnn_same_padding_shapes() -> None:
    from simdist.components.encoders.heightmap import HeightMapCNN, restore_height_map

    cnn = HeightMapCNN()
    assert cnn.out_hw == (3, 2)
    flat = torch.arange(315.0).reshape(1, 315)
    img = restore_height_map(flat, (15, 21))
    assert img.shape == (1, 1, 21, 15)
    assert img[0, 0, 0, 0] == 314.0  # both axes flipped
    assert cnn(torch.randn(2, 7, 315)).shape == (2, 7, 64)


def test_timm_image_encoder_builds_from_local_weights(tmp_path) -> None:
    timm = pytest.importorskip("timm")
    from safetensors.torch import save_file

    ref = timm.create_model("resnet10t", pretrained=False, num_classes=0)
    weights = tmp_path / "resnet10t.safetensors"
    save_file({k: v.contiguous() for k, v in ref.state_dict().items()}, str(weights))
    cfg = tiny_config(
        obs_spec={"image": [3, 32, 32], "state": [4]},
        encoder={"name": "timm_image", "kwargs": {"backbone": "resnet10t", "proprio_key": "state",
                                                   "pretrained_file": str(weights)}},
    )
    wm = WorldModel(cfg)
    loaded = wm.encoder.backbone.state_dict()
    assert all(torch.equal(loaded[k], v) for k, v in ref.state_dict().items())
    batch = random_batch(cfg, batch=2)
    assert wm.predict(batch).latents.shape == (2, cfg.horizon, cfg.latent_dim)


def test_config_missing_key_is_named() -> None:
    data = tiny_config().to_dict()
    del data["dynamics"]
    with pytest.raises(ConfigError, match=r"missing required keys: \['dynamics'\]"):
        WorldModelConfig.from_dict(data)


@pytest.mark.parametrize("field,value", [("action_dim", 0), ("history", -1), ("latent_dim", 2.5), ("dt", 0.0),
                                         ("command_dim", -3), ("obs_spec", {"state": [0]})])
def test_config_fields_are_range_checked(field: str, value: object) -> None:
    from simdist.model.config import ConfigError

    data = WorldModel.from_preset("toy").config.to_dict()
    with pytest.raises(ConfigError, match=field):
        WorldModelConfig.from_dict({**data, field: value})


def _policy_chunk(wm: WorldModel, batch: dict) -> torch.Tensor:
    return wm.policy_actions(wm.encode(batch["obs_hist"], batch["act_hist"]), batch["fut_cmds"])


@pytest.mark.parametrize("spec, reads_actions, reads_history, reads_masked", [
    (None, True, True, True),
    ({"actions": False}, False, True, True),
    ({"history": False}, False, False, True),
    ({"actions": False, "mask_obs": {"state": [3]}}, False, True, False),
    ({"history": False, "mask_obs": {"state": [2, 3]}}, False, False, False),
])
def test_policy_input_hides_what_it_names(spec: dict | None, reads_actions: bool, reads_history: bool,
                                          reads_masked: bool) -> None:
    """``policy_input``: the policy's chunk changes with the past actions, the history and the masked
    observation dims exactly when the policy reads them; the dynamics and heads read everything either way."""
    wm = WorldModel(tiny_config(policy_input=spec)).eval()
    batch = random_batch(wm.config, batch=2)
    base = _policy_chunk(wm, batch)
    latents = wm.predict(batch).latents

    def changed(new: dict) -> bool:
        return not torch.allclose(_policy_chunk(wm, new), base)

    obs_past = {k: v.clone() for k, v in batch["obs_hist"].items()}
    obs_past["state"][:, :-1] += 1.0
    obs_masked = {k: v.clone() for k, v in batch["obs_hist"].items()}
    obs_masked["state"][..., 3] += 1.0
    assert changed({**batch, "act_hist": batch["act_hist"] + 1.0}) == reads_actions
    assert changed({**batch, "obs_hist": obs_past}) == reads_history
    assert changed({**batch, "obs_hist": obs_masked}) == reads_masked
    # the dynamics still read the past actions, whatever the policy reads
    assert not torch.allclose(wm.predict({**batch, "act_hist": batch["act_hist"] + 1.0}).latents, latents)
    if spec is None:
        assert "policy_input" not in wm.config.to_dict()  # configs without it stay byte-identical
    else:
        again = WorldModelConfig.from_dict(json.loads(wm.config.to_json()))
        assert again.policy_input == wm.config.policy_input


@pytest.mark.parametrize("spec, message", [
    ({"actions": "no"}, "policy_input.actions must be true or false"),
    ({"past": False}, "unknown policy_input keys"),
    ({"mask_obs": {"image": [0]}}, "'image' is not a flat observation group"),
    ({"mask_obs": {"state": [4]}}, "policy_input.mask_obs['state'] must be a list of dims in [0, 4)"),
    ([1], "policy_input must be a mapping"),
])
def test_policy_input_errors_name_the_key(spec: object, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        tiny_config(policy_input=spec)
    assert message in str(err.value)
