"""The whole SimDist loop on the toy task, on real components: MuJoCo data → Lightning pretraining →
MPPI → logged 'real' episodes → dynamics-only finetuning → MPPI again."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from simdist import WorldModel
from simdist.components.tasks.toy_reach.demo import TEST, ToyOptions, run_toy_pipeline

#: this run's results.json as recorded before the adaptation loop was split into parts (byte for byte)
GOLDEN = Path(__file__).parent / "golden" / "toy_demo_results.json"


@pytest.mark.usefixtures("single_thread")
def test_toy_pipeline_end_to_end(tmp_path) -> None:
    results = run_toy_pipeline(tmp_path, TEST, seed=0, progress=False, real="real",
                               options=ToyOptions(dynamics_context=0))
    for name in ("results.json", "results.md", "progress.png", "toy-sim/model.safetensors",
                 "toy-real/model.safetensors", "real-data/dataset.json"):
        assert (tmp_path / name).exists(), name
    assert json.loads((tmp_path / "results.json").read_text()) == json.loads(json.dumps(results))
    assert (tmp_path / "results.json").read_text() == GOLDEN.read_text()  # a refactor changes no number
    assert all(np.isfinite(v) for v in results["return"].values())
    cons = results["heldout_consistency"]
    assert cons["adapted"] < cons["pretrained"]  # system identification on held-out real episodes
    sim = WorldModel.from_pretrained(tmp_path / "toy-sim")
    real = WorldModel.from_pretrained(tmp_path / "toy-real")
    for key, value in sim.state_dict().items():  # only the dynamics moved during adaptation
        assert torch.equal(value, real.state_dict()[key]) != key.startswith("dynamics."), key
    card = (tmp_path / "toy-real" / "README.md").read_text()
    assert "base_model" in card or "toy-sim" in card


def test_demos_choose_parts_instead_of_subclassing_the_loop() -> None:
    import importlib

    from simdist.workflows.adaptation import AdaptationLoop

    for name in ("toy_reach.demo", "toy_reach.loop", "go2.demo"):
        module = importlib.import_module(f"simdist.components.tasks.{name}")
        subclasses = [k for k, v in vars(module).items() if isinstance(v, type) and issubclass(v, AdaptationLoop)
                      and v is not AdaptationLoop]
        assert not subclasses, f"{name} subclasses AdaptationLoop: {subclasses}"
