"""Lightning pretraining/finetuning on real shards: loss falls, freezing holds, resume, export, CLI."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import lightning as L
import pytest
import torch
import yaml

from simdist import WorldModel
from simdist.data import TrajectoryDataModule
from simdist.training import FinetuneModule, PretrainModule
from simdist.training.schedule import warmup_cosine
from tests.helpers import tiny_config, write_linear_dataset

warnings.filterwarnings("ignore", ".*modules in eval mode.*")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return write_linear_dataset(tmp_path_factory.mktemp("data") / "sim", episodes=12, length=40)


def datamodule(path, **kw) -> TrajectoryDataModule:
    args = dict(history=4, horizon=3, batch_size=16, windows_per_epoch=160, heldout_fraction=0.2,
                shuffle_buffer=200, seed=0)
    args.update(kw)
    return TrajectoryDataModule(str(path), **args)


def trainer(tmp_path, **kw) -> L.Trainer:
    args = dict(accelerator="cpu", logger=False, enable_progress_bar=False, enable_model_summary=False,
                num_sanity_val_steps=0, default_root_dir=str(tmp_path), deterministic=True)
    args.update(kw)
    return L.Trainer(**args)


def test_schedule_matches_optax_shape() -> None:
    assert warmup_cosine(0, 2e-4, 10, 100, 1e-4) == 0
    assert warmup_cosine(5, 2e-4, 10, 100, 1e-4) == pytest.approx(1e-4)
    assert warmup_cosine(10, 2e-4, 10, 100, 1e-4) == pytest.approx(2e-4)
    assert warmup_cosine(55, 2e-4, 10, 100, 1e-4) == pytest.approx(1.5e-4)
    assert warmup_cosine(100, 2e-4, 10, 100, 1e-4) == pytest.approx(1e-4)
    assert warmup_cosine(10**6, 2e-4, 10, 100, 1e-4) == pytest.approx(1e-4)


def test_pretrain_fits_normaliser_and_lowers_loss(dataset, tmp_path) -> None:
    L.seed_everything(0)
    module = PretrainModule(model=tiny_config().to_dict(), lr=3e-3, warmup_steps=5, decay_steps=200)
    dm = datamodule(dataset)
    t = trainer(tmp_path, max_epochs=3, limit_val_batches=3)
    t.fit(module, dm)
    norm = module.world_model.normalizer
    assert bool(norm.fitted)
    torch.testing.assert_close(norm.mean("obs/state"), torch.tensor(dm.stats.to_dict()["obs/state"]["mean"]))
    metrics = t.callback_metrics
    for term in ("dynamics", "reward", "value", "action"):
        assert f"val/{term}" in metrics
    first = PretrainModule(model=tiny_config().to_dict())
    first.world_model.normalizer.load_state_dict(norm.state_dict())
    fresh = trainer(tmp_path, limit_val_batches=3).validate(first, dm, verbose=False)[0]["val/loss"]
    assert metrics["val/loss"] < 0.7 * fresh


def pretrained_folder(dataset, tmp_path, steps: int) -> Path:
    """A tiny model pretrained for ``steps`` on ``dataset`` and saved as a folder (what finetuning starts from)."""
    pre = PretrainModule(model=tiny_config().to_dict(), lr=3e-3, warmup_steps=5)
    trainer(tmp_path / "pre", max_steps=steps, limit_val_batches=0).fit(pre, datamodule(dataset))
    return pre.world_model.save_pretrained(tmp_path / "sim-model")


def test_finetune_trains_only_dynamics_and_keeps_sim_stats(dataset, tmp_path) -> None:
    L.seed_everything(0)
    folder = pretrained_folder(dataset, tmp_path, steps=20)
    real = write_linear_dataset(tmp_path / "real", episodes=6, length=40, seed=1, gain=3.0)
    ft = FinetuneModule(init_from=str(folder), lr=3e-3, warmup_steps=2)
    assert sum(p.numel() for p in ft.parameters() if p.requires_grad) == ft.world_model.count_parameters()[
        "dynamics"]
    before = {k: v.clone() for k, v in ft.world_model.state_dict().items()}
    trainer(tmp_path / "ft", max_steps=15, limit_val_batches=0).fit(ft, datamodule(real))
    after = ft.world_model.state_dict()
    for key in before:
        same = torch.equal(before[key], after[key])
        assert same != key.startswith("dynamics."), key  # dynamics changed, everything else bit-equal
    assert not ft.world_model.encoder.training  # frozen parts stayed in eval mode


def test_value_head_retrained_on_relabelled_data_refits_only_the_value_statistics(dataset, tmp_path) -> None:
    L.seed_everything(0)
    folder = pretrained_folder(dataset, tmp_path, steps=10)
    relabelled = write_linear_dataset(tmp_path / "relabelled", episodes=6, length=40, seed=1, gain=3.0)
    with pytest.raises(ValueError, match="fit_normalizer.*values"):
        FinetuneModule(init_from=str(folder), freeze="value", fit_normalizer=["value"])
    ft = FinetuneModule(init_from=str(folder), freeze="value", fit_normalizer=["values"], lr=3e-3, warmup_steps=2,
                        loss_weights={"dynamics": 0.0, "reward": 0.0, "value": 1.0, "action": 0.0})
    before = {k: v.clone() for k, v in ft.world_model.state_dict().items()}
    dm = datamodule(relabelled)
    trainer(tmp_path / "ft", max_steps=5, limit_val_batches=0).fit(ft, dm)
    after, norm = ft.world_model.state_dict(), ft.world_model.normalizer
    new = dm.stats.to_dict()["values"]
    assert not torch.equal(torch.tensor(new["mean"]), before["normalizer.values_mean"].reshape(-1))
    torch.testing.assert_close(norm.mean("values").reshape(-1), torch.tensor(new["mean"], dtype=torch.float32))
    for key in before:
        changed = not torch.equal(before[key], after[key])
        assert changed == (key.startswith("value.") or key.startswith("normalizer.values_")), key


def test_resume_from_checkpoint_and_export(dataset, tmp_path) -> None:
    from lightning.pytorch.callbacks import ModelCheckpoint

    from simdist.cli import main

    L.seed_everything(0)
    ckpt_cb = ModelCheckpoint(dirpath=tmp_path / "ckpt", save_last=True, every_n_train_steps=5)
    module = PretrainModule(model=tiny_config().to_dict(), lr=1e-3, warmup_steps=2)
    trainer(tmp_path, max_steps=5, callbacks=[ckpt_cb], limit_val_batches=0).fit(module, datamodule(dataset))
    last = tmp_path / "ckpt" / "last.ckpt"
    resumed = PretrainModule(model=tiny_config().to_dict(), lr=1e-3, warmup_steps=2)
    t2 = trainer(tmp_path, max_steps=10, limit_val_batches=0)
    t2.fit(resumed, datamodule(dataset), ckpt_path=str(last))
    assert t2.global_step == 10
    assert main(["export", "--ckpt", str(last), "--out", str(tmp_path / "export")]) == 0
    loaded = WorldModel.from_pretrained(tmp_path / "export")
    state = torch.load(last, weights_only=False)["state_dict"]
    assert all(torch.equal(v, state["world_model." + k]) for k, v in loaded.state_dict().items())
    assert json.loads((tmp_path / "export" / "config.json").read_text())["latent_dim"] == 16
    # a zoo export: card description from a file, the Hub id in the usage snippet, planner settings
    (tmp_path / "desc.md").write_text("Pretrained on **test data** with `simdist fit ...`.")
    (tmp_path / "planner.json").write_text(json.dumps({"num_samples": 16, "iterations": 1}))
    assert main(["export", "--ckpt", str(last), "--out", str(tmp_path / "zoo"), "--repo-id", "simdist/tiny",
                 "--description", f"@{tmp_path / 'desc.md'}", "--planner", str(tmp_path / "planner.json")]) == 0
    card = (tmp_path / "zoo" / "README.md").read_text()
    assert "**test data**" in card and 'from_pretrained("simdist/tiny")' in card
    assert json.loads((tmp_path / "zoo" / "planner.json").read_text())["num_samples"] == 16


def test_weight_averaging_checkpoint_exports_the_average(dataset, tmp_path, capsys) -> None:
    from lightning.pytorch.callbacks import EMAWeightAveraging, ModelCheckpoint

    from simdist.cli import main

    L.seed_everything(0)
    ckpt_cb = ModelCheckpoint(dirpath=tmp_path / "ckpt", save_last=True, every_n_train_steps=8)
    module = PretrainModule(model=tiny_config().to_dict(), lr=3e-3, warmup_steps=2)
    t = trainer(tmp_path, max_steps=8, callbacks=[ckpt_cb, EMAWeightAveraging(decay=0.9)], limit_val_batches=0)
    t.fit(module, datamodule(dataset))
    ckpt = torch.load(tmp_path / "ckpt" / "last.ckpt", weights_only=False)
    key = "world_model.dynamics." + next(k for k, _ in module.world_model.dynamics.named_parameters())
    assert not torch.equal(ckpt["state_dict"][key], ckpt["current_model_state"][key])
    for flag, source in (([], "state_dict"), (["--current-weights"], "current_model_state")):
        out = tmp_path / f"export{len(flag)}"
        assert main(["export", "--ckpt", str(tmp_path / "ckpt" / "last.ckpt"), "--out", str(out), *flag]) == 0
        loaded = WorldModel.from_pretrained(out).state_dict()
        assert all(torch.equal(v, ckpt[source]["world_model." + k]) for k, v in loaded.items())
    plain = tmp_path / "plain.ckpt"
    torch.save({k: v for k, v in ckpt.items() if k != "current_model_state"}, plain)
    assert main(["export", "--ckpt", str(plain), "--out", str(tmp_path / "bad"), "--current-weights"]) == 2
    assert "has no 'current_model_state'" in capsys.readouterr().err and not (tmp_path / "bad").exists()


def test_cli_fit_with_recipe(dataset, tmp_path) -> None:
    from simdist.cli import main

    recipe = {
        "seed_everything": 0,
        "trainer": {"accelerator": "cpu", "max_steps": 6, "logger": False, "enable_progress_bar": False,
                    "default_root_dir": str(tmp_path), "limit_val_batches": 2, "num_sanity_val_steps": 0},
        "model": {"class_path": "simdist.training.PretrainModule",
                  "init_args": {"model": tiny_config().to_dict(), "warmup_steps": 2}},
        "data": {"train": str(dataset), "history": 4, "horizon": 3, "batch_size": 8,
                 "windows_per_epoch": 48, "heldout_fraction": 0.2},
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    assert main(["fit", "--config", str(path)]) == 0
    assert list(tmp_path.rglob("*.ckpt"))


def test_history_dropout_zeroes_past_actions_of_whole_windows_only() -> None:
    """Per window with probability p: the action history and the named observation dims become zero; the
    other inputs and every target stay as they were; validation batches are never touched."""
    module = PretrainModule(model=tiny_config().to_dict(), history_dropout=0.5, history_dropout_obs={"state": [3]})
    torch.manual_seed(0)
    batch = {"obs_hist": {"state": torch.ones(400, 5, 4)}, "act_hist": torch.ones(400, 4, 2),
             "actions": torch.ones(400, 3, 2)}
    out = module._augment(batch)
    dropped = out["act_hist"].abs().sum((1, 2)) == 0
    assert 0.4 < dropped.float().mean() < 0.6
    assert (out["act_hist"][~dropped] == 1).all()
    assert (out["obs_hist"]["state"][dropped][..., 3] == 0).all() and (out["obs_hist"]["state"][~dropped] == 1).all()
    assert (out["obs_hist"]["state"][..., :3] == 1).all() and (out["actions"] == 1).all()
    assert (batch["act_hist"] == 1).all()  # the caller's batch is not modified
    with pytest.raises(ValueError, match="history_dropout"):
        PretrainModule(model=tiny_config().to_dict(), history_dropout=1.0)


def test_preset_overrides_swap_the_heads() -> None:
    """Table I's MLP-heads switch: per-step MLP reward and value heads in place of the sequence heads."""
    from simdist.components.heads.sequence import MLPRewardHead, MLPValueHead

    base = PretrainModule(preset="toy").world_model
    mlp = PretrainModule(preset="toy", preset_overrides={"reward_head": {"name": "mlp", "kwargs": {}},
                                                         "value_head": {"name": "mlp", "kwargs": {}}}).world_model
    assert not isinstance(base.reward, MLPRewardHead) and not isinstance(base.value, MLPValueHead)
    assert isinstance(mlp.reward, MLPRewardHead) and isinstance(mlp.value, MLPValueHead)
    assert type(mlp.dynamics) is type(base.dynamics) and type(mlp.encoder) is type(base.encoder)
    with pytest.raises(ValueError, match="preset_overrides needs"):
        PretrainModule(model=tiny_config().to_dict(), preset_overrides={"latent_dim": 8})


def test_reconstruction_switch_adds_a_decoder_and_its_loss_term(dataset) -> None:
    """Table I's reconstruction switch: a decoder head and the reconstruction term, trained through the encoder."""
    from simdist.model.losses import WorldModelLoss
    from tests.conftest import fill_stats

    config = tiny_config(decoder_head={"name": "mlp", "kwargs": {"hidden": [32]}})
    plain = PretrainModule(model=tiny_config().to_dict())
    module = PretrainModule(model=config.to_dict(), loss_weights={"reconstruction": 1.0})
    assert plain.world_model.decoder is None and "decoder_head" not in tiny_config().to_dict()
    assert "decoder" in module.world_model.components
    batch = next(iter(TrajectoryDataModule(dataset, batch_size=8, history=4, horizon=3, heldout_fraction=0.0)
                      .train_dataloader()))
    fill_stats(module.world_model)
    terms = module.loss_fn(module.world_model, batch)
    assert set(terms) == {"dynamics", "reward", "value", "action", "reconstruction", "loss"}
    assert "reconstruction" not in plain.loss_fn(plain.world_model, batch)
    terms["reconstruction"].backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in module.world_model.encoder.parameters())
    with pytest.raises(ValueError, match="needs a decoder"):
        WorldModelLoss(reconstruction=1.0)(plain.world_model, batch)


@pytest.mark.usefixtures("single_thread")
def test_finetune_anchor_pulls_towards_the_pretrained_weights(sim_data, tmp_path) -> None:
    torch.manual_seed(0)
    model = WorldModel.from_preset("toy")
    dm = TrajectoryDataModule(str(sim_data), history=8, horizon=8, batch_size=32, windows_per_epoch=256,
                              heldout_fraction=0.0, seed=0)
    dm.setup("fit")
    model.normalizer.set_stats(dm.stats.to_dict())
    model.save_pretrained(tmp_path / "base")

    def drift(anchor: float) -> float:
        torch.manual_seed(0)
        module = FinetuneModule(init_from=str(tmp_path / "base"), lr=3e-3, warmup_steps=1, anchor=anchor)
        L.Trainer(accelerator="cpu", max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                  enable_model_summary=False, default_root_dir=tmp_path).fit(module, dm)
        module._anchor_weights = {n: p.detach() for n, p in model.named_parameters() if n.startswith("dynamics.")}
        return float(module.anchor_distance())

    free, pulled = drift(0.0), drift(10.0)
    assert 0.0 < pulled < 0.5 * free
    with pytest.raises(ValueError, match="anchor"):
        FinetuneModule(init_from=str(tmp_path / "base"), anchor=-1.0)


def test_a_recipe_naming_an_unknown_component_is_refused_with_its_file_and_key(tmp_path, capsys) -> None:
    from simdist.cli import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("model:\n  class_path: simdist.training.PretrainModule\n  init_args:\n    preset: toy\n"
                   "    preset_overrides:\n      dynamics: {name: no_such_dyn}\n")
    recipes = Path(__file__).resolve().parents[1] / "recipes" / "toy"
    code = main(["fit", "--config", str(recipes / "base.yaml"), "--config", str(recipes / "pretrain.yaml"),
                 "--config", str(bad), "--data.train", str(tmp_path / "nothing")])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"simdist fit: error: {bad}: key 'model.init_args.preset_overrides.dynamics.name': unknown "
                   "dynamics 'no_such_dyn'; known dynamics names: ensemble, mlp, transformer")
