"""The faster pretraining configurations keep the loss: data-parallel halves average to the full batch, the
compiled loss equals the eager one, and the throughput benchmark builds the commands it claims to."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from simdist import WorldModel
from simdist.benchmarking.training import random_chunk_batch, windows_only
from simdist.model.losses import WorldModelLoss
from simdist.training import FinetuneModule, PretrainModule
from tests.helpers import tiny_config

_SPEC = importlib.util.spec_from_file_location(
    "fit_speed", Path(__file__).resolve().parents[1] / "benchmarks" / "fit_speed.py")
fit_speed = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fit_speed)
parse_config, fit_command = fit_speed.parse_config, fit_speed.fit_command


def random_batch(wm: WorldModel, windows: int) -> dict:
    return windows_only(random_chunk_batch(wm, windows, 1))


def _loss_and_grads(wm: WorldModel, batch: dict) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    wm.zero_grad(set_to_none=True)
    loss = WorldModelLoss()(wm, batch)["loss"]
    loss.backward()
    return loss.detach(), {n: p.grad.clone() for n, p in wm.named_parameters() if p.grad is not None}


def _half(batch: dict, part: slice) -> dict:
    return {k: _half(v, part) if isinstance(v, dict) else v[part] for k, v in batch.items()}


@pytest.mark.parametrize("preset", [pytest.param("go2", marks=pytest.mark.slow), None])
def test_two_ranks_halves_average_to_the_full_batch(preset: str | None) -> None:
    """What gloo DDP computes with 64 windows per rank (the mean of the ranks' losses and gradients) equals one
    process's batch of 128: every loss term is a per-window mean."""
    torch.manual_seed(0)
    wm = (WorldModel.from_preset(preset) if preset else WorldModel(tiny_config())).eval()
    batch = random_batch(wm, 16)
    full_loss, full_grads = _loss_and_grads(wm, batch)
    halves = [_loss_and_grads(wm, _half(batch, s)) for s in (slice(0, 8), slice(8, 16))]
    torch.testing.assert_close((halves[0][0] + halves[1][0]) / 2, full_loss, rtol=1e-5, atol=1e-6)
    assert halves[0][1].keys() == full_grads.keys()
    for name, grad in full_grads.items():
        torch.testing.assert_close((halves[0][1][name] + halves[1][1][name]) / 2, grad, rtol=1e-4, atol=1e-6)


def test_compile_option_is_checked_and_reaches_both_modules() -> None:
    cfg = tiny_config().to_dict()
    with pytest.raises(ValueError, match="model.init_args.compile"):
        PretrainModule(model=cfg, compile="yes")  # type: ignore[arg-type]
    assert FinetuneModule(model=cfg, compile=True).hparams.compile is True
    assert PretrainModule(model=cfg).hparams.compile is False


@pytest.mark.slow
def test_compiled_training_loss_matches_eager() -> None:
    """``compile`` changes how the loss runs, not its value or gradients (dropout off)."""
    torch.manual_seed(0)
    cfg = tiny_config().to_dict()
    eager, compiled = PretrainModule(model=cfg), PretrainModule(model=cfg, compile=True)
    compiled.load_state_dict(eager.state_dict())
    batch = random_batch(eager.world_model, 8)
    results = []
    for module in (eager, compiled):
        module.eval()
        module.zero_grad(set_to_none=True)
        terms = module._train_loss(batch)
        terms["loss"].backward()
        results.append((terms, {n: p.grad.clone() for n, p in module.named_parameters() if p.grad is not None}))
    (a, ga), (b, gb) = results
    assert compiled._compiled_loss is not None
    for name in a:
        torch.testing.assert_close(b[name], a[name], rtol=1e-5, atol=1e-6)
    for name in ga:
        torch.testing.assert_close(gb[name], ga[name], rtol=1e-4, atol=1e-6)


def test_fit_speed_configurations(tmp_path) -> None:
    assert parse_config("today") == (1, set())
    assert parse_config("ddp2+chunks+compile+bf16") == (2, {"chunks", "compile", "bf16"})
    for bad in ("ddp3", "today+fast", "ddp2+bf16+bf16"):
        with pytest.raises(SystemExit, match="--configs"):
            parse_config(bad)
    cmd, env = fit_command("ddp2+chunks+compile+bf16", tmp_path / "data", tmp_path / "out", steps=30, skip=5)
    args = dict(zip(cmd, cmd[1:], strict=False))
    assert args["--data.batch_size"] == "64" and args["--trainer.devices"] == "2"
    assert args["--trainer.strategy"] == "ddp" and args["--trainer.max_steps"] == "35"
    assert args["--data.windows_per_chunk"] == "16" and args["--model.init_args.compile"] == "true"
    assert args["--trainer.precision"] == "bf16-mixed" and env["OMP_NUM_THREADS"] == "1"
    cmd, env = fit_command("today", tmp_path / "data", tmp_path / "out", steps=30, skip=5)
    args = dict(zip(cmd, cmd[1:], strict=False))
    assert args["--data.batch_size"] == "128" and "--trainer.strategy" not in args
    assert "--model.init_args.compile" not in args and "--trainer.precision" not in args
