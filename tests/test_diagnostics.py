"""The action-information diagnostic on real toy windows: it reads zero where the dynamics ignore the actions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from simdist.diagnostics.action_information import action_information, dataset_windows, derangement


def test_derangement_moves_every_window() -> None:
    for n in (2, 3, 17):
        perm = derangement(n, torch.Generator().manual_seed(n))
        assert sorted(perm.tolist()) == list(range(n))
        assert not (perm == torch.arange(n)).any()
    with pytest.raises(ValueError, match="at least 2"):
        derangement(1, torch.Generator())


@pytest.mark.usefixtures("single_thread")
def test_action_information_separates_a_blind_model(sim_data, tmp_path) -> None:
    from simdist import WorldModel
    from simdist.data import TrajectoryDataModule

    torch.manual_seed(0)
    model = WorldModel.from_preset("toy")
    dm = TrajectoryDataModule(str(sim_data), history=8, horizon=8, batch_size=64, heldout_fraction=0.0)
    dm.setup("fit")
    model.normalizer.set_stats(dm.stats.to_dict())
    batch = dataset_windows(sim_data, model, windows=64, seed=0)
    assert batch["fut_acts"].shape == (64, 8, 2)
    seeing = action_information(model, batch, seed=1)
    assert seeing.latent_shift > 0.0 and len(seeing.consistency_true) == 8
    assert action_information(model, batch, seed=1) == seeing  # deterministic in its seed
    with torch.no_grad():  # the dynamics' weights on the action inputs set to zero: actions carry nothing
        first = model.dynamics.net[0]
        first.weight[:, model.config.latent_dim:] = 0.0
    blind = action_information(model, batch, seed=1)
    assert blind.latent_shift == 0.0
    assert blind.consistency_ratio == pytest.approx(1.0)
    np.testing.assert_allclose(blind.consistency_true, blind.consistency_permuted)
    metrics = blind.metrics()
    assert all(np.isfinite(v) for v in metrics.values()) and "diag/latent_shift" in metrics
    with pytest.raises(KeyError, match="rewards"):
        action_information(model, {k: v for k, v in batch.items() if k != "rewards"})


@pytest.mark.usefixtures("single_thread")
def test_every_training_run_logs_action_information(sim_data, tmp_path) -> None:
    import lightning as L

    from simdist.data import TrajectoryDataModule
    from simdist.training import PretrainModule

    def fit(**kwargs) -> dict:
        module = PretrainModule(preset="toy", lr=1e-3, warmup_steps=5, decay_steps=50, **kwargs)
        dm = TrajectoryDataModule(str(sim_data), history=8, horizon=8, batch_size=32, windows_per_epoch=64,
                                  heldout_fraction=0.3, seed=0)
        trainer = L.Trainer(accelerator="cpu", max_epochs=1, logger=False, enable_checkpointing=False,
                            enable_progress_bar=False, enable_model_summary=False, default_root_dir=tmp_path)
        trainer.fit(module, dm)
        return {k: float(v) for k, v in trainer.callback_metrics.items()}

    metrics = fit()
    for key in ("val/diag/consistency_true", "val/diag/consistency_ratio", "val/diag/latent_shift",
                "val/diag/return_label_corr_true"):
        assert np.isfinite(metrics[key]), key
    assert not any(k.startswith("val/diag/") for k in fit(diagnostics=False))


@pytest.mark.usefixtures("single_thread")
def test_diagnose_command(sim_data, tmp_path, capsys) -> None:
    import json

    from simdist import WorldModel
    from simdist.cli import main
    from simdist.data import TrajectoryDataModule

    torch.manual_seed(0)
    model = WorldModel.from_preset("toy")
    dm = TrajectoryDataModule(str(sim_data), history=8, horizon=8, batch_size=8, heldout_fraction=0.0)
    dm.setup("fit")
    model.normalizer.set_stats(dm.stats.to_dict())
    model.save_pretrained(tmp_path / "model")
    out = tmp_path / "report.json"
    assert main(["diagnose", "--model", str(tmp_path / "model"), "--data", str(sim_data), "--windows", "32",
                 "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["windows"] == 32 and len(report["consistency_true"]) == 8
    assert "latent shift" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["diagnose", "--model", str(tmp_path / "model"), "--data", str(tmp_path / "nothing")])
    assert "no dataset.json" in capsys.readouterr().err
