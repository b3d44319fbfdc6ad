"""Every recipe validates against the modules' signatures; the toy recipes run through `simdist fit`."""

from __future__ import annotations

from pathlib import Path

import pytest

from simdist.cli import main

RECIPES = sorted((Path(__file__).resolve().parents[1] / "recipes").rglob("*.yaml"))


def test_recipes_exist() -> None:
    names = {f"{p.parent.name}/{p.name}" for p in RECIPES}
    assert {"toy/pretrain.yaml", "toy/finetune.yaml", "go2-slope/pretrain.yaml", "go2-slope/finetune.yaml",
            "go2-foam/pretrain.yaml", "go2-foam/finetune.yaml"} <= names


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_recipe_validates(recipe: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["fit", "--config", str(recipe), "--print_config"])
    assert exit_info.value.code in (0, None)
    printed = capsys.readouterr().out
    assert "class_path: simdist.training." in printed


def test_toy_recipes_run(tmp_path) -> None:
    from simdist.components.tasks.toy_reach import generate_toy_dataset

    generate_toy_dataset(str(tmp_path / "sim"), transitions=2_000, num_envs=4, seed=0)
    toy = Path(__file__).resolve().parents[1] / "recipes" / "toy"
    common = ["--trainer.max_epochs", "1", "--trainer.limit_train_batches", "3", "--trainer.logger", "false",
              "--trainer.enable_progress_bar", "false", "--data.windows_per_epoch", "64"]
    assert main(["fit", "--config", str(toy / "pretrain.yaml"), "--data.train", str(tmp_path / "sim"),
                 "--trainer.default_root_dir", str(tmp_path / "pre"), *common]) == 0
    ckpt = next((tmp_path / "pre").rglob("last.ckpt"))
    assert main(["validate", "--config", str(toy / "pretrain.yaml"), "--data.train", str(tmp_path / "sim"),
                 "--ckpt_path", str(ckpt), "--trainer.logger", "false", "--trainer.limit_val_batches", "2",
                 "--trainer.enable_progress_bar", "false", "--data.heldout_fraction", "0.3"]) == 0
    assert main(["export", "--ckpt", str(ckpt), "--out", str(tmp_path / "toy-sim")]) == 0
    assert main(["fit", "--config", str(toy / "finetune.yaml"), "--data.train", str(tmp_path / "sim"),
                 "--model.init_args.init_from", str(tmp_path / "toy-sim"),
                 "--trainer.default_root_dir", str(tmp_path / "ft"), *common]) == 0
