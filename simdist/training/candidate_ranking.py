"""Finetune a world model's value head on the planner's own candidates (beyond the paper).

MPPI uses its value head only to order one state's candidates, yet SimDist trains that head on one label per
dataset state, where the labels' spread across states (tens) dwarfs the spread that matters to the planner
(a few units between one state's candidates). This module trains the head on what the planner asks of it:

1. :func:`collect_candidate_set` lets a planning agent drive the task's env, clones states with K of the
   candidates its planner scored there and each candidate's true return (the task's ``true_returns``, as
   :mod:`simdist.diagnostics.mechanism` does), and stores them as a :class:`CandidateSet`.
2. :func:`fit_candidate_ranking` trains the chosen parts (default: only the value head) so that the model's
   planning score of every candidate, Σγ^k r̂_k + γ^(T+offset) V̂, matches the true return once each state's
   mean is removed (the within-state error, what a ranking depends on), plus ``level_weight`` times the plain
   error (which keeps the value's level). Lightning runs the steps; everything else stays frozen.

Held-out states (another seed) measure whether the ranking generalises: ``simdist mechanism`` on the result.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from torch import Tensor

from simdist.diagnostics.mechanism import MechanismConfig, true_returns, visit_states
from simdist.fsutil import atomic_path
from simdist.model.freeze import FreezePolicy
from simdist.planning.base import plan_score
from simdist.tasks import Task

logger = logging.getLogger(__name__)

_OBS = "obs_hist/"


@dataclass
class CandidateSet:
    """States with their planner inputs, K candidate action sequences each and the candidates' true returns."""

    obs_hist: dict[str, Tensor]  # (S, H+1, ...)
    act_hist: Tensor  # (S, H, A)
    command: Tensor  # (S, C)
    candidates: Tensor  # (S, K, T, A)
    returns: Tensor  # (S, K)

    def __post_init__(self) -> None:
        s, k = self.candidates.shape[:2]
        sizes = {"act_hist": len(self.act_hist), "command": len(self.command), "returns": len(self.returns),
                 **{f"{_OBS}{n}": len(v) for n, v in self.obs_hist.items()}}
        wrong = {n: v for n, v in sizes.items() if v != s}
        if wrong or tuple(self.returns.shape) != (s, k):
            raise ValueError(f"a candidate set of {s} states x {k} candidates has rows {wrong or sizes} and returns "
                             f"{tuple(self.returns.shape)}")
        if not torch.isfinite(self.returns).all():
            raise ValueError("candidate returns are not finite: refusing to train on NaN")

    def __len__(self) -> int:
        return len(self.candidates)

    def rows(self, index: Tensor | np.ndarray | Sequence[int]) -> CandidateSet:
        """The states ``index``, as a new set."""
        i = torch.as_tensor(np.asarray(index), dtype=torch.long)
        return CandidateSet({k: v[i] for k, v in self.obs_hist.items()}, self.act_hist[i], self.command[i],
                            self.candidates[i], self.returns[i])

    @classmethod
    def concat(cls, sets: Iterable[CandidateSet]) -> CandidateSet:
        """One set of every state of ``sets`` (the same groups and shapes)."""
        sets = list(sets)
        if not sets:
            raise ValueError("no candidate sets to join")
        return cls({k: torch.cat([s.obs_hist[k] for s in sets]) for k in sets[0].obs_hist},
                   torch.cat([s.act_hist for s in sets]), torch.cat([s.command for s in sets]),
                   torch.cat([s.candidates for s in sets]), torch.cat([s.returns for s in sets]))

    def save(self, path: str | Path) -> Path:
        """Write the set as one safetensors file, atomically (a temporary file, then a rename)."""
        from safetensors.torch import save_file

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tensors = {f"{_OBS}{k}": v for k, v in self.obs_hist.items()} | {
            "act_hist": self.act_hist, "command": self.command, "candidates": self.candidates, "returns": self.returns}
        with atomic_path(path) as tmp:
            save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, str(tmp))
        return path

    @classmethod
    def load(cls, path: str | Path) -> CandidateSet:
        """A set written by :meth:`save`; a clear error for a missing file or a file that is not one."""
        from safetensors.torch import load_file

        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no candidate set there")
        t = load_file(str(path))
        missing = [k for k in ("act_hist", "command", "candidates", "returns") if k not in t]
        if missing:
            raise ValueError(f"{path}: not a candidate set (missing {missing})")
        return cls({k[len(_OBS):]: v for k, v in t.items() if k.startswith(_OBS)}, t["act_hist"], t["command"],
                   t["candidates"], t["returns"])


def collect_candidate_set(task: Task, agent: Any, cfg: MechanismConfig, progress: bool = False) -> CandidateSet:
    """``cfg.states`` states that ``agent``'s planner visits on ``task``'s env, each with ``cfg.candidates`` of
    the sequences it scored there and their true returns (:func:`simdist.diagnostics.mechanism.visit_states`,
    :func:`~simdist.diagnostics.mechanism.true_returns`)."""
    visited = visit_states(task, agent, cfg)
    truth = true_returns(task, visited, cfg, progress=progress)
    return CandidateSet(dict(visited.obs_hist), visited.act_hist, visited.command, visited.candidates,
                        torch.as_tensor(truth, dtype=torch.float32))


def ranking_loss(score: Tensor, truth: Tensor, *, within_scale: float, level_scale: float,
                 level_weight: float) -> tuple[Tensor, Tensor, Tensor]:
    """(loss, within-state term, level term) for (S, K) predicted scores against true returns: the mean squared
    error once each state's mean is removed over ``within_scale``² (the truth's within-state std), plus
    ``level_weight`` × the plain mean squared error over ``level_scale``² (the truth's std over all states)."""
    centred = (score - score.mean(1, keepdim=True)) - (truth - truth.mean(1, keepdim=True))
    within = (centred ** 2).mean() / within_scale ** 2
    level = ((score - truth) ** 2).mean() / level_scale ** 2
    return within + level_weight * level, within, level


def loss_scales(returns: Tensor) -> tuple[float, float]:
    """The units of :func:`ranking_loss` for (S, K) true returns: their within-state standard deviation (RMS over
    states) and their standard deviation over everything; 1 for a scale that is 0."""
    within = float(returns.std(1, correction=0).pow(2).mean().sqrt())
    level = float(returns.std(correction=0))
    return within if within > 0 else 1.0, level if level > 0 else 1.0


class _States(torch.utils.data.Dataset):
    """State indices 0..n-1: the loader batches indices, each training step gathers those states' rows."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        return i


class CandidateRankingModule(L.LightningModule):
    """Trains the parts of ``world_model`` that ``trainable`` names on :func:`ranking_loss` of its planning
    score over ``data``'s states (the loader yields state indices); the rest stays frozen and in eval mode."""

    def __init__(self, world_model: Any, data: CandidateSet, *, gamma: float, lr: float, steps: int,
                 level_weight: float, trainable: FreezePolicy) -> None:
        super().__init__()
        self.world_model, self.data, self.trainable = world_model, data, trainable
        self.gamma, self.lr, self.steps, self.level_weight = gamma, lr, steps, level_weight
        self.scales = loss_scales(data.returns)
        trainable.apply(world_model)

    def on_train_epoch_start(self) -> None:
        """Lightning hook: keep the frozen components in eval mode."""
        self.trainable.set_modes(self.world_model, training=True)

    def training_step(self, index: Tensor, _: int) -> Tensor:
        """The ranking loss on a batch of candidate sets."""
        batch, wm = self.data.rows(index.cpu()), self.world_model
        with torch.no_grad():
            encoding = wm.encode({k: v.to(self.device) for k, v in batch.obs_hist.items()},
                                 batch.act_hist.to(self.device))
        command = batch.command.to(self.device) if wm.config.command_dim else None
        im = wm.imagine(encoding, batch.candidates.to(self.device), command, last_value_only=True)
        loss, within, level = ranking_loss(plan_score(im, self.gamma, wm.config.value_offset),
                                           batch.returns.to(self.device), within_scale=self.scales[0],
                                           level_scale=self.scales[1], level_weight=self.level_weight)
        self.log_dict({"train/loss": loss, "train/within": within, "train/level": level}, prog_bar=True)
        return loss

    def configure_optimizers(self) -> Any:
        """Adam over the trainable parameters, cosine-annealed to a tenth of ``lr`` over the run."""
        params = [p for p in self.world_model.parameters() if p.requires_grad]
        if not params:
            raise ValueError(f"the freeze policy {self.trainable!r} leaves nothing to train")
        opt = torch.optim.Adam(params, lr=self.lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.steps, eta_min=self.lr / 10)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def fit_candidate_ranking(world_model: Any, data: CandidateSet, *, steps: int = 2000, batch_states: int = 32,
                          lr: float = 3e-4, level_weight: float = 0.1, gamma: float = 0.99,
                          trainable: str | Iterable[str] | FreezePolicy = "value", seed: int = 0,
                          log_dir: str | Path | None = None, progress: bool = False) -> dict[str, float]:
    """Train ``trainable`` (default the value head; everything else frozen) of ``world_model`` in place for
    ``steps`` Adam steps (cosine to lr/10) of ``batch_states`` states with all their candidates, on
    :func:`ranking_loss`. ``log_dir`` gets Lightning's CSV metrics. Returns the last logged loss terms."""
    if steps < 1 or batch_states < 1:
        raise ValueError(f"steps and batch_states must be >= 1, got {steps} and {batch_states}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    policy = FreezePolicy.parse(trainable)
    L.seed_everything(seed, workers=True, verbose=False)
    module = CandidateRankingModule(world_model, data, gamma=gamma, lr=lr, steps=steps, level_weight=level_weight,
                                    trainable=policy)
    loader = torch.utils.data.DataLoader(_States(len(data)), batch_size=min(batch_states, len(data)), shuffle=True,
                                         drop_last=True, generator=torch.Generator().manual_seed(seed))
    logger_ = L.pytorch.loggers.CSVLogger(str(log_dir), name="", version="") if log_dir else False
    trainer = L.Trainer(max_steps=steps, accelerator="auto", devices=1, logger=logger_, enable_checkpointing=False,
                        enable_progress_bar=progress, enable_model_summary=False,
                        log_every_n_steps=max(1, min(50, steps, len(loader))),
                        deterministic=True)
    trainer.fit(module, loader)
    world_model.eval()
    return {k: float(v) for k, v in trainer.callback_metrics.items()}
