"""``BCModule``: the LightningModule that trains a :class:`~.policy.BCPolicy` (imported only to train, so that
registering the agent does not import Lightning)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import lightning as L
import torch
from torch import Tensor

from simdist.components.agents.latent.bc_config import BCConfig
from simdist.components.agents.latent.bc_policy import BCPolicy, bc_freeze_policy
from simdist.model.freeze import ALL, FreezePolicy
from simdist.training.module import add_obs_noise, resolve_obs_noise
from simdist.training.schedule import warmup_cosine


class BCModule(L.LightningModule):
    """Trains a :class:`BCPolicy` (built from the ``config`` dict) on window batches.

    The normaliser is fitted from the datamodule's statistics when it has none yet (as pretraining does);
    a fitted one is kept. Adam, linear warmup then cosine from ``lr`` to ``end_lr`` (default: constant);
    ``obs_noise`` (per-group stds or a task name, as the world-model modules take it) perturbs the training
    inputs only. ``step_losses`` holds the loss of every optimisation step.
    """

    def __init__(self, config: dict[str, Any], freeze: str | list[str] | FreezePolicy = "all",
                 expert_only: bool = False, lr: float = 1e-3, end_lr: float | None = None, warmup_steps: int = 0,
                 decay_steps: int = 100_000, obs_noise: dict[str, list[float]] | str | None = None) -> None:
        super().__init__()
        self.save_hyperparameters()
        if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
            raise ValueError(f"lr must be a positive number, got {lr!r}")
        self.policy = BCPolicy(BCConfig.from_dict(config))
        self.freeze_policy = bc_freeze_policy(freeze)
        self.freeze_policy.apply(self.policy)
        self.expert_only = bool(expert_only)
        self.obs_noise = resolve_obs_noise(obs_noise)
        self.step_losses: list[float] = []

    def train(self, mode: bool = True) -> BCModule:
        """Like ``nn.Module.train`` but frozen components stay in eval mode."""
        super().train(mode)
        if hasattr(self, "freeze_policy"):
            self.freeze_policy.set_modes(self.policy, mode)
        return self

    def setup(self, stage: str) -> None:
        if self.freeze_policy.trainable != ALL and self.freeze_policy.eval_frozen:
            warnings.filterwarnings("ignore", message=".*module\\(s\\) in eval mode.*")
        if stage == "fit" and not bool(self.policy.normalizer.fitted):
            stats = getattr(getattr(self.trainer, "datamodule", None), "stats", None)
            if stats is None:
                raise RuntimeError("the policy has no normalisation statistics and the datamodule provides none")
            self.policy.set_stats(stats.to_dict() if hasattr(stats, "to_dict") else stats)

    def _augment(self, batch: Mapping[str, Any]) -> dict[str, Any]:
        return {**batch, "obs_hist": add_obs_noise(batch["obs_hist"], self.obs_noise)}

    def training_step(self, batch: Mapping[str, Any], batch_idx: int) -> Tensor | None:
        loss = self.policy.loss(self._augment(batch), expert_only=self.expert_only)
        if loss is None:  # no expert window in this batch: skip the step
            return None
        if not torch.isfinite(loss):
            raise FloatingPointError(f"BC training diverged at step {self.global_step}: loss {float(loss)}")
        self.log("train/loss", loss, prog_bar=True, batch_size=batch["act_hist"].shape[0], on_step=True,
                 on_epoch=True)
        self.step_losses.append(float(loss.detach()))
        return loss

    def configure_optimizers(self) -> dict[str, Any]:
        params = [p for p in self.policy.parameters() if p.requires_grad]
        if not params:
            raise ValueError(f"freeze policy {self.freeze_policy!r} leaves nothing to train")
        hp = self.hparams
        end = hp.lr if hp.end_lr is None else hp.end_lr
        optimizer = torch.optim.Adam(params, lr=hp.lr)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: warmup_cosine(step, 1.0, hp.warmup_steps, hp.decay_steps, end / hp.lr))
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}
