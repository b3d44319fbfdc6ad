"""Recipe mistakes of ``simdist fit``: an unknown key, an unknown preset, a value of the wrong type and two
conflicting stage recipes each end in one line naming the recipe file (or the option), the key and what is
allowed, with exit status 2, before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from simdist.cli import main

BASE = ["fit", "--config", "recipes/toy/base.yaml", "--config", "recipes/toy/pretrain.yaml"]


def _fit(tmp_path: Path, data: Path, recipe: str | None, *extra: str) -> int:
    argv = list(BASE)
    if recipe is not None:
        (tmp_path / "bad.yaml").write_text(recipe)
        argv += ["--config", str(tmp_path / "bad.yaml")]
    argv += ["--data.train", str(data), "--trainer.default_root_dir", str(tmp_path / "run"), *extra]
    return main(argv)


@pytest.mark.parametrize(("recipe", "line"), [
    ("trainr:\n  max_steps: 2\n", "{bad}: key 'trainr.max_steps': unknown key; accepted at the top level: "
     "ckpt_path, config, data, lr_scheduler, model, optimizer, seed_everything, trainer, weights_only"),
    ("trainer:\n  max_stepz: 2\n", "{bad}: key 'trainer.max_stepz': unknown key; accepted under 'trainer': "
     "accelerator, "),
    ("model:\n  init_args:\n    lrr: 0.1\n", "{bad}: key 'model.init_args.lrr': unknown key; "
     "simdist.training.PretrainModule accepts: anchor, compile, "),
    ("model:\n  init_args:\n    lr: fast\n", "{bad}: key 'model.init_args.lr': expected float, got 'fast'"),
    ("model:\n  init_args:\n    loss_weights: 3\n", "{bad}: key 'model.init_args.loss_weights': expected one of "
     "dict[str, float], None, got '3'"),
    ("data:\n  batch_size: many\n", "{bad}: key 'data.batch_size': expected int, got 'many'"),
    ("model:\n  init_args:\n    preset: nosuch\n", "{bad}: key 'model.init_args.preset': unknown preset 'nosuch'; "
     "known presets: ['go2', "),
])
def test_a_recipe_mistake_is_one_line(recipe: str, line: str, sim_data: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = _fit(tmp_path, sim_data, recipe)
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip() and ln != "Seed set to 0"]
    assert code == 2
    assert len(err) == 1 and err[0].startswith("simdist fit: error: " + line.format(bad=tmp_path / "bad.yaml"))
    assert not (tmp_path / "run").exists()


def test_the_command_line_is_named_when_it_sets_the_key(sim_data: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """pretrain.yaml sets data.batch_size too; the option given on the command line is what overrides it."""
    code = _fit(tmp_path, sim_data, None, "--data.batch_size", "x")
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines() == ["simdist fit: error: --data.batch_size: expected int, "
                                                             "got 'x'"]


def test_two_stage_recipes_are_refused(sim_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*BASE, "--config", "recipes/toy/finetune.yaml", "--data.train", str(sim_data)])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "simdist fit: error: recipes/toy/finetune.yaml: key 'model.class_path' is simdist.training.FinetuneModule, "
        "but recipes/toy/pretrain.yaml sets simdist.training.PretrainModule: two training stages cannot be combined "
        "(their merged options: give exactly one of model (a config dict), preset, or init_from); give one of them "
        "after the shared base recipe"]
