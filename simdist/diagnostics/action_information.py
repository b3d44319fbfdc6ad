"""Does a world model use the future actions? (*action information*, a world model's first planning diagnostic)

A planner can only rank its candidates if the model's prediction depends on the candidate's actions. On held-out
windows this measures that dependence directly: the latent-consistency error ‖ẑ_{t+k} − E(o_{t+k})‖² per horizon
step with the window's true future actions against the same windows given another window's future actions (a
derangement of the batch, so no window keeps its own), how far the predicted latents move (RMS of the change over
the RMS spread of the predicted latents around their mean), and the predicted return R̂ = Σ γ^k r̂_k + γ^(T+offset)
V̂ with true and with swapped actions: its change over its spread, and its correlation with the window's label
return (the logged rewards and value label, the same sum). A model that predicts from the history alone has equal
errors with both, moves its latents little and keeps its correlation when the actions are swapped.

The second diagnostic, *plan ranking* (Spearman ρ of the predicted against the true returns of the planner's own
candidates from cloned states), is :mod:`simdist.diagnostics.mechanism`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from simdist.planning.base import discounted_return, eval_mode

__all__ = ["ActionInformation", "action_information", "dataset_windows", "derangement", "to_device"]


@dataclass
class ActionInformation:
    """The action-information report of one model on one batch of held-out windows (see the module docstring)."""

    windows: int
    consistency_true: list[float]  # per horizon step
    consistency_permuted: list[float]
    latent_shift: float  # RMS latent change under swapped actions / RMS spread of the predicted latents
    return_shift: float  # RMS predicted-return change / std of the predicted return
    return_label_corr_true: float  # Pearson r of R̂ (true actions) with the label return
    return_label_corr_permuted: float

    @property
    def consistency_ratio(self) -> float:
        """Mean consistency error with swapped actions over that with the true ones (1: actions unused)."""
        return float(np.mean(self.consistency_permuted) / max(np.mean(self.consistency_true), 1e-12))

    def to_dict(self) -> dict[str, Any]:
        """Every field plus the derived summaries, JSON-ready."""
        return {**asdict(self), "consistency_ratio": self.consistency_ratio,
                "consistency_true_mean": float(np.mean(self.consistency_true)),
                "consistency_permuted_mean": float(np.mean(self.consistency_permuted))}

    def metrics(self, prefix: str = "diag/") -> dict[str, float]:
        """Scalars for a logger: means, the last horizon step, the shifts and the correlations."""
        values: dict[str, Any] = {
            "consistency_true": np.mean(self.consistency_true), "consistency_permuted":
            np.mean(self.consistency_permuted), "consistency_ratio": self.consistency_ratio,
            "consistency_true_last": self.consistency_true[-1], "consistency_permuted_last":
            self.consistency_permuted[-1], "latent_shift": self.latent_shift, "return_shift": self.return_shift,
            "return_label_corr_true": self.return_label_corr_true,
            "return_label_corr_permuted": self.return_label_corr_permuted}
        return {f"{prefix}{k}": float(v) for k, v in values.items()}


def derangement(n: int, generator: torch.Generator) -> Tensor:
    """A random permutation of ``range(n)`` with no fixed point (one cycle through a shuffled order), n >= 2."""
    if n < 2:
        raise ValueError(f"swapping actions between windows needs at least 2 windows, got {n}")
    order = torch.randperm(n, generator=generator)
    perm = torch.empty(n, dtype=torch.long)
    perm[order] = order.roll(1)
    return perm


def _pearson(a: Tensor, b: Tensor) -> float:
    a, b = a.double() - a.double().mean(), b.double() - b.double().mean()
    denom = float(a.norm() * b.norm())
    return float((a * b).sum()) / denom if denom > 0 else 0.0


def action_information(model: Any, batch: Mapping[str, Any], *, gamma: float = 0.99, seed: int = 0
                       ) -> ActionInformation:
    """The action-information report of ``model`` on a window ``batch`` (the training windows' keys, on the
    model's device; ``rewards`` and ``values`` labels for the return correlation). Deterministic in ``seed``."""
    acts = batch["fut_acts"]
    n = acts.shape[0]
    for key in ("rewards", "values"):
        if key not in batch:
            raise KeyError(f"action_information needs the windows' {key!r} labels; the batch has {sorted(batch)}")
    perm = derangement(n, torch.Generator().manual_seed(int(seed))).to(acts.device)
    offset = int(model.config.value_offset)
    with eval_mode(model):
        encoding = model.encode(batch["obs_hist"], batch["act_hist"])
        target = model.target_latents(batch["fut_obs"])
        out = {}
        for name, actions in (("true", acts), ("permuted", acts[perm])):
            im = model.imagine(encoding, actions, batch["fut_cmds"])
            out[name] = (im.latents, discounted_return(im.rewards, im.values, gamma, offset))
    label = discounted_return(batch["rewards"].float(), batch["values"].float(), gamma, offset)
    (z_true, r_true), (z_perm, r_perm) = out["true"], out["permuted"]
    spread = (z_true - z_true.mean(dim=0, keepdim=True)).pow(2).mean().sqrt()
    return ActionInformation(
        windows=int(n),
        consistency_true=(z_true - target).pow(2).mean(dim=(0, 2)).tolist(),
        consistency_permuted=(z_perm - target).pow(2).mean(dim=(0, 2)).tolist(),
        latent_shift=float((z_perm - z_true).pow(2).mean().sqrt() / spread.clamp_min(1e-12)),
        return_shift=float((r_perm - r_true).pow(2).mean().sqrt() / r_true.std().clamp_min(1e-12)),
        return_label_corr_true=_pearson(r_true, label),
        return_label_corr_permuted=_pearson(r_perm, label),
    )


def dataset_windows(folder: str | Path, model: Any, *, windows: int = 512, seed: int = 0,
                    split: str = "train") -> dict[str, Any]:
    """``windows`` shuffled training windows of the model's history and horizon from the dataset ``folder``, as
    one batch on the model's device (``split="val"``: the folder's held-out episodes, read in order)."""
    from simdist.data import DataError, TrajectoryDataModule
    from simdist.data.shards import check_data_for_model

    cfg = model.config
    check_data_for_model(folder, cfg)
    dm = TrajectoryDataModule(str(folder), history=cfg.history, horizon=cfg.horizon, batch_size=int(windows),
                              windows_per_epoch=int(windows) if split == "train" else None,
                              heldout_fraction=0.0 if split == "train" else 0.05, value_offset=cfg.value_offset,
                              seed=seed)
    dm.setup("fit")
    batch = next(iter(dm.train_dataloader() if split == "train" else dm.val_dataloader()), None)
    if batch is None:
        raise DataError(f"{folder}: no {split} window of {cfg.history} + {cfg.horizon} steps (the model's history "
                        "and horizon): its episodes are too short for this model")
    return to_device(batch, model.device)


def to_device(tree: Any, device: torch.device) -> Any:
    """A (nested) dict of tensors, e.g. a collated window batch, on ``device``."""
    if isinstance(tree, Mapping):
        return {k: to_device(v, device) for k, v in tree.items()}
    return tree.to(device)
