"""``PlannerPolicy``: a planner (policy head, MPPI) as a batched ``policy(obs) -> actions`` callable.

The data engine and other loops that speak the expert's interface (observation dict in, (B, A) actions
out, ``reset(ids)`` at episode starts) can drive a world model with it: it keeps each env's
:class:`ObservationHistory`, filled from the observations it is called with and the actions it is told
were applied (``record``), and reads the command from the observation group ``command_key``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from simdist.planning.history import ObservationHistory


class PlannerPolicy:
    """``policy(obs)`` for ``num_envs`` envs from a planner; call ``record(applied)`` after every step."""

    def __init__(self, planner: Any, num_envs: int, command_key: str = "command", name: str | None = None) -> None:
        self.planner = planner
        self.history = ObservationHistory.for_model(planner.world_model, num_envs=num_envs)
        self.command_key = command_key
        self.name = name or f"world_model:{type(planner).__name__}"
        self._fresh = np.ones(num_envs, bool)
        self._applied: np.ndarray | None = None

    def reset(self, ids: Any = None) -> None:
        """Envs ``ids`` (all if None) start a new episode: their next call refills their history."""
        self._fresh[slice(None) if ids is None else np.asarray(ids, np.int64)] = True
        if hasattr(self.planner, "reset"):
            self.planner.reset(ids=None if ids is None else np.asarray(ids, np.int64).tolist())

    def record(self, applied: np.ndarray) -> None:
        """The actions (B, A) the env applied after the last call (noise, holds and overrides included)."""
        self._applied = np.asarray(applied, np.float32)

    def _command(self, obs: Mapping[str, np.ndarray], rows: Any = slice(None)) -> np.ndarray | None:
        if not self.history.command_dim:
            return None
        if self.command_key not in obs:
            raise KeyError(f"the model is command-conditioned but obs lacks {self.command_key!r}")
        return np.asarray(obs[self.command_key], np.float32)[rows]

    @property
    def plans_rows(self) -> bool:
        """Whether ``policy(obs, rows=...)`` may plan for a subset of the envs (the planner keeps no per-env
        state, e.g. the policy head), so a caller that needs few envs' actions does not pay for all."""
        return not getattr(self.planner, "per_env_state", True)

    def __call__(self, obs: Mapping[str, np.ndarray], rows: Any = None) -> np.ndarray:
        """Actions (B, A) for all envs, or (len(rows), A) for the envs ``rows`` (indices or a (B,) mask; needs
        :attr:`plans_rows`). Every env's history takes in ``obs`` either way."""
        if rows is not None and not self.plans_rows:
            raise ValueError(f"{type(self.planner).__name__} keeps per-env state; it plans for all envs, not rows")
        fresh = np.flatnonzero(self._fresh)
        if len(fresh) < self.history.num_envs:
            if self._applied is None:
                raise RuntimeError("record(applied) was not called after the previous step")
            self.history.push(obs, self._applied, command=self._command(obs))
        if len(fresh):
            first = {k: np.asarray(v)[fresh] for k, v in obs.items() if k in self.history.obs_spec}
            self.history.reset(first, ids=fresh, command=self._command(obs, fresh))
            self._fresh[:] = False
        self._applied = None
        if rows is None:
            return self.planner.act(self.history).detach().cpu().numpy().astype(np.float32)
        subset = self.history.as_dict(ids=rows)
        if not len(subset["act_hist"]):
            return np.zeros((0, self.history.action_dim), np.float32)
        return self.planner.act(subset).detach().cpu().numpy().astype(np.float32)
