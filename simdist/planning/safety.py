"""``FallbackOnNonFinite``: a planner wrapper that substitutes a safe action where an env's inputs are not finite.

Planners refuse non-finite observations, previous actions and commands (``NonFiniteError``, naming the envs
and the key). Where a user prefers to keep the other envs running, this wrapper gives the envs whose inputs
hold a NaN or an infinity the ``fallback`` action instead (e.g. zeros: the default pose of a position-
controlled robot), plans for the rest, and counts every substitution in ``fallbacks`` (env-ticks).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from simdist.planning.history import ObservationHistory

logger = logging.getLogger(__name__)


class FallbackOnNonFinite:
    """``act(history)`` of ``planner``, with ``fallback`` (a scalar or an (A,) action) for non-finite envs."""

    def __init__(self, planner: Any, fallback: float | Tensor = 0.0) -> None:
        self.planner = planner
        self.fallback = torch.as_tensor(fallback, dtype=torch.float32)
        self.fallbacks = 0

    def __getattr__(self, name: str) -> Any:  # world_model, per_env_state, settings of the wrapped planner
        return getattr(self.planner, name)

    def reset(self, ids: Any = None, seed: int | None = None) -> None:
        """Reset the wrapped planner (envs ``ids``, all if None)."""
        self.planner.reset(ids=ids, seed=seed)

    def act(self, history: ObservationHistory | Mapping[str, Any]) -> Tensor:
        """The wrapped planner's action; envs whose inputs are not finite get the fallback action instead."""
        command: Tensor | None
        if isinstance(history, ObservationHistory):
            obs, act, command = history.as_inputs()
        else:
            obs, act, command = history["obs_hist"], history["act_hist"], history.get("command")
        parts = [torch.as_tensor(x) for x in (*obs.values(), act, *([command] if command is not None else []))]
        bad = torch.zeros(parts[0].shape[0], dtype=torch.bool)
        for x in parts:
            bad |= ~torch.isfinite(x.reshape(x.shape[0], -1).float()).all(dim=1)
        if not bad.any():
            return self.planner.act(history)

        def clean(x: Any) -> Tensor:
            return torch.nan_to_num(torch.as_tensor(x), nan=0.0, posinf=0.0, neginf=0.0)

        inputs = {"obs_hist": {k: clean(v) for k, v in obs.items()}, "act_hist": clean(act),
                  "command": None if command is None else clean(command)}
        actions = self.planner.act(inputs).clone()
        actions[bad] = self.fallback.to(actions.dtype).expand_as(actions[bad])
        rows = torch.nonzero(bad).flatten().tolist()
        self.fallbacks += len(rows)
        logger.warning("non-finite inputs for env(s) %s: executed the fallback action (%d so far)", rows[:10],
                       self.fallbacks)
        return actions
