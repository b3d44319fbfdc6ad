"""What the sampling planners (``planner/mppi``, ``planner/cem``) share: their own seeded generator, each env's previous
plan and the shift warm start it gives, the noisy copies of the policy head's chunk, and the check that a tick
scored something finite. Each planner keeps its own settings, refit and scoring; this is the scaffolding around them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from simdist.planning.base import NonFiniteError, Planner
from simdist.schema import SettingError


def check_std_range(cfg: Any) -> None:
    """SettingError unless ``cfg.min_std <= cfg.max_std`` (a sampling planner's std clamp)."""
    if cfg.min_std > cfg.max_std:
        raise SettingError("min_std", f"need min_std <= max_std, got {cfg.min_std} and {cfg.max_std}")


def finite_returns(returns: Tensor, name: str) -> Tensor:
    """``returns`` (B, N) with NaN ranked last; NonFiniteError (naming the planner ``name``) when an env has no
    finite score at all."""
    none_finite = ~torch.isfinite(returns).any(dim=1)
    if none_finite.any():
        rows = torch.nonzero(none_finite).flatten().tolist()
        raise NonFiniteError(f"every {name} candidate scored a non-finite return for env(s) {rows[:10]}: the world "
                             "model's rewards or values are NaN or Inf (check its weights)")
    return torch.nan_to_num(returns, nan=torch.finfo(returns.dtype).min)


class SamplingPlanner(Planner):
    """A planner that samples action sequences around a mean it carries from tick to tick.

    Randomness comes from the planner's own ``torch.Generator`` (on the planner's device), seeded with ``seed`` and
    by ``reset(seed=...)``, so a tick is deterministic given the seed and the call sequence. ``prev_mean`` is each
    env's last plan (B, T, A), the warm start of its next tick; ``reset`` drops it. A subclass sets ``seed`` before
    the first tick (:meth:`init_sampling`)."""

    seed: int
    prev_mean: Tensor | None
    _gen: torch.Generator | None

    def init_sampling(self, seed: int) -> None:
        """No previous plan yet, and the generator seeded with ``seed`` when first used."""
        self.seed, self.prev_mean, self._gen = int(seed), None, None

    def _generator(self) -> torch.Generator:
        if self._gen is None or self._gen.device != self.device:
            self._gen = torch.Generator(device=self.device)
            self._gen.manual_seed(self.seed)
        return self._gen

    def reset(self, ids: Sequence[int] | Tensor | None = None, seed: int | None = None) -> None:
        """Drop the warm-start plan of envs ``ids`` (all if None); reseed the generator if ``seed``."""
        if seed is not None:
            self.seed = int(seed)
            self._generator().manual_seed(self.seed)
        if ids is None or self.prev_mean is None:
            self.prev_mean = None
        else:
            self.prev_mean[torch.as_tensor(ids, device=self.prev_mean.device).long()] = 0.0

    def previous_plan(self, batch: int) -> Tensor | None:
        """The previous tick's plan (B, T, A) on the planner's device and dtype; None after a reset or a change of
        batch size."""
        prev = self.prev_mean
        if prev is None or prev.shape[0] != batch:
            return None
        return prev.to(self.device, self.dtype)

    @staticmethod
    def shifted(plan: Tensor) -> Tensor:
        """``plan`` shifted left by one step, its last step repeated: the shift warm start."""
        return torch.cat([plan[:, 1:], plan[:, -1:]], dim=1)

    def policy_samples(self, chunk: Tensor, count: int, std: float) -> Tensor:
        """``count`` noisy copies (noise std ``std``) of the policy head's ``chunk`` (B, T, A), clipped to the action
        bounds: (B, count, T, A), drawn from the planner's generator."""
        b, t, a = chunk.shape[0], self.horizon, self.action_dim
        noise = torch.randn(b, count, t, a, generator=self._generator(), device=self.device, dtype=self.dtype)
        return self.clip(chunk[:, None] + std * noise)
