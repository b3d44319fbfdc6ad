"""Every recipe composes (a task base, then a stage file) into a config the project's LightningCLI accepts;
the toy recipes run through `simdist fit`.

Each stage is parsed with ``--print_config`` (no model, data or trainer is built) and a few key values of the
effective config are checked, so a base or stage edit that silently changes a stage fails here.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from simdist.cli import main
from simdist.training.cli import SimDistCLI

ROOT = Path(__file__).resolve().parents[1]
GO2, GO2_FT, TOY = "recipes/go2/base.yaml", "recipes/go2/finetune-base.yaml", "recipes/toy/base.yaml"
PEG, LEG = "recipes/ur5e-peg/base.yaml", "recipes/ur5e-table-leg/base.yaml"
GYM = "recipes/gym/base.yaml"
#: `simdist adapt --config` files (AdaptConfig options, not LightningCLI configs)
ADAPT = ("recipes/ur5e-peg/adapt.yaml", "recipes/ur5e-table-leg/adapt.yaml")
PRETRAIN, FINETUNE = "simdist.training.PretrainModule", "simdist.training.FinetuneModule"

#: (base, stage[, overlay]) -> dotted keys of the effective config and their expected values.
STAGES: dict[tuple[str, ...], dict[str, Any]] = {
    (GO2, "recipes/go2-slope/stage1.yaml"): {
        "model.class_path": PRETRAIN, "model.init_args.preset": "go2", "model.init_args.lr": 6.0e-4,
        "trainer.max_steps": 10500, "model.init_args.decay_steps": 10500, "data.train": "data/go2/sim-cpu",
        "data.batch_size": 128, "data.front_pad": 25, "trainer.gradient_clip_val": 1.0,
        "trainer.callbacks[0].init_args.dirpath": "outputs/go2/pretrain/checkpoints"},
    (GO2, "recipes/go2-slope/stage2.yaml"): {
        "trainer.max_steps": 20000, "model.init_args.decay_steps": 20000, "data.train": "data/go2/sim-cpu",
        "trainer.default_root_dir": "outputs/go2/pretrain-cont"},
    (GO2, "recipes/go2-slope/stage3-walk-starts.yaml"): {
        "trainer.max_steps": 27000, "model.init_args.decay_steps": 27000, "data.train": "data/go2/sim-cpu-ws",
        "trainer.default_root_dir": "outputs/go2/pretrain-ws"},
    (GO2, "recipes/go2-slope/stage4.yaml"): {
        "trainer.max_steps": 37000, "model.init_args.decay_steps": 37000, "data.train": "data/go2/sim-cpu-ws",
        "trainer.default_root_dir": "outputs/go2/pretrain-s4"},
    (GO2, "recipes/go2-slope/stage4-ema.yaml"): {
        "trainer.max_steps": 37000, "model.init_args.decay_steps": 37000, "data.train": "data/go2/sim-cpu-ws",
        "trainer.callbacks[1].class_path": "lightning.pytorch.callbacks.EMAWeightAveraging",
        "trainer.callbacks[1].init_args.decay": 0.999, "trainer.callbacks[0].init_args.save_top_k": -1,
        "model.init_args.loss_weights.action": 4.0},
    (GO2, "recipes/go2-slope/stage4-student.yaml"): {
        "trainer.max_steps": 32000, "model.init_args.decay_steps": 37000,
        "data.train": ["data/go2/sim-cpu-ws", "data/go2/sim-cpu-student"]},
    (GO2, "recipes/go2-slope/paper.yaml"): {
        "trainer.max_epochs": 2, "trainer.gradient_clip_val": None, "trainer.precision": "32-true",
        "model.init_args.lr": 2.0e-4, "model.init_args.warmup_steps": 10000, "model.init_args.decay_steps": 400000,
        "data.batch_size": 512, "data.windows_per_epoch": None, "data.train": "data/go2/sim-paper"},
    (PEG, "recipes/table1/mlp-heads.yaml"): {
        "model.init_args.preset": "ur5e-peg", "model.init_args.preset_overrides.reward_head.name": "mlp",
        "model.init_args.preset_overrides.value_head.name": "mlp"},
    (PEG, "recipes/table1/reconstruction.yaml"): {
        "model.init_args.preset_overrides.decoder_head.name": "mlp", "model.init_args.loss_weights.reconstruction": 1.0,
        "model.init_args.loss_weights.action": 4.0},
    (PEG, "recipes/table1/reconstruction-image.yaml"): {
        "model.init_args.preset_overrides.decoder_head.name": "pixels",
        "model.init_args.loss_weights.reconstruction": 1.0},
    (GO2, "recipes/table1/go2-reduced.yaml"): {
        "model.init_args.preset": "go2", "trainer.max_steps": 1500, "model.init_args.decay_steps": 1500,
        "model.init_args.warmup_steps": 150, "data.batch_size": 128},
    (PEG, "recipes/table1/data-50.yaml"): {"data.data_fraction": 0.5, "data.data_fraction_seed": 0},
    (PEG, "recipes/table1/data-10.yaml"): {"data.data_fraction": 0.1, "data.data_fraction_seed": 0},
    (GO2_FT, "recipes/go2-slope/finetune.yaml"): {
        "model.class_path": FINETUNE, "model.init_args.init_from": "simdist/go2-slope",
        "model.init_args.freeze": "dynamics_only", "data.train": "data/go2/real-slope", "data.batch_size": 32,
        "data.front_pad": 25, "trainer.max_epochs": 20},
    (GO2_FT, "recipes/go2-foam/finetune.yaml"): {
        "model.class_path": FINETUNE, "model.init_args.init_from": "simdist/go2-foam",
        "data.train": "data/go2/real-foam", "trainer.default_root_dir": "outputs/go2-foam/finetune"},
    (PEG, "recipes/ur5e-peg/pretrain.yaml"): {
        "model.class_path": PRETRAIN, "model.init_args.preset": "ur5e-peg", "data.history": 5, "data.horizon": 5,
        "data.batch_size": 256, "trainer.max_steps": 5000, "model.init_args.decay_steps": 5000,
        "model.init_args.obs_noise": "ur5e-peg", "data.train": "outputs/ur5e/ur5e-peg-cpu"},
    (PEG, "recipes/ur5e-peg/paper.yaml"): {
        "model.init_args.lr": 2.0e-4, "model.init_args.warmup_steps": 10000, "model.init_args.decay_steps": 200000,
        "trainer.max_epochs": 2, "data.batch_size": 256, "data.train": "outputs/ur5e/ur5e-peg-paper"},
    (PEG, "recipes/ur5e-peg/pretrain-continue.yaml"): {
        "trainer.max_steps": 20000, "model.init_args.decay_steps": 20000, "data.train": "outputs/ur5e/ur5e-peg-cpu",
        "trainer.callbacks[0].init_args.dirpath": "outputs/ur5e-peg/pretrain-cont/checkpoints"},
    (PEG, "recipes/ur5e-peg/pretrain-history-dropout.yaml"): {
        "model.init_args.history_dropout": 0.5, "model.init_args.history_dropout_obs.proprio": list(range(22, 29)),
        "trainer.max_steps": 5000, "trainer.default_root_dir": "outputs/ur5e-peg-hd/pretrain"},
    (GYM, "recipes/gym/pretrain.yaml"): {
        "model.class_path": PRETRAIN, "model.init_args.preset": "gym:HalfCheetah-v5",
        "model.init_args.freeze": "all", "data.history": 8, "data.horizon": 8, "data.batch_size": 256,
        "trainer.default_root_dir": "outputs/gym/pretrain"},
    (GYM, "recipes/gym/finetune.yaml"): {
        "model.class_path": FINETUNE, "model.init_args.freeze": "dynamics_only", "model.init_args.lr": 2.0e-4,
        "data.batch_size": 64, "trainer.default_root_dir": "outputs/gym/finetune"},
    (PEG, "recipes/ur5e-peg/small.yaml"): {
        "model.init_args.preset": "ur5e-peg", "data.train[9]": "outputs/ur5e/ur5e-peg-small/part-0009",
        "trainer.max_steps": 900, "data.batch_size": 64,
        "model.init_args.loss_weights.value": 0.0, "model.init_args.loss_weights.action": 4.0,
        "model.init_args.preset_overrides": None,
        "trainer.callbacks[0].init_args.dirpath": "outputs/ur5e-peg-small/pretrain/checkpoints"},
    (PEG, "recipes/ur5e-peg/small-current.yaml"): {
        "data.train[0]": "outputs/ur5e/ur5e-peg-small/part-0000", "model.init_args.loss_weights.value": 0.0,
        "model.init_args.preset_overrides.policy_input.history": False,
        "model.init_args.preset_overrides.policy_input.mask_obs.proprio": [22, 23, 24, 25, 26, 27, 28],
        "trainer.callbacks[0].init_args.dirpath": "outputs/ur5e-peg-small-now/pretrain/checkpoints"},
    (PEG, "recipes/ur5e-peg/small-no-actions.yaml"): {
        "model.init_args.preset_overrides.policy_input.actions": False,
        "trainer.callbacks[0].init_args.dirpath": "outputs/ur5e-peg-small-noact/pretrain/checkpoints"},
    (PEG, "recipes/ur5e-peg/small-no-actions.yaml", "recipes/ur5e-peg/small-matched.yaml"): {
        "model.init_args.preset_overrides.policy_input.actions": False, "data.batch_size": 256,
        "trainer.max_steps": 16000, "model.init_args.decay_steps": 16000, "model.init_args.warmup_steps": 500,
        "model.init_args.loss_weights.value": 0.0, "data.train[9]": "outputs/ur5e/ur5e-peg-small/part-0009",
        "trainer.callbacks[0].init_args.dirpath": "outputs/ur5e-peg-small-matched/pretrain/checkpoints"},
    (PEG, "recipes/ur5e-peg/small-value-mc.yaml"): {
        "model.class_path": FINETUNE, "model.init_args.preset": None, "model.init_args.freeze": "value",
        "model.init_args.init_from": "results/ur5e/gate/ur5e-peg/ur5e-peg-small-matched-model",
        "model.init_args.fit_normalizer": ["values"], "model.init_args.loss_weights.action": 0.0,
        "data.train[0]": "outputs/ur5e/ur5e-peg-mc/part-0000", "data.train[11]": "outputs/ur5e/ur5e-peg-mc/part-0011"},
    (PEG, "recipes/ur5e-peg/small-history-dropout.yaml"): {
        "model.init_args.history_dropout": 0.5, "model.init_args.preset_overrides": None,
        "trainer.callbacks[0].init_args.dirpath": "outputs/ur5e-peg-small-hd/pretrain/checkpoints"},
    (PEG, "recipes/ur5e-peg/pretrain-image.yaml"): {
        "model.init_args.preset": "ur5e-peg-image", "data.train": "outputs/ur5e/ur5e-peg-cpu-images",
        "data.shuffle_buffer": 2000},
    (LEG, "recipes/ur5e-table-leg/pretrain.yaml"): {
        "model.init_args.preset": "ur5e-table-leg", "data.history": 5, "trainer.max_steps": 5000,
        "model.init_args.obs_noise": "ur5e-table-leg", "data.train": "outputs/ur5e/ur5e-table-leg-cpu"},
    (LEG, "recipes/ur5e-table-leg/small-matched.yaml"): {
        "model.init_args.preset": "ur5e-table-leg", "model.init_args.preset_overrides.policy_input.actions": False,
        "data.batch_size": 256, "trainer.max_steps": 16000, "model.init_args.decay_steps": 16000,
        "model.init_args.loss_weights.value": 0.0, "data.train[9]": "outputs/ur5e/ur5e-table-leg-small/part-0009",
        "trainer.callbacks[0].init_args.dirpath": "outputs/ur5e-table-leg-small-matched/pretrain/checkpoints"},
    **{(LEG, "recipes/ur5e-table-leg/small-matched.yaml", f"recipes/ur5e-table-leg/size-{n}parts.yaml"): {
        "trainer.max_steps": 16000, "model.init_args.preset_overrides.policy_input.actions": False,
        "data.train": [f"outputs/ur5e/ur5e-table-leg-small/part-{k:04d}" for k in range(n)],
        "trainer.callbacks[0].init_args.dirpath": f"outputs/ur5e-table-leg-small-matched-{n}parts/pretrain/checkpoints",
        "trainer.logger.init_args.save_dir": f"outputs/ur5e-table-leg-small-matched-{n}parts/logs"} for n in (3, 30)},
    (LEG, "recipes/ur5e-table-leg/small-value-mc.yaml"): {
        "model.class_path": FINETUNE, "model.init_args.preset": None, "model.init_args.freeze": "value",
        "model.init_args.init_from": "results/ur5e/gate/ur5e-table-leg/ur5e-table-leg-small-matched-model",
        "model.init_args.loss_weights.value": 1.0, "model.init_args.loss_weights.dynamics": 0.0,
        "data.train[3]": "outputs/ur5e/ur5e-table-leg-mc/part-0003",
        "trainer.callbacks[0].init_args.dirpath": "outputs/ur5e-table-leg-small-value-mc/pretrain/checkpoints"},
    (LEG, "recipes/ur5e-table-leg/paper.yaml"): {
        "model.init_args.decay_steps": 200000, "data.train": "outputs/ur5e/ur5e-table-leg-paper"},
    (TOY, "recipes/toy/pretrain.yaml"): {
        "model.class_path": PRETRAIN, "model.init_args.preset": "toy", "data.history": 8, "data.horizon": 8,
        "seed_everything": 0, "trainer.max_epochs": 6},
    (TOY, "recipes/toy/finetune.yaml"): {
        "model.class_path": FINETUNE, "model.init_args.freeze": "dynamics_only", "data.history": 8,
        "data.front_pad": 8, "trainer.max_epochs": 3},
}


def effective_config(*files: str) -> dict[str, Any]:
    """``simdist fit --config F1 --config F2 ... --print_config``, in process, as a dict."""
    args = ["fit", *(x for f in files for x in ("--config", str(ROOT / f))), "--print_config"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        SimDistCLI(args=args)
    assert stop.value.code in (0, None)
    return yaml.safe_load(out.getvalue())


def lookup(config: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        name, _, index = part.partition("[")
        config = config[name]
        if index:
            config = config[int(index.rstrip("]"))]
    return config


@pytest.mark.filterwarnings("ignore:LightningCLI's args parameter")
@pytest.mark.parametrize(("files", "expected"), list(STAGES.items()), ids=[files[-1] for files in STAGES])
def test_stage_composes(files: tuple[str, ...], expected: dict[str, Any]) -> None:
    config = effective_config(*files)
    assert config["model"]["class_path"].startswith("simdist.training.")
    for key, value in expected.items():
        assert lookup(config, key) == value, key


def test_every_recipe_file_is_covered() -> None:
    """A new recipe file must be added to STAGES (or be a base)."""
    known = {f for pair in STAGES for f in pair} | set(ADAPT)
    found = {str(p.relative_to(ROOT)) for p in (ROOT / "recipes").rglob("*.yaml")}
    assert found == known


@pytest.mark.parametrize("path", ADAPT)
def test_adapt_recipes_are_valid_adapt_configs(path: str) -> None:
    """The arm's protocol: the dynamics retrained every 20 episodes up to 120, with the manipulation MPPI."""
    from simdist.workflows.adaptation import AdaptConfig

    cfg = AdaptConfig(**yaml.safe_load((ROOT / path).read_text()))
    assert cfg.schedule_unit == "episodes" and cfg.schedule == [20.0 * k for k in range(7)]
    assert (cfg.planner_preset, cfg.planner_overrides, cfg.freeze, cfg.init) == (
        "manipulation", {"num_samples": 256, "iterations": 3}, "dynamics_only", "base")


def test_toy_recipes_run(tmp_path: Path) -> None:
    from simdist.components.tasks.toy_reach import generate_toy_dataset

    generate_toy_dataset(str(tmp_path / "sim"), transitions=2_000, num_envs=4, seed=0)
    base, pretrain, finetune = (str(ROOT / f) for f in (TOY, "recipes/toy/pretrain.yaml", "recipes/toy/finetune.yaml"))
    common = ["--trainer.max_epochs", "1", "--trainer.limit_train_batches", "3", "--trainer.logger", "false",
              "--trainer.enable_progress_bar", "false", "--data.windows_per_epoch", "64"]
    assert main(["fit", "--config", base, "--config", pretrain, "--data.train", str(tmp_path / "sim"),
                 "--trainer.default_root_dir", str(tmp_path / "pre"), *common]) == 0
    ckpt = next((tmp_path / "pre").rglob("last.ckpt"))
    assert main(["validate", "--config", base, "--config", pretrain, "--data.train", str(tmp_path / "sim"),
                 "--ckpt_path", str(ckpt), "--trainer.logger", "false", "--trainer.limit_val_batches", "2",
                 "--trainer.default_root_dir", str(tmp_path / "val"),
                 "--trainer.enable_progress_bar", "false", "--data.heldout_fraction", "0.3"]) == 0
    assert main(["export", "--ckpt", str(ckpt), "--out", str(tmp_path / "toy-sim")]) == 0
    assert main(["fit", "--config", base, "--config", finetune, "--data.train", str(tmp_path / "sim"),
                 "--model.init_args.init_from", str(tmp_path / "toy-sim"),
                 "--trainer.default_root_dir", str(tmp_path / "ft"), *common]) == 0
