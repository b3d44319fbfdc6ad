"""Training a :class:`~.policy.DiffusionPolicy` with Lightning (imported only to train, so registering the agent
does not import Lightning)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from torch import Tensor

from simdist.components.agents.diffusion_policy.policy import DiffusionPolicy
from simdist.components.agents.diffusion_policy.windows import BatchStream, Folders, Windows, encode_windows
from simdist.training.schedule import warmup_cosine

__all__ = ["DiffusionPolicyModule", "fit"]


class DiffusionPolicyModule(L.LightningModule):
    """ε-prediction training of ``model.net`` on :class:`BatchStream` batches: AdamW (the config's lr, betas and
    weight decay), linear warmup over ``warmup_steps`` then cosine to 0 at ``total_steps``, and an EMA update of
    ``model.ema_net`` after every optimiser step. The noise and diffusion steps are drawn from a generator seeded
    with ``seed``. ``step_losses`` holds the loss of every step."""

    def __init__(self, model: DiffusionPolicy, *, total_steps: int, warmup_steps: int, seed: int) -> None:
        super().__init__()
        self.model = model
        self.total_steps, self.warmup_steps = int(total_steps), int(warmup_steps)
        self.generator = torch.Generator().manual_seed(int(seed))
        self.step_losses: list[float] = []

    def train(self, mode: bool = True) -> DiffusionPolicyModule:
        """Like ``nn.Module.train``, but the frozen encoder and the EMA network stay in eval mode."""
        super().train(mode)
        if hasattr(self, "model"):
            self.model.train(mode)
        return self

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> Tensor:
        loss = self.model.loss(batch, self.generator)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"Diffusion Policy training diverged at step {self.global_step}: "
                                     f"loss {float(loss)}")
        self.log("train/loss", loss, prog_bar=True, batch_size=batch["actions"].shape[0], on_step=True)
        self.step_losses.append(float(loss.detach()))
        return loss

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        self.model.update_ema()

    def configure_optimizers(self) -> dict[str, Any]:
        cfg = self.model.config
        optimizer = torch.optim.AdamW(self.model.net.parameters(), lr=cfg.lr, betas=tuple(cfg.betas),
                                      weight_decay=cfg.weight_decay)
        total, warmup = self.total_steps, self.warmup_steps
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: warmup_cosine(s, 1.0, warmup, total, 0.0))
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}


def load_windows(model: DiffusionPolicy, folders: Folders, expert_only: bool) -> Windows | None:
    cfg = model.config
    return encode_windows(model.backbone, folders, obs_steps=cfg.obs_steps, horizon=cfg.horizon,
                          action_steps=cfg.action_steps, expert_only=expert_only)


def fit(model: DiffusionPolicy, demos: Windows, prior: Windows | None, *, steps: int, warmup_steps: int, seed: int,
        out: str | Path | None, progress: bool) -> list[float]:
    """Train ``model`` in place for ``steps`` batches of demo windows (and prior windows in the config's
    ``prior_fraction``; actions already normalised); returns the per-step losses."""
    from simdist.training.module import epoch_trainer

    cfg = model.config
    stream = BatchStream(demos, prior, steps=steps, batch_size=cfg.batch_size, prior_fraction=cfg.prior_fraction,
                         seed=int(np.random.SeedSequence([seed, 1]).generate_state(1)[0]))
    loader = torch.utils.data.DataLoader(stream, batch_size=None, shuffle=False, num_workers=0)
    module = DiffusionPolicyModule(model.cpu(), total_steps=steps, warmup_steps=warmup_steps, seed=seed)
    root = Path(out) if out is not None else Path("lightning_logs")
    with warnings.catch_warnings():
        for noise in (".*does not have many workers.*", ".*module\\(s\\) in eval mode.*"):
            warnings.filterwarnings("ignore", message=noise)  # no workers and a frozen encoder, by design
        epoch_trainer(root, 1, progress).fit(module, train_dataloaders=loader)
    model.eval()
    return list(module.step_losses)
