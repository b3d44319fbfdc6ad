"""The action-information diagnostic on real toy windows: it reads zero where the dynamics ignore the actions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from simdist.diagnostics import action_information, dataset_windows, derangement


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
