"""Finetune a world model's value head on the planner's own candidates (beyond the paper).

MPPI uses its value head only to order one state's candidates, yet SimDist trains that head on one label per
dataset state, where the labels' spread across states (tens) dwarfs the spread that matters to the planner
(a few units between one state's candidates). This module trains the head on what the planner asks of it:

1. :func:`collect_candidate_set` lets a planning agent drive the task's env, clones states with K of the
   candidates its planner scored there and each candidate's true return (``truth="expert"``: the task's
   ``true_returns``, the expert's continuation, as :mod:`simdist.diagnostics.mechanism` does; ``"critic"``: the
   task's ``critic_return_parts``, its fitted expert critic at the candidate's end state, far cheaper where the
   critic is valid), and stores them as a :class:`CandidateSet`, with the true return's parts inside the horizon
   and after it where asked.
2. :func:`fit_candidate_ranking` trains the chosen parts (default: only the value head) on the model's imagined
   latents of those candidates. ``objective="within"``: the model's planning score of every candidate,
   Σγ^k r̂_k + γ^(T+offset) V̂, matches the true return once each state's mean is removed (the within-state
   error, what a ranking depends on), plus ``level_weight`` times the plain error (which keeps the value's
   level). ``objective="listnet"``: a listwise ranking loss over each state's K candidates (:func:`listwise_loss`,
   ListNet's softmax cross-entropy on the whole scores) plus ``parts_weight`` times the regression of the reward
   part to the true horizon part and of the value part to the true tail (:func:`parts_loss`). Lightning runs the
   steps; everything else stays frozen.

What stops the gradients: the encoder runs under ``no_grad`` and every component the freeze policy does not name
has ``requires_grad=False``, so with ``value`` or ``score_heads`` only the heads move while the imagined latents
they read stay those the planner's dynamics produces. The heads learn to score the dynamics' own imagined
futures (its errors included), which is what MPPI ranks; the dynamics keeps the consistency fit that
pretraining (and dynamics-only adaptation) gave it, which a few thousand states of one planner must not overwrite.

Held-out states (another seed) measure whether the ranking generalises: ``simdist mechanism`` on the result.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from torch import Tensor

from simdist.capabilities import StateCloning
from simdist.diagnostics.mechanism import MechanismConfig, true_return_parts, true_returns, visit_states
from simdist.diagnostics.visited import candidate_rows
from simdist.fsutil import atomic_path
from simdist.model.freeze import FreezePolicy
from simdist.planning.base import plan_score, return_parts

logger = logging.getLogger(__name__)

_OBS = "obs_hist/"
_PARTS = "parts/"
_CAND_OBS = "cand_obs/"
#: where a candidate set's true returns come from (:func:`collect_candidate_set`)
TRUTHS = ("expert", "critic")
#: the training objectives of :func:`fit_candidate_ranking`
OBJECTIVES = ("within", "listnet")


@dataclass
class CandidateSet:
    """States with their planner inputs, K candidate action sequences each and the candidates' true returns."""

    obs_hist: dict[str, Tensor]  # (S, H+1, ...)
    act_hist: Tensor  # (S, H, A)
    command: Tensor  # (S, C)
    candidates: Tensor  # (S, K, T, A)
    returns: Tensor  # (S, K)
    #: parts of the true returns, each (S, K): ``horizon`` (Σ_{k<T} γ^k r_k), ``tail`` (returns − horizon)
    parts: dict[str, Tensor] = field(default_factory=dict)
    #: the observations each candidate really reached open loop, each group (S, K, T, ...) (``collect
    #: observations=True``): what the model's encoder turns into the candidate's true latents
    observations: dict[str, Tensor] = field(default_factory=dict)

    def __post_init__(self) -> None:
        s, k, t = self.candidates.shape[:3]
        sizes = {"act_hist": len(self.act_hist), "command": len(self.command), "returns": len(self.returns),
                 **{f"{_OBS}{n}": len(v) for n, v in self.obs_hist.items()}}
        wrong: dict[str, Any] = {n: v for n, v in sizes.items() if v != s}
        shapes = {n: tuple(v.shape) for n, v in {"returns": self.returns, **self.parts}.items()}
        wrong |= {f"{_CAND_OBS}{n}": tuple(v.shape[:3]) for n, v in self.observations.items()
                  if tuple(v.shape[:3]) != (s, k, t)}
        if wrong or any(v != (s, k) for v in shapes.values()):
            raise ValueError(f"a candidate set of {s} states x {k} candidates has rows {wrong or sizes} and returns "
                             f"{shapes}")
        if not all(torch.isfinite(v).all() for v in (self.returns, *self.parts.values())):
            raise ValueError("candidate returns are not finite: refusing to train on NaN")

    def __len__(self) -> int:
        return len(self.candidates)

    def rows(self, index: Tensor | np.ndarray | Sequence[int]) -> CandidateSet:
        """The states ``index``, as a new set."""
        i = torch.as_tensor(np.asarray(index), dtype=torch.long)
        return CandidateSet({k: v[i] for k, v in self.obs_hist.items()}, self.act_hist[i], self.command[i],
                            self.candidates[i], self.returns[i], {k: v[i] for k, v in self.parts.items()},
                            {k: v[i] for k, v in self.observations.items()})

    @classmethod
    def concat(cls, sets: Iterable[CandidateSet]) -> CandidateSet:
        """One set of every state of ``sets`` (the same groups and shapes; the parts and candidate observations
        every set has)."""
        sets = list(sets)
        if not sets:
            raise ValueError("no candidate sets to join")
        parts = set(sets[0].parts).intersection(*(s.parts for s in sets[1:]))
        observed = set(sets[0].observations).intersection(*(s.observations for s in sets[1:]))
        return cls({k: torch.cat([s.obs_hist[k] for s in sets]) for k in sets[0].obs_hist},
                   torch.cat([s.act_hist for s in sets]), torch.cat([s.command for s in sets]),
                   torch.cat([s.candidates for s in sets]), torch.cat([s.returns for s in sets]),
                   {k: torch.cat([s.parts[k] for s in sets]) for k in sorted(parts)},
                   {k: torch.cat([s.observations[k] for s in sets]) for k in sorted(observed)})

    def save(self, path: str | Path) -> Path:
        """Write the set as one safetensors file, atomically (a temporary file, then a rename)."""
        from safetensors.torch import save_file

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tensors = {f"{_OBS}{k}": v for k, v in self.obs_hist.items()} | {
            "act_hist": self.act_hist, "command": self.command, "candidates": self.candidates, "returns": self.returns
        } | {f"{_PARTS}{k}": v for k, v in self.parts.items()} | {
            f"{_CAND_OBS}{k}": v for k, v in self.observations.items()}
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
                   t["candidates"], t["returns"], {k[len(_PARTS):]: v for k, v in t.items() if k.startswith(_PARTS)},
                   {k[len(_CAND_OBS):]: v for k, v in t.items() if k.startswith(_CAND_OBS)})


def collect_candidate_set(task: StateCloning, agent: Any, cfg: MechanismConfig, progress: bool = False,
                          truth: str = "expert", parts: bool = False, observations: bool = False,
                          timings: dict[str, float] | None = None) -> CandidateSet:
    """``cfg.states`` states that ``agent``'s planner visits on ``task``'s env, each with ``cfg.candidates`` of
    the sequences it scored there (``cfg.pool``: every iteration's or the last one's) and their true returns
    (:func:`simdist.diagnostics.mechanism.visit_states`). ``truth="expert"``: the task's expert continues each
    candidate (:func:`~simdist.diagnostics.mechanism.true_returns`; with ``parts``,
    :meth:`StateCloning.true_return_parts` and the parts kept); ``"critic"``: the task's fitted critic ends it
    (:meth:`StateCloning.critic_return_parts`, parts always kept). ``observations``: also the observations each
    candidate reaches open loop from its clone (:func:`~simdist.diagnostics.response.candidate_observations`, a task
    that restores states), after the truth, so the states, candidates and returns are those of a set without;
    ``timings`` gets their CPU seconds (``observations_cpu_seconds``)."""
    if truth not in TRUTHS:
        raise ValueError(f"truth must be one of {TRUTHS}, got {truth!r}")
    visited = visit_states(task, agent, cfg)
    kept: dict[str, np.ndarray] = {}
    if truth == "critic":
        rows, actions = candidate_rows(visited)
        raw = task.critic_return_parts(visited.states, rows, actions, gamma=cfg.gamma, seed=cfg.seed,
                                       progress=progress)
        kept = {k: np.asarray(v, np.float64).reshape(visited.candidates.shape[:2]) for k, v in raw.items()}
    elif parts:
        kept = true_return_parts(task, visited, cfg, progress=progress)
    total = kept["total"] if kept else true_returns(task, visited, cfg, progress=progress)
    reached: dict[str, Tensor] = {}
    if observations:
        import time

        from simdist.diagnostics.response import candidate_observations

        start = time.process_time()
        reached = {k: torch.as_tensor(v) for k, v in
                   candidate_observations(task, visited, cfg.seed, progress=progress).items()}
        if timings is not None:
            timings["observations_cpu_seconds"] = time.process_time() - start
    return CandidateSet(dict(visited.obs_hist), visited.act_hist, visited.command, visited.candidates,
                        torch.as_tensor(total, dtype=torch.float32),
                        {k: torch.as_tensor(kept[k], dtype=torch.float32) for k in ("horizon", "tail") if k in kept},
                        reached)


def ranking_loss(score: Tensor, truth: Tensor, *, within_scale: float, level_scale: float,
                 level_weight: float) -> tuple[Tensor, Tensor, Tensor]:
    """(loss, within-state term, level term) for (S, K) predicted scores against true returns: the mean squared
    error once each state's mean is removed over ``within_scale``² (the truth's within-state std), plus
    ``level_weight`` × the plain mean squared error over ``level_scale``² (the truth's std over all states)."""
    centred = (score - score.mean(1, keepdim=True)) - (truth - truth.mean(1, keepdim=True))
    within = (centred ** 2).mean() / within_scale ** 2
    level = ((score - truth) ** 2).mean() / level_scale ** 2
    return within + level_weight * level, within, level


def listwise_loss(score: Tensor, truth: Tensor, *, temperature: float) -> Tensor:
    """ListNet's listwise ranking loss for (S, K) predicted scores against true returns: per state, the
    Kullback-Leibler divergence from softmax(truth / temperature) to softmax(score / temperature) over its K
    candidates (the cross-entropy less the target's entropy, so 0 when the two softmaxes agree), averaged over
    states. A shift of a state's scores changes nothing; their order and gaps, on the temperature's scale, do."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    target = torch.softmax(truth / temperature, 1)
    log_pred = torch.log_softmax(score / temperature, 1)
    return (target * (torch.log(target.clamp_min(1e-12)) - log_pred)).sum(1).mean()


def parts_loss(pred_horizon: Tensor, pred_tail: Tensor, horizon: Tensor, tail: Tensor, *, within_scale: float,
               level_scale: float, level_weight: float) -> Tensor:
    """The regression of the score's two parts to the true ones, each (S, K): :func:`ranking_loss` of the
    predicted horizon rewards against the true horizon part plus that of the value term against the true tail,
    halved (the same units as the whole score's)."""
    units = {"within_scale": within_scale, "level_scale": level_scale, "level_weight": level_weight}
    return (ranking_loss(pred_horizon, horizon, **units)[0] + ranking_loss(pred_tail, tail, **units)[0]) / 2


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
    """Trains the parts of ``world_model`` that ``trainable`` names on its planning score over ``data``'s states
    (the loader yields state indices): :func:`ranking_loss` (``objective="within"``) or :func:`listwise_loss` at
    ``temperature`` within-state standard deviations plus ``parts_weight`` × :func:`parts_loss` (``"listnet"``;
    without the true parts in ``data``, :func:`ranking_loss` of the whole score stands in for the regression);
    the rest stays frozen and in eval mode."""

    def __init__(self, world_model: Any, data: CandidateSet, *, gamma: float, lr: float, steps: int,
                 level_weight: float, trainable: FreezePolicy, objective: str = "within", temperature: float = 1.0,
                 parts_weight: float = 1.0) -> None:
        super().__init__()
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
        self.world_model, self.data, self.trainable = world_model, data, trainable
        self.gamma, self.lr, self.steps, self.level_weight = gamma, lr, steps, level_weight
        self.objective, self.temperature, self.parts_weight = objective, temperature, parts_weight
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
        truth = batch.returns.to(self.device)
        units = {"within_scale": self.scales[0], "level_scale": self.scales[1], "level_weight": self.level_weight}
        if self.objective == "within":
            loss, within, level = ranking_loss(plan_score(im, self.gamma, wm.config.value_offset), truth, **units)
            self.log_dict({"train/loss": loss, "train/within": within, "train/level": level}, prog_bar=True)
            return loss
        pred_horizon, pred_tail = return_parts(im.rewards, im.values, self.gamma, wm.config.value_offset)
        score = pred_horizon + pred_tail
        listwise = listwise_loss(score, truth, temperature=self.temperature * self.scales[0])
        if "horizon" in batch.parts:
            horizon = batch.parts["horizon"].to(self.device)
            regression = parts_loss(pred_horizon, pred_tail, horizon, truth - horizon, **units)
        else:
            regression = ranking_loss(score, truth, **units)[0]
        loss = listwise + self.parts_weight * regression
        self.log_dict({"train/loss": loss, "train/listwise": listwise, "train/regression": regression},
                      prog_bar=True)
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
                          log_dir: str | Path | None = None, progress: bool = False, objective: str = "within",
                          temperature: float = 1.0, parts_weight: float = 1.0) -> dict[str, float]:
    """Train ``trainable`` (default the value head; everything else frozen) of ``world_model`` in place for
    ``steps`` Adam steps (cosine to lr/10) of ``batch_states`` states with all their candidates, on
    ``objective`` (:class:`CandidateRankingModule`). ``log_dir`` gets Lightning's CSV metrics. Returns the last
    logged loss terms."""
    if steps < 1 or batch_states < 1:
        raise ValueError(f"steps and batch_states must be >= 1, got {steps} and {batch_states}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    policy = FreezePolicy.parse(trainable)
    L.seed_everything(seed, workers=True, verbose=False)
    module = CandidateRankingModule(world_model, data, gamma=gamma, lr=lr, steps=steps, level_weight=level_weight,
                                    trainable=policy, objective=objective, temperature=temperature,
                                    parts_weight=parts_weight)
    return train_on_states(module, len(data), steps=steps, batch_states=batch_states, seed=seed, log_dir=log_dir,
                           progress=progress)


def train_on_states(module: L.LightningModule, states: int, *, steps: int, batch_states: int, seed: int = 0,
                    log_dir: str | Path | None = None, progress: bool = False) -> dict[str, float]:
    """Run ``module`` (whose ``world_model`` it trains, and whose training steps take a batch of state indices)
    for ``steps`` steps of ``batch_states`` of ``states`` shuffled indices; ``log_dir`` gets Lightning's CSV
    metrics. Leaves the world model in eval mode; returns the last logged metrics."""
    if steps < 1 or batch_states < 1:
        raise ValueError(f"steps and batch_states must be >= 1, got {steps} and {batch_states}")
    L.seed_everything(seed, workers=True, verbose=False)
    world_model: Any = module.world_model
    loader = torch.utils.data.DataLoader(_States(states), batch_size=min(batch_states, states), shuffle=True,
                                         drop_last=True, generator=torch.Generator().manual_seed(seed))
    logger_ = L.pytorch.loggers.CSVLogger(str(log_dir), name="", version="") if log_dir else False
    trainer = L.Trainer(max_steps=steps, accelerator="auto", devices=1, logger=logger_, enable_checkpointing=False,
                        enable_progress_bar=progress, enable_model_summary=False,
                        log_every_n_steps=max(1, min(50, steps, len(loader))),
                        deterministic=True)
    trainer.fit(module, loader)
    world_model.eval()
    return {k: float(v) for k, v in trainer.callback_metrics.items()}


def score_candidates(models: Mapping[str, Any], data: CandidateSet, *, gamma: float = 0.99,
                     compare: CandidateSet | None = None, chunk: int = 256, expansion: int = 0,
                     true_latents: bool = False) -> dict[str, Any]:
    """How each world model of ``models`` (name → model) ranks ``data``'s candidates by its planning score
    Σγ^k r̂_k + γ^(T+offset) V̂ (value weight 1, no disagreement penalty) against their true returns, from the
    same histories the planner had: per model :func:`~simdist.diagnostics.mechanism.ranking_report` (Spearman ρ
    per state, regret, ... with 95 % intervals over states) and, where ``data`` has the true parts, the split of
    :func:`~simdist.diagnostics.mechanism.split_report` (which part of the score ranks). ``compare``: another
    truth of the same states and candidates, ranked against ``data``'s as if it were a model (the fidelity of a
    cheaper truth). ``expansion`` K > 0 scores as the planner's ``value_expansion`` K does: the horizon part over
    T+K steps (the policy head's K after the candidate's T), the value at ẑ_{T+K}. ``true_latents``: also the
    control that separates the dynamics from the heads (:func:`~simdist.diagnostics.mechanism.true_latent_report`,
    per model under ``true_latents``): the same heads on the candidates' true latents, the model's encoding of the
    observations each really reached (``data`` collected with ``observations``, and its true parts)."""
    from simdist.diagnostics.mechanism import (
        predicted_parts,
        ranking_report,
        split_report,
        true_latent_parts,
        true_latent_report,
    )
    from simdist.diagnostics.response import true_latents as encode_reached
    from simdist.diagnostics.visited import VisitedStates
    from simdist.evaluation import bootstrap_ci

    if true_latents and (not data.observations or "horizon" not in data.parts):
        raise ValueError("true latents need a set collected with its candidates' observations and the true parts "
                         "(value-rank collect --observations --parts)")
    if true_latents and expansion:
        raise ValueError("true latents score the candidates' own T steps: not with an expansion")
    truth = data.returns.double().numpy()
    parts = None
    if "horizon" in data.parts:
        horizon = data.parts["horizon"].double().numpy()
        parts = {"total": truth, "horizon": horizon, "tail": truth - horizon}
    summary: dict[str, Any] = {"states": len(data), "candidates": int(data.candidates.shape[1]),
                               "true_return": asdict(bootstrap_ci(truth.mean(1))),
                               "true_spread": asdict(bootstrap_ci(np.ptp(truth, axis=1)))}
    if parts is not None:
        summary |= {f"{k}_spread": asdict(bootstrap_ci(np.ptp(parts[k], axis=1))) for k in ("horizon", "tail")}
    if compare is not None:
        if compare.candidates.shape != data.candidates.shape or not torch.allclose(compare.candidates,
                                                                                    data.candidates):
            raise ValueError("compare: not the same states and candidates as data (collect both with the same seeds "
                             "and settings)")
        summary["compare"] = ranking_report(compare.returns.double().numpy(), truth)
    scores: dict[str, Any] = {}
    for name, wm in models.items():
        pieces, on_true = [], []
        for lo in range(0, len(data), chunk):
            rows = data.rows(range(lo, min(lo + chunk, len(data))))
            visited = VisitedStates(states=None, obs_hist=rows.obs_hist, act_hist=rows.act_hist, command=rows.command,
                                    candidates=rows.candidates)
            pieces.append(predicted_parts(wm.eval(), visited, gamma, expansion))
            if true_latents:
                reached = encode_reached(wm, {k: v.numpy() for k, v in rows.observations.items()})
                on_true.append(true_latent_parts(wm, visited, reached, gamma))
        pred_r = np.concatenate([p[0] for p in pieces])
        pred_v = np.concatenate([p[1] for p in pieces])
        scores[name] = ranking_report(pred_r + pred_v, truth)
        if parts is not None:
            scores[name]["split"] = split_report(pred_r, pred_v, parts)
        if parts is not None and on_true:
            control = true_latent_report(pred_r, pred_v, np.concatenate([p[0] for p in on_true]),
                                         np.concatenate([p[1] for p in on_true]), parts)
            scores[name]["true_latents"] = {k: v for k, v in control.items() if k != "per_state"}
    return {"truth": summary, "scores": scores}
