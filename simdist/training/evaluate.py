"""Held-out evaluation of a world model on logged episodes (no augmentation, eval mode)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from simdist.data.schema import Episode, front_pad
from simdist.data.windows import gather_windows, window_starts
from simdist.model.world_model import WorldModel


def episode_batch(model: WorldModel, ep: Episode, front_padding: int = 0, last_only: bool = False
                  ) -> dict[str, Any] | None:
    """Every training window of ``ep`` (only the last with ``last_only``) as one tensor batch on the model's
    device (None if too short)."""
    cfg = model.config
    if front_padding:
        ep = front_pad(ep, front_padding)
    starts = window_starts(len(ep), cfg.history, cfg.horizon)
    if last_only:
        starts = starts[-1:]
    if len(starts) == 0:
        return None
    windows = gather_windows(ep, starts, cfg.history, cfg.horizon, value_offset=cfg.value_offset)
    return tensors_to_device(windows, model.device)


def tensors_to_device(tree: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """A (nested) dict of arrays, e.g. :func:`~simdist.data.gather_windows` windows, as float32 tensors on
    ``device``."""
    return {k: tensors_to_device(v, device) if isinstance(v, dict)
            else torch.as_tensor(np.asarray(v, dtype=np.float32), device=device) for k, v in tree.items()}


@torch.no_grad()
def consistency_loss(
    model: WorldModel, episodes: Iterable[Episode], *, front_padding: int = 0, per_step: bool = False,
) -> float | np.ndarray:
    """Mean latent-consistency error ‖ẑ_{t+k} − E(o_{t+k})‖² over every window of ``episodes``.

    With ``per_step`` the error is averaged per window start instead (a curve along the trajectory,
    like the paper's held-out consistency plot).
    """
    was_training = model.training
    model.eval()
    errors = []
    for ep in episodes:
        batch = episode_batch(model, ep, front_padding)
        if batch is None:
            continue
        pred = model.predict(batch, heads=False)
        err = (pred.latents - model.target_latents(batch["fut_obs"])).pow(2).mean(dim=(-1, -2))
        errors.append(err.cpu().numpy())
    model.train(was_training)
    if not errors:
        raise ValueError("no episode is long enough for a single window")
    flat = np.concatenate(errors)
    return flat if per_step else float(flat.mean())
