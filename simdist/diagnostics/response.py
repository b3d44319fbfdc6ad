"""Does the dynamics predict how the planner's candidates *differ*? (what dynamics-only adaptation must learn)

A planner ranks one state's candidates, so what its dynamics must get right is how the latent trajectory
changes from one candidate to another, not the trajectory's level. Adaptation can lower the held-out
consistency loss by learning the level alone (where the state drifts whatever the action), and then no
candidate's rank moves. This module splits the latent error along that line. On the states and candidates of
:func:`~simdist.diagnostics.mechanism.visit_states`, each candidate runs open loop on the task's real env
(:func:`simdist.workflows.rollout.open_loop_observations`) and every model under test encodes the observations it
reached (``target_latents``: y, (S, K, T, D)) and predicts them (p). Per state, over its K candidates and T steps:

- ``latent_error``: mean (p − y)², the consistency loss on these candidates;
- ``offset_error``: mean (p̄ − ȳ)² of the candidate means, the part of it no ranking sees;
- ``response_error``: mean ((p − p̄) − (y − ȳ))², the error in how the candidates differ (the rest);
- ``response_unexplained``: Σ ``response_error`` over Σ mean (y − ȳ)², pooled over states: 0 for a perfect
  response, 1 for a model that predicts the same trajectory for every candidate, above 1 for predicted differences
  that point elsewhere;
- ``response_gain``: √(Σ mean (p − p̄)² / Σ mean (y − ȳ)²), how strongly the model thinks the actions matter
  relative to the env;
- ``response_cosine``: per state, the cosine of (p − p̄) and (y − ȳ) over candidates, steps and latent
  dimensions;
- ``true_response``: RMS (y − ȳ) itself (the same for models sharing an encoder).

Means (the pooled ratios: ratios of sums) with 95 % bootstrap intervals over states; the per-state terms are
kept (``per_state``) so that other summaries can be drawn from a report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import numpy as np
import torch

from simdist.capabilities import StateCloning, require
from simdist.diagnostics.visited import VisitedStates, candidate_rows, imagine_candidates
from simdist.evaluation import bootstrap_ci, ratio_bootstrap_ci
from simdist.tasks import Task


def candidate_observations(task: Task, visited: VisitedStates, seed: int, progress: bool = False
                           ) -> dict[str, np.ndarray]:
    """The observations (S, K, T, ...) each candidate reaches open loop on the task's real env (the task needs
    :class:`~simdist.capabilities.StateCloning` with ``restore_states``)."""
    from simdist.workflows.rollout import open_loop_observations

    rows, actions = candidate_rows(visited)
    obs = open_loop_observations(require(task, StateCloning, "the response diagnostic"), visited.states, rows,
                                 actions, seed=seed, progress=progress)
    lead = visited.candidates.shape[:3]
    return {k: np.asarray(v).reshape(*lead, *np.shape(v)[2:]) for k, v in obs.items()}


@torch.no_grad()
def true_latents(world_model: Any, observations: Mapping[str, np.ndarray]) -> np.ndarray:
    """The model's encoding (S, K, T, D) of the observations the candidates reached (its consistency targets)."""
    from simdist.planning.base import eval_mode

    dev = next(world_model.parameters()).device
    obs = {k: torch.as_tensor(observations[k], device=dev) for k in world_model.config.obs_spec}
    with eval_mode(world_model):
        return world_model.target_latents(obs).double().cpu().numpy()


def response_report(predicted: np.ndarray, true: np.ndarray) -> dict[str, Any]:
    """The split of the latent error of (S, K, T, D) predicted against true latents (the module's metrics)."""
    if predicted.shape != true.shape or predicted.ndim != 4:
        raise ValueError(f"predicted {predicted.shape} and true {true.shape} latents must be the same (S, K, T, D)")
    if not (np.isfinite(predicted).all() and np.isfinite(true).all()):
        raise ValueError("non-finite latents: refusing to measure NaN")
    p_mean, y_mean = predicted.mean(1, keepdims=True), true.mean(1, keepdims=True)
    dp, dy = predicted - p_mean, true - y_mean
    axes = (1, 2, 3)
    per = {
        "latent_error": ((predicted - true) ** 2).mean(axes),
        "offset_error": ((p_mean - y_mean) ** 2).mean(axes),
        "response_error": ((dp - dy) ** 2).mean(axes),
        "predicted_variance": (dp ** 2).mean(axes),
        "true_variance": (dy ** 2).mean(axes),
        "response_cosine": (dp * dy).sum(axes) / np.maximum(np.sqrt((dp ** 2).sum(axes) * (dy ** 2).sum(axes)),
                                                            1e-12),
    }
    gain = ratio_bootstrap_ci(per["predicted_variance"], per["true_variance"])
    summary = {k: asdict(bootstrap_ci(per[k])) for k in ("latent_error", "offset_error", "response_error",
                                                         "response_cosine")}
    summary["response_unexplained"] = asdict(ratio_bootstrap_ci(per["response_error"], per["true_variance"]))
    summary["response_gain"] = {**asdict(gain), **{k: float(np.sqrt(getattr(gain, k))) for k in ("mean", "low",
                                                                                                 "high")}}
    summary["true_response"] = asdict(bootstrap_ci(np.sqrt(per["true_variance"])))
    return summary | {"states": int(true.shape[0]), "candidates": int(true.shape[1]),
                      "per_state": {k: np.round(v, 8).tolist() for k, v in per.items()}}


def response_reports(task: Task, visited: VisitedStates, models: Mapping[str, Any], seed: int,
                     progress: bool = False, observations: Mapping[str, np.ndarray] | None = None
                     ) -> dict[str, dict[str, Any]]:
    """One :func:`response_report` per model (name → agent with a ``world_model``) on the same candidates, each
    against its own encoding of the observations they reached (``observations``, when the caller ran them
    already: :func:`candidate_observations`)."""
    if observations is None:
        observations = candidate_observations(task, visited, seed, progress=progress)
    reports = {}
    for name, agent in models.items():
        wm = agent.world_model
        predicted = imagine_candidates(wm, visited).latents.double().cpu().numpy()
        reports[name] = response_report(predicted, true_latents(wm, observations))
    return reports
