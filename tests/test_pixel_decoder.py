"""``decoder_head/pixels`` (Table I's reconstruction ablation on image world models), at toy scale: a timm test
backbone on two small cameras of either layout, decoded shapes and targets, the overlay's loss term, gradients
into the encoder, a Hub round trip, and ``decoder_head/mlp`` unchanged."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F

pytest.importorskip("timm")

from simdist import WorldModel  # noqa: E402
from simdist.components.heads.decoder import MLPObservationDecoder  # noqa: E402
from simdist.components.heads.pixel_decoder import PixelObservationDecoder  # noqa: E402
from simdist.model.config import WorldModelConfig  # noqa: E402
from simdist.model.losses import WorldModelLoss  # noqa: E402
from simdist.registry import get  # noqa: E402
from tests.conftest import fill_stats  # noqa: E402
from tests.helpers import tiny_config  # noqa: E402

warnings.filterwarnings("ignore", ".*modules in eval mode.*")

#: one channels-last camera (not square) and one channels-first, as TimmImageEncoder tells them apart
SPEC = {"joints": [6], "image_front": [16, 24, 3], "image_wrist": [3, 16, 16]}
IMAGES = ("image_front", "image_wrist")
MEAN, STD = torch.tensor([0.485, 0.456, 0.406]), torch.tensor([0.229, 0.224, 0.225])
PIXELS = {"name": "pixels", "kwargs": {"hidden": [32], "base_channels": 16}}


@pytest.fixture(autouse=True, scope="module")
def _one_thread(single_thread: None) -> None:
    """Every test here on one thread (the conftest fixture)."""


def image_config(decoder: dict[str, Any] | None = PIXELS, spec: dict[str, list[int]] = SPEC) -> WorldModelConfig:
    images = [k for k in spec if k.startswith("image")]
    proprio = "joints" if "joints" in spec else None
    return WorldModelConfig(
        obs_spec=spec,
        action_dim=7,
        history=2,
        horizon=2,
        latent_dim=16,
        encoder={
            "name": "timm_image",
            "kwargs": {"backbone": "test_resnet", "image_keys": images, "proprio_key": proprio, "raw_pixels": True},
        },
        dynamics={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 2}},
        reward_head={"name": "mlp", "kwargs": {"hidden": [16]}},
        value_head={"name": "mlp", "kwargs": {"hidden": [16]}},
        decoder_head=decoder,
    )


def model(decoder: dict[str, Any] | None = PIXELS, seed: int = 0) -> WorldModel:
    torch.manual_seed(seed)
    wm = WorldModel(image_config(decoder))
    fill_stats(wm)
    return wm


def observations(*lead: int, spec: dict[str, list[int]] = SPEC, seed: int = 0) -> dict[str, torch.Tensor]:
    """Smooth images (a random 2×2 colour pattern, bilinearly upsampled) as float pixels in [0, 255]."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for key, shape in spec.items():
        if not key.startswith("image"):
            out[key] = torch.randn(*lead, *shape, generator=g)
            continue
        hwc = shape[-1] == 3
        h, w = (shape[0], shape[1]) if hwc else (shape[1], shape[2])
        coarse = torch.rand(int(torch.tensor(lead).prod()), 3, 2, 2, generator=g)
        img = F.interpolate(coarse, size=(h, w), mode="bilinear", align_corners=True) * 255
        out[key] = (img.permute(0, 2, 3, 1) if hwc else img).reshape(*lead, *shape)
    return out


def window_batch(cfg: WorldModelConfig, batch: int = 2) -> dict[str, Any]:
    h, t, g = cfg.history, cfg.horizon, torch.Generator().manual_seed(1)
    return {
        "obs_hist": observations(batch, h + 1, spec=cfg.obs_spec, seed=2),
        "fut_obs": observations(batch, t, spec=cfg.obs_spec, seed=3),
        "act_hist": torch.randn(batch, h, cfg.action_dim, generator=g),
        "fut_acts": torch.randn(batch, t, cfg.action_dim, generator=g),
        "fut_cmds": torch.zeros(batch, t + 1, cfg.command_dim),
        "rewards": torch.randn(batch, t, generator=g),
        "values": torch.randn(batch, t, generator=g),
        "expert": torch.ones(batch, t),
    }


# ---- shapes, targets, errors ----------------------------------------------------------------------------
def test_every_group_is_decoded_in_its_recorded_shape_and_the_targets_are_the_backbone_input() -> None:
    wm = model()
    assert get("decoder_head", "pixels") is PixelObservationDecoder and isinstance(wm.decoder, PixelObservationDecoder)
    assert wm.decoder.image_groups == list(IMAGES) and wm.decoder.state_groups == ["joints"]
    obs = observations(2, 3)
    with torch.no_grad():
        out = wm.decoder(wm.encode_latent(obs))
    assert list(out) == list(SPEC)
    assert {k: tuple(v.shape) for k, v in out.items()} == {k: (2, 3, *s) for k, s in SPEC.items()}
    targets = wm.decoder.targets(wm.normalize_obs(obs), wm.encoder.pixels)
    torch.testing.assert_close(targets["image_front"], (obs["image_front"] / 255 - MEAN) / STD)  # (H, W, C)
    torch.testing.assert_close(
        targets["image_wrist"], (obs["image_wrist"] / 255 - MEAN.view(3, 1, 1)) / STD.view(3, 1, 1)
    )  # (C, H, W)
    torch.testing.assert_close(targets["joints"], wm.normalizer.normalize("obs/joints", obs["joints"]))
    # without an encoder's ``pixels``: raw pixels scaled to [0, 1]
    plain = wm.decoder.targets(wm.normalize_obs(obs))["image_front"]
    assert plain.shape == obs["image_front"].shape and 0 <= plain.min() and plain.max() <= 1


def test_the_error_is_the_mean_of_the_pixel_and_state_terms() -> None:
    wm = model()
    obs = observations(2, 3)
    normed = wm.normalize_obs(obs)
    with torch.no_grad():
        z = wm.encode_latent(obs)
        pred, target = wm.decoder(z), wm.decoder.targets(normed, wm.encoder.pixels)
        terms = wm.decoder.reconstruction_terms(z, normed, wm.encoder.pixels)
        pixel_sq = torch.cat([(pred[k] - target[k]).pow(2).flatten() for k in IMAGES])
        torch.testing.assert_close(terms["pixels"], pixel_sq.mean())
        torch.testing.assert_close(terms["state"], (pred["joints"] - target["joints"]).pow(2).mean())
        torch.testing.assert_close(wm.reconstruction_error(obs), (terms["pixels"] + terms["state"]) / 2)


def test_a_model_of_pixels_alone_needs_the_pixel_decoder_and_a_state_model_the_mlp() -> None:
    only = {"image_front": [16, 16, 3]}
    with pytest.raises(ValueError, match=r"decoder_head: \{name: pixels\}.*reconstruction-image\.yaml"):
        WorldModel(image_config({"name": "mlp", "kwargs": {}}, spec=only))
    wm = WorldModel(image_config(spec=only))
    assert wm.decoder.state_groups == [] and wm.decoder.state is None
    with torch.no_grad():
        terms = wm.decoder.reconstruction_terms(
            wm.encode_latent(observations(2, spec=only)), observations(2, spec=only), wm.encoder.pixels
        )
    assert set(terms) == {"pixels"}
    with pytest.raises(ValueError, match="decoder_head: mlp"):
        WorldModel(tiny_config(decoder_head={"name": "pixels", "kwargs": {}}))


# ---- training -------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:LightningCLI's args parameter")
def test_the_overlay_adds_the_reconstruction_term() -> None:
    from simdist.training import PretrainModule
    from tests.test_recipes import PEG, effective_config

    small = {"obs_spec": {"joints": [6], **{f"image_{c}": [16, 16, 3] for c in ("front", "side", "wrist")}}}
    terms = {}
    for overlay in ((), ("recipes/table1/reconstruction-image.yaml",)):
        args = effective_config(PEG, "recipes/ur5e-peg/pretrain-image.yaml", *overlay)["model"]["init_args"]
        assert args["preset"] == "ur5e-peg-image"
        encoder = WorldModel.from_preset("ur5e-peg-image").config.encoder
        overrides = {
            **(args.get("preset_overrides") or {}),
            **small,
            "encoder": {
                "name": encoder.name,
                "kwargs": {**encoder.kwargs, "backbone": "test_resnet", "separate_backbones": False, "head_hidden": []},
            },
        }
        torch.manual_seed(0)
        module = PretrainModule(preset=args["preset"], preset_overrides=overrides, loss_weights=args["loss_weights"])
        fill_stats(module.world_model)
        with torch.no_grad():
            terms[overlay] = module.loss_fn(module.world_model, window_batch(module.world_model.config))
        if overlay:
            assert isinstance(module.world_model.decoder, PixelObservationDecoder)
        else:
            assert module.world_model.decoder is None
    assert "reconstruction" not in terms[()]
    with_rec = terms[("recipes/table1/reconstruction-image.yaml",)]
    assert "reconstruction" in with_rec and torch.isfinite(with_rec["reconstruction"])


def test_reconstruction_trains_the_encoder_and_lowers_its_error() -> None:
    wm = model()
    batch = window_batch(wm.config)
    loss = WorldModelLoss(dynamics=0.0, reward=0.0, value=0.0, action=0.0, reconstruction=1.0)
    opt = torch.optim.Adam(wm.parameters(), lr=3e-3)
    before = {k: v.detach().clone() for k, v in wm.encoder.named_parameters()}
    errors = []
    for _ in range(8):
        terms = loss(wm, batch)
        assert set(terms) == {"reconstruction", "loss"}
        opt.zero_grad()
        terms["loss"].backward()
        if not errors:
            first = next(wm.encoder.backbone.parameters())  # the stem: the gradient crosses the whole backbone
            assert first.grad is not None and first.grad.abs().sum() > 0
        opt.step()
        errors.append(terms["reconstruction"].item())
    changed = [k for k, v in wm.encoder.named_parameters() if not torch.equal(v, before[k])]
    assert any(k.startswith("backbone.") for k in changed) and any(k.startswith("head.") for k in changed)
    assert errors[-1] < 0.8 * errors[0], errors


def test_a_hub_round_trip_keeps_the_decoder(tmp_path: Path) -> None:
    wm = model(seed=4).eval()
    folder = wm.save_pretrained(tmp_path / "model")
    loaded = WorldModel.from_pretrained(folder).eval()  # strict
    assert loaded.config.decoder_head == wm.config.decoder_head
    assert isinstance(loaded.decoder, PixelObservationDecoder)
    ours, theirs = wm.decoder.state_dict(), loaded.decoder.state_dict()
    assert ours.keys() == theirs.keys() and all(torch.equal(v, theirs[k]) for k, v in ours.items())
    obs = observations(2, 3)
    with torch.no_grad():
        torch.testing.assert_close(loaded.reconstruction_error(obs), wm.reconstruction_error(obs))


# ---- decoder_head/mlp -----------------------------------------------------------------------------------
def old_error(wm: WorldModel, obs: dict[str, torch.Tensor]) -> torch.Tensor:
    """The reconstruction error as it was before decoders could compute their own."""
    normed = wm.normalize_obs(obs)
    target = torch.cat([normed[k].flatten(start_dim=2) for k in wm.decoder.groups], dim=-1)
    return (wm.decoder(wm.encoder.encode_latent(normed)) - target).pow(2).mean()


def test_the_mlp_decoder_is_unchanged() -> None:
    torch.manual_seed(0)
    state = WorldModel(tiny_config(decoder_head={"name": "mlp", "kwargs": {"hidden": [32]}}))
    fill_stats(state)
    obs = {"state": torch.randn(3, 4, 4)}
    image = model({"name": "mlp", "kwargs": {"hidden": [32]}})  # decodes the joints only
    assert isinstance(image.decoder, MLPObservationDecoder) and image.decoder.groups == ["joints"]
    with torch.no_grad():
        for wm, o in ((state, obs), (image, observations(2, 3))):
            assert torch.equal(wm.reconstruction_error(o), old_error(wm, o))

    class Concatenating(torch.nn.Module):  # a decoder with only forward and groups: the old computation
        groups = ["state"]

        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Linear(16, 4)

        def forward(self, latents: torch.Tensor) -> torch.Tensor:
            return self.net(latents)

    state.decoder = Concatenating()
    with torch.no_grad():
        assert torch.equal(state.reconstruction_error(obs), old_error(state, obs))
