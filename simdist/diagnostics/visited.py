"""The states a planner visited, cloned, with the candidates it scored there: what the planner-ranking analyses
(:mod:`~simdist.diagnostics.mechanism`, :mod:`~simdist.diagnostics.response`) measure models on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch


@dataclass
class VisitedStates:
    """Cloned states with what a model needs to score candidates from them."""

    states: Any  # the task's merged snapshots, one row per state
    obs_hist: dict[str, torch.Tensor]  # (S, H+1, ...)
    act_hist: torch.Tensor  # (S, H, A)
    command: torch.Tensor  # (S, C)
    candidates: torch.Tensor  # (S, K, T, A)
    #: every tick's action (ticks × envs, A) of the driving planner (``"driver"``) and of each shadow planner
    actions: dict[str, np.ndarray] = field(default_factory=dict)
    #: (S,) the episode each state was cloned from (states of one episode are not independent draws)
    episodes: np.ndarray | None = None


@torch.no_grad()
def imagine_candidates(world_model: Any, visited: VisitedStates, latents: torch.Tensor | None = None,
                       expansion: int = 0) -> Any:
    """The model's imagination of every candidate from the same histories its planner had (eval mode); with
    ``latents`` (S, K, T, D), its heads on those latents instead of the imagined ones
    (:meth:`~simdist.model.WorldModel.score_latents`: e.g. the encoded observations each candidate really
    reached); ``expansion`` K > 0: extended by K policy-head steps before the value
    (:func:`~simdist.model.expansion.expand_imagination`, the planner's ``value_expansion``)."""
    from simdist.model.expansion import check_expansion, expand_imagination
    from simdist.planning.base import eval_mode

    if expansion and latents is not None:
        raise ValueError("expansion extends imagined latents; not given ones")
    check_expansion(world_model, expansion)

    with eval_mode(world_model):
        dev = next(world_model.parameters()).device
        obs = {k: v.to(dev) for k, v in visited.obs_hist.items()}
        encoding = world_model.encode(obs, visited.act_hist.to(dev))
        command = visited.command.to(dev) if world_model.config.command_dim else None
        actions = visited.candidates.to(dev)
        if latents is None:
            im = world_model.imagine(encoding, actions, command, last_value_only=True)
            return expand_imagination(world_model, encoding, im, actions, command, expansion)
        return world_model.score_latents(encoding, latents.to(dev, actions.dtype), actions, command,
                                         last_value_only=True)


def candidate_rows(visited: VisitedStates) -> tuple[np.ndarray, np.ndarray]:
    """The candidates flattened for a task's true-return call: each one's state row (S·K,) and its actions
    (S·K, T, A); results reshape back with ``visited.candidates.shape[:2]``."""
    s, k = visited.candidates.shape[:2]
    return np.repeat(np.arange(s), k), visited.candidates.reshape(s * k, *visited.candidates.shape[2:]).cpu().numpy()
