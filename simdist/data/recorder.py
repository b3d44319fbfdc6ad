"""Accumulate per-env steps of a batched environment into :class:`Episode` objects.

Call :meth:`EpisodeRecorder.record` once per control step with the pre-step observation, the
applied action and the step's labels (all batched over envs), and :meth:`EpisodeRecorder.finish`
for envs whose episode ended (before resetting them). Steps are stored once per batch, so
recording costs one copy per key and step regardless of ``num_envs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from simdist.data.schema import DatasetSpec, Episode


def _np(x: Any, dtype: Any) -> np.ndarray:
    if hasattr(x, "detach"):  # torch tensor, possibly on an accelerator
        x = x.detach().cpu().numpy()
    return np.array(x, dtype=dtype, copy=True)


class EpisodeRecorder:
    """Per-env episode buffers for a batch of ``num_envs`` environments.

    ``commands``, ``values`` and ``expert`` may be omitted (zeros / False), as for real-robot logs.
    Episode ids come from a counter starting at ``first_episode_id``, in the order episodes finish.
    """

    def __init__(self, num_envs: int, spec: DatasetSpec, first_episode_id: int = 0) -> None:
        self.num_envs = int(num_envs)
        self.spec = spec
        self.next_episode_id = int(first_episode_id)
        self._steps: list[dict[str, Any]] = []  # one batched record per step
        self._offset = 0  # global step index of self._steps[0]
        self._t = 0  # global step index of the next record
        self._start = np.zeros(self.num_envs, dtype=np.int64)  # global start step of each env's episode

    @property
    def lengths(self) -> np.ndarray:
        """Steps recorded so far in each env's current episode."""
        return self._t - self._start

    def record(
        self,
        obs: dict[str, Any],
        actions: Any,
        commands: Any | None = None,
        rewards: Any | None = None,
        values: Any | None = None,
        expert: Any | None = None,
    ) -> None:
        """Append one step for every env: arrays of shape ``(num_envs, ...)`` (numpy or torch)."""
        B, spec = self.num_envs, self.spec
        step: dict[str, Any] = {"obs": {}}
        for g, shape in spec.obs.items():
            if g not in obs:
                raise KeyError(f"record: missing observation group {g!r}")
            step["obs"][g] = _np(obs[g], np.float32).reshape(B, *shape)
        step["actions"] = _np(actions, np.float32).reshape(B, spec.action_dim)
        step["commands"] = (
            np.zeros((B, spec.command_dim), np.float32)
            if commands is None
            else _np(commands, np.float32).reshape(B, spec.command_dim)
        )
        step["rewards"] = np.zeros(B, np.float32) if rewards is None else _np(rewards, np.float32).reshape(B)
        step["values"] = np.zeros(B, np.float32) if values is None else _np(values, np.float32).reshape(B)
        step["expert"] = np.zeros(B, bool) if expert is None else _np(expert, bool).reshape(B)
        self._steps.append(step)
        self._t += 1

    def finish(
        self,
        env_ids: Sequence[int] | np.ndarray,
        meta_per_env: Sequence[dict[str, Any]] | dict[str, Any] | None = None,
    ) -> list[Episode]:
        """Return the episodes of ``env_ids`` and start new (empty) ones for them.

        ``meta_per_env`` is one dict per env id or one dict for all; ``env_id``, ``dt`` and ``length``
        are added. Envs with no recorded step yield no episode.
        """
        ids = [int(e) for e in np.asarray(env_ids).reshape(-1)]
        if isinstance(meta_per_env, dict) or meta_per_env is None:
            metas = [dict(meta_per_env or {}) for _ in ids]
        else:
            metas = [dict(m) for m in meta_per_env]
            if len(metas) != len(ids):
                raise ValueError(f"finish: {len(metas)} meta dicts for {len(ids)} env ids")
        out = []
        for e, meta in zip(ids, metas):
            lo, hi = int(self._start[e] - self._offset), self._t - self._offset
            self._start[e] = self._t
            if hi <= lo:
                continue
            rows = self._steps[lo:hi]
            ep = Episode(
                obs={g: np.stack([r["obs"][g][e] for r in rows]) for g in self.spec.obs},
                actions=np.stack([r["actions"][e] for r in rows]),
                commands=np.stack([r["commands"][e] for r in rows]),
                rewards=np.array([r["rewards"][e] for r in rows], np.float32),
                values=np.array([r["values"][e] for r in rows], np.float32),
                expert=np.array([r["expert"][e] for r in rows], bool),
                episode_id=self.next_episode_id,
                meta={"dt": self.spec.dt, **meta, "env_id": e, "length": hi - lo},
            )
            self.next_episode_id += 1
            out.append(ep)
        self._trim()
        return out

    def discard(self, env_ids: Sequence[int] | np.ndarray) -> None:
        """Drop the current (unfinished) episodes of ``env_ids`` without consuming episode ids."""
        for e in np.asarray(env_ids).reshape(-1):
            self._start[int(e)] = self._t
        self._trim()

    def _trim(self) -> None:
        drop = int(self._start.min()) - self._offset
        if drop > 0:
            del self._steps[:drop]
            self._offset += drop
