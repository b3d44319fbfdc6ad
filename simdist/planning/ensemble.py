"""Temporal ensembling of a planner's plans (ACT, Zhao et al. 2023), newest plan weighted most.

Each tick a planner returns a whole plan (B, T, A) but only its first action is executed. The plans of
the last ticks also said what to do now: the plan made k ticks ago at its step k. ``TemporalEnsemble``
executes their weighted mean, a_t = Σ_k w_k p_{t-k}[k] / Σ_k w_k with w_k = decay^k over the plans made
since the env's last reset (at most T). ``decay=0`` executes the newest plan's first action (the wrapped
planner unchanged). Works with any planner (``act``/``plan``/``reset`` and a ``world_model``). The decay the
real-time preset uses is ``REALTIME_DECAY`` (``simdist.components.planners.presets``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor


class TemporalEnsemble:
    """Wraps ``planner``; ``act``/``plan`` return the ensembled action, ``plan().plan`` the newest plan."""

    per_env_state = True  # the recent plans

    def __init__(self, planner: Any, decay: float) -> None:
        if not 0.0 <= decay < 1.0:
            raise ValueError(f"temporal-ensemble decay must be in [0, 1), got {decay}")
        self.planner, self.decay = planner, float(decay)
        self.world_model = planner.world_model
        self._plans: Tensor | None = None  # (B, K, T, A): slot k holds the plan made k ticks ago
        self._count: Tensor | None = None  # (B,) plans made since each env's reset

    def reset(self, ids: Sequence[int] | Tensor | None = None, seed: int | None = None) -> None:
        """Forget the plans of envs ``ids`` (all if None); resets the wrapped planner the same way."""
        if seed is None:
            self.planner.reset(ids)
        else:
            self.planner.reset(ids, seed=seed)
        if ids is None or self._count is None:
            self._plans = self._count = None
        else:
            self._count[torch.as_tensor(ids, device=self._count.device).long()] = 0

    def act(self, history: Any) -> Tensor:
        """The ensembled action (B, A) to execute now."""
        return self.plan(history).action

    def plan(self, history: Any) -> Any:
        """Plan one tick with the wrapped planner and replace its action by the ensembled one."""
        result = self.planner.plan(history)
        plan = result.plan
        b, t = plan.shape[:2]
        if self._plans is None or self._plans.shape[0] != b:
            self._plans = plan.new_zeros(b, t, *plan.shape[1:])
            self._count = torch.zeros(b, dtype=torch.long, device=plan.device)
        assert self._count is not None  # set with _plans
        self._plans = torch.cat([plan[:, None], self._plans[:, :-1]], dim=1)
        self._count = (self._count + 1).clamp(max=t)
        ages = torch.arange(t, device=plan.device)
        weights = self.decay ** ages.to(plan.dtype) * (ages[None] < self._count[:, None])  # (B, K)
        now = self._plans[:, ages, ages]  # (B, K, A): what each stored plan says for this tick
        result.action = (weights[..., None] * now).sum(1) / weights.sum(1, keepdim=True)
        result.diagnostics = {**result.diagnostics, "ensembled_plans": self._count.clone()}
        return result

    def __getattr__(self, name: str) -> Any:  # settings and diagnostics of the wrapped planner
        if name == "planner":
            raise AttributeError(name)
        return getattr(self.planner, name)

    def __repr__(self) -> str:
        return f"TemporalEnsemble({self.planner!r}, decay={self.decay})"

