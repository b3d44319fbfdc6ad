"""The UR5e image world model: the timm image encoder (layouts, separate backbones, local weights), the image
dataset tool (rendered groups, per-episode visual randomisation, resume, CLI errors) and, end to end at 32 px,
training, a strict Hub round trip and MPPI in an env that renders the cameras."""

from __future__ import annotations

import io
import json
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import simdist.envs  # noqa: F401 - first, so that MUJOCO_GL defaults to egl before mujoco is imported

timm = pytest.importorskip("timm")

from simdist import WorldModel  # noqa: E402
from simdist.components.encoders.timm_image import RANDOM_INIT, TimmImageEncoder  # noqa: E402
from simdist.components.tasks.ur5e.presets import ur5e_peg_image  # noqa: E402

CAMS = ("front", "side", "wrist")
KEYS = [f"image_{c}" for c in CAMS]
RESNET18_PARAMS = 11_176_512  # timm resnet18 without its classifier


def encoder(size: int = 32, hwc: bool = True, **kw) -> TimmImageEncoder:
    shape = [size, size, 3] if hwc else [3, size, size]
    spec = {"joints": [6], **{k: shape for k in KEYS}}
    args = dict(latent_dim=16, history=2, backbone="resnet18", image_keys=KEYS, proprio_key="joints")
    args.update(kw)
    return TimmImageEncoder(spec, 7, **args)


def images(*lead: int, size: int = 32) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    out = {k: torch.randint(0, 256, (*lead, size, size, 3), generator=g, dtype=torch.uint8) for k in KEYS}
    return {**out, "joints": torch.randn(*lead, 6, generator=g)}


# ---- encoder -------------------------------------------------------------------------------------------
def test_latents_for_steps_and_histories_and_both_layouts() -> None:
    torch.manual_seed(0)
    enc = encoder(separate_backbones=True, head_hidden=[32], raw_pixels=True).eval()
    obs = images(2, 3)
    with torch.no_grad():
        z_hist = enc.encode_latent(obs)
        z_step = enc.encode_latent({k: v[:, 1] for k, v in obs.items()})
        enc_out = enc(obs, torch.zeros(2, 2, 7))
    assert z_hist.shape == (2, 3, 16) and z_step.shape == (2, 16)
    torch.testing.assert_close(z_step, z_hist[:, 1], atol=1e-5, rtol=1e-5)
    assert enc_out.context.shape == (2, 5, 16) and enc_out.z.shape == (2, 16)  # o, a, o, a, z
    # channels-first float pixels through an encoder with the same weights give the same latent
    chw = encoder(hwc=False, separate_backbones=True, head_hidden=[32], raw_pixels=True).eval()
    chw.load_state_dict(enc.state_dict())
    planar = {k: (v.permute(0, 1, 4, 2, 3).float() if k in KEYS else v) for k, v in obs.items()}
    with torch.no_grad():
        torch.testing.assert_close(chw.encode_latent(planar), z_hist, atol=1e-5, rtol=1e-5)


def test_raw_pixels_are_scaled_to_imagenet_statistics() -> None:
    enc = encoder(raw_pixels=True)
    mean = torch.tensor([0.485, 0.456, 0.406]) * 255
    x = enc.pixels("image_front", mean.expand(2, 32, 32, 3))
    assert x.shape == (2, 3, 32, 32) and x.abs().max() < 1e-5
    assert encoder().pixels("image_front", mean.expand(2, 32, 32, 3)).max() > 100  # default: values unchanged


def test_separate_backbones_have_one_resnet_per_camera() -> None:
    shared, separate = encoder(), encoder(separate_backbones=True)
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(separate) - count(shared) == 2 * RESNET18_PARAMS
    assert set(separate.backbones) == set(KEYS) and not hasattr(separate, "backbone")
    assert isinstance(shared.head, torch.nn.Linear)  # the old head by default
    assert isinstance(encoder(head_hidden=[32]).head, torch.nn.Sequential)


def test_pretrained_file_loads_into_every_backbone(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    torch.manual_seed(3)
    ref = timm.create_model("resnet18", pretrained=False, num_classes=0)
    path = tmp_path / "resnet18-imagenet.safetensors"
    save_file({k: v.contiguous() for k, v in ref.state_dict().items()}, str(path))
    enc = encoder(separate_backbones=True, pretrained_file=str(path))
    for key in KEYS:
        loaded = enc.backbones[key].state_dict()
        assert loaded.keys() == ref.state_dict().keys()
        assert all(torch.equal(loaded[k], v) for k, v in ref.state_dict().items()), key
    assert "resnet18-imagenet.safetensors" in enc.weights_source and "sha256" in enc.weights_source
    assert encoder().weights_source == RANDOM_INIT


def test_a_missing_pretrained_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.safetensors"
    with pytest.raises(FileNotFoundError, match=r"pretrained_file .*nope\.safetensors.* does not exist"):
        encoder(pretrained_file=str(missing))


def test_the_normaliser_leaves_raw_pixels_alone_and_saved_configs_drop_the_local_file(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    weights = tmp_path / "r10.safetensors"
    save_file({k: v.contiguous() for k, v in timm.create_model("resnet10t", num_classes=0).state_dict().items()},
              str(weights))
    cfg = ur5e_peg_image(image_size=32, pretrained_file=str(weights))
    kwargs = {**cfg.encoder.kwargs, "backbone": "resnet10t", "separate_backbones": False}
    wm = WorldModel(cfg.replace(encoder={"name": "timm_image", "kwargs": kwargs})).eval()
    assert wm.raw_obs_keys == set(KEYS)
    assert not any(k.startswith("obs/image") for k in wm.normalizer.keys) and "obs/joints" in wm.normalizer.keys
    obs = images(2, 6)
    normed = wm.normalize_obs(obs)
    assert all(normed[k] is obs[k] for k in KEYS)
    floats = {k: v.float() for k, v in obs.items()}
    with torch.no_grad():
        torch.testing.assert_close(wm.encode_latent(obs), wm.encode_latent(floats))
    folder = wm.save_pretrained(tmp_path / "model")
    weights.unlink()  # the trained weights travel in model.safetensors: the local file is not needed to load
    saved = json.loads((folder / "config.json").read_text())["encoder"]["kwargs"]
    assert saved["pretrained_file"] is None and "r10.safetensors" in saved["weights_source"]
    card = (folder / "README.md").read_text()
    assert "encoder initial weights | pretrained (ImageNet) weights from the local file r10.safetensors" in card
    loaded = WorldModel.from_pretrained(folder)
    assert loaded.encoder.weights_source == wm.encoder.weights_source
    assert all(torch.equal(v, loaded.state_dict()[k]) for k, v in wm.state_dict().items())


# ---- image datasets ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gl() -> None:
    from simdist.offscreen import offscreen_gl_error

    error = offscreen_gl_error()
    if error is not None:
        pytest.skip(f"no offscreen GL context: {error}")


def write_state_dataset(out: Path, length: int, copies: int = 1, seed: int = 0) -> Path:
    """Two short training-simulator episodes of random actions (each written ``copies`` times, new ids)."""
    from simdist.components.tasks.ur5e.assembly import PegAssembly
    from simdist.components.tasks.ur5e.env import ArmEnvConfig, UR5eEnv
    from simdist.data.schema import DatasetSpec, Episode
    from simdist.data.shards import EpisodeWriter

    env = UR5eEnv(PegAssembly(), 2, ArmEnvConfig(), seed=seed)
    rng = np.random.default_rng(seed)
    obs, steps, actions = env.reset(seed=seed), [], []
    for _ in range(length):
        steps.append({k: v.copy() for k, v in obs.items()})
        actions.append(rng.uniform(-0.5, 0.5, (2, 7)).astype(np.float32))
        obs = env.step(actions[-1]).obs
    spec = DatasetSpec.from_env(env)
    env.close()
    with EpisodeWriter(out, spec, metadata={"task": "ur5e-peg"}) as writer:
        for i in range(2 * copies):
            e = i % 2
            writer.write(Episode(
                obs={k: np.stack([s[k][e] for s in steps]) for k in spec.obs},
                actions=np.stack([a[e] for a in actions]), commands=np.zeros((length, 0)),
                rewards=rng.normal(size=length), values=rng.normal(size=length), expert=np.zeros(length, bool),
                episode_id=i))
    return out


def stored_dtype(folder: Path, field: str) -> np.dtype:
    shard = next(folder.glob("*.tar"))
    with tarfile.open(shard) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(field))
        return np.lib.format.read_array(io.BytesIO(tar.extractfile(member).read())).dtype


def test_images_are_rendered_per_episode_with_their_own_visuals(gl, tmp_path: Path) -> None:
    from simdist.components.tasks.ur5e.images import add_images
    from simdist.data.shards import iter_episodes, load_spec

    src = write_state_dataset(tmp_path / "state", length=4, copies=2)  # episodes 0, 2 (and 1, 3) share states
    summary = add_images(src, tmp_path / "img", cameras=CAMS, size=32, seed=5, progress=False)
    assert summary["written_episodes"] == 4
    spec = load_spec(tmp_path / "img")
    assert all(spec.obs[k] == (32, 32, 3) for k in KEYS) and spec.obs["joints"] == (6,)
    assert stored_dtype(tmp_path / "img", "obs.image_front.npy") == np.uint8  # a quarter of float32
    eps = {ep.episode_id: ep for ep in iter_episodes(str(tmp_path / "img"), shuffle_shards=False)}
    for ep in eps.values():
        assert ep.obs["image_wrist"].shape == (4, 32, 32, 3) and ep.obs["image_wrist"].dtype == np.float32
        assert ep.obs["image_front"].min() >= 0 and ep.obs["image_front"].max() <= 255
        np.testing.assert_array_equal(ep.obs["joints"], ep.obs["proprio"][:, :6])
    np.testing.assert_array_equal(eps[0].obs["physics"], eps[2].obs["physics"])
    assert eps[0].meta["visual_seed"] != eps[2].meta["visual_seed"]
    for key in KEYS:  # the same states, different visual randomisation
        assert np.abs(eps[0].obs[key] - eps[2].obs[key]).mean() > 1.0, key
    again = add_images(src, tmp_path / "img", cameras=CAMS, size=32, seed=5, progress=False)
    assert again["written_episodes"] == 0  # resumed: nothing left to do
    nominal = add_images(src, tmp_path / "nominal", cameras=("front",), size=32, randomization=None,
                         max_episodes=3, progress=False)
    assert nominal["episodes"] == 3
    same = {ep.episode_id: ep for ep in iter_episodes(str(tmp_path / "nominal"), shuffle_shards=False)}
    np.testing.assert_array_equal(same[0].obs["image_front"], same[2].obs["image_front"])


def test_the_command_names_bad_options(gl, tmp_path: Path) -> None:
    """``simdist generate --task ur5e-peg --images-from SRC``: a folder that is no dataset and an unknown camera
    are named in one line before any work."""
    from simdist.data.schema import DataError
    from simdist.tasks import TaskError
    from simdist.tools.generate import main

    with pytest.raises(DataError, match="--images-from .*not a dataset folder"):
        main(["--task", "ur5e-peg", "--images-from", str(tmp_path / "none"), "--out", str(tmp_path / "o")])
    src = write_state_dataset(tmp_path / "state", length=4, copies=1)
    with pytest.raises(TaskError, match="--cameras 'front,top'"):
        main(["--task", "ur5e-peg", "--images-from", str(src), "--out", str(tmp_path / "o"), "--cameras", "front,top"])


# ---- end to end ----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_image_model_trains_round_trips_and_plans(gl, tmp_path: Path) -> None:
    import lightning as L

    import simdist
    from simdist.components.tasks.ur5e.assembly import PegAssembly
    from simdist.components.tasks.ur5e.env import UR5eEnv
    from simdist.components.tasks.ur5e.images import add_images, camera_settings
    from simdist.data import TrajectoryDataModule
    from simdist.planning import ObservationHistory
    from simdist.tasks import make_task
    from simdist.training import PretrainModule

    src = write_state_dataset(tmp_path / "state", length=20)
    add_images(src, tmp_path / "img", cameras=CAMS, size=32, progress=False)
    L.seed_everything(0)
    module = PretrainModule(model=ur5e_peg_image(image_size=32).to_dict(), warmup_steps=1, decay_steps=10)
    dm = TrajectoryDataModule(str(tmp_path / "img"), history=5, horizon=5, batch_size=4, shuffle_buffer=16,
                              front_pad=5, heldout_fraction=0.0, seed=0)
    trainer = L.Trainer(accelerator="cpu", max_steps=3, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
                        limit_val_batches=0, default_root_dir=str(tmp_path))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".*does not have many workers.*")
        trainer.fit(module, dm)
    assert trainer.global_step == 3 and torch.isfinite(trainer.callback_metrics["train/loss"])

    wm = module.world_model.eval()
    folder = wm.save_pretrained(tmp_path / "model")
    assert "encoder initial weights | random init" in (folder / "README.md").read_text()
    loaded = WorldModel.from_pretrained(folder)  # strict
    assert all(torch.equal(v, loaded.state_dict()[k]) for k, v in wm.state_dict().items())

    planner = simdist.create("planner", "mppi", world_model=loaded, num_samples=16, iterations=2, num_elites=4)
    settings = camera_settings(planner)
    assert settings == {"cameras": CAMS, "image_size": 32}
    task = make_task("ur5e-peg", profile=None)
    env = UR5eEnv(PegAssembly(), 2, task.env_config(grid="wide", **settings), seed=0)
    try:
        obs = env.reset(seed=0)
        assert obs["image_side"].shape == (2, 32, 32, 3) and obs["image_side"].dtype == np.uint8
        np.testing.assert_array_equal(obs["joints"], obs["proprio"][:, :6])
        history = ObservationHistory.for_model(loaded, num_envs=2)
        history.reset(obs)
        for _ in range(3):
            action = planner.act(history)
            assert action.shape == (2, 7) and torch.isfinite(action).all()
            obs = env.step(action.numpy()).obs
            history.push(obs, action)
    finally:
        env.close()


def test_state_models_and_experts_need_no_cameras() -> None:
    from simdist.components.tasks.ur5e.assembly import PegAssembly
    from simdist.components.tasks.ur5e.expert import make_expert
    from simdist.components.tasks.ur5e.images import camera_settings

    class StateAgent:
        world_model = WorldModel.from_preset("ur5e-peg")

    assert camera_settings(StateAgent()) == {}
    assert camera_settings(make_expert(PegAssembly())) == {}


def test_evaluation_envs_render_what_an_image_agent_reads(gl, monkeypatch: pytest.MonkeyPatch) -> None:
    import simdist.workflows.rollout
    from simdist.planning import ObservationHistory
    from simdist.tasks import make_task
    from simdist.workflows.rollout import RolloutResult

    class ImageAgent:
        def new_history(self, num_envs: int) -> ObservationHistory:
            return ObservationHistory({"joints": [6], "image_side": [24, 24, 3]}, 7, history=1, num_envs=num_envs)

    seen = []

    def fake_rollout(env, agent, episodes, seed):
        seen.append((env.config.cameras, env.config.image_size, env.observation_spec["image_side"].shape))
        return RolloutResult(np.zeros(0), np.zeros(0), np.zeros(0, bool))

    monkeypatch.setattr(simdist.workflows.rollout, "rollout", fake_rollout)
    make_task("ur5e-peg").evaluate(ImageAgent(), trials=1, seed=0, num_envs=1)
    assert seen == [(("side",), 24, (24, 24, 3))]
