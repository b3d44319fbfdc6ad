"""``planner/cem``: the cross-entropy method (PETS, TD-MPC) over the world model's imagined returns.

Per tick the history is encoded once and the dynamics' context prepared once; each iteration draws Gaussian action
sequences around the current mean, scores them with one batched ``imagine`` (:func:`~simdist.planning.base.plan_score`,
the score MPPI ranks by), keeps the ``num_elites`` best and refits the mean and std to them. The policy prior is
MPPI's: ``num_policy_samples`` noisy copies of the policy head's chunk, drawn and scored once per tick and competing
for the elites in every iteration. How the tick runs (chunks, private threads on CPU) is
:class:`~simdist.planning.execution.TickExecutor`'s business, as for MPPI.

The difference from MPPI is the refit: CEM takes the elites' plain mean and std, where MPPI weights them by
exp(temperature · R); MPPI's refit tends to this one as its inverse temperature goes to 0. :class:`CEMConfig` is the
one declaration of its settings (a ``planner.json``'s keys, every command-line override).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from simdist.components.planners.sampling import SamplingPlanner, check_std_range, finite_returns
from simdist.planning.base import PlanResult, plan_score
from simdist.planning.execution import TickExecutor
from simdist.registry import register
from simdist.schema import SettingError, Validated, bounds

#: CEM's initial mean per tick: the previous plan shifted by one step, the policy head's chunk, or zeros
CEM_WARM_STARTS = ("shift", "policy", "none")


@dataclass
class CEMConfig(Validated):
    """The settings of :class:`CEMPlanner`, with their types and ranges. The defaults spend the paper's MPPI budget
    (450 samples × 8 iterations + 22 policy samples, 64 elites) with PETS's smoothing (``momentum`` 0.1)."""

    num_samples: int = field(default=450, metadata=bounds(ge=0))
    num_policy_samples: int = field(default=22, metadata=bounds(ge=0))
    iterations: int = field(default=8, metadata=bounds(ge=1))
    num_elites: int = field(default=64, metadata=bounds(ge=1))
    init_std: float = field(default=2.0, metadata=bounds(gt=0))
    min_std: float = field(default=0.05, metadata=bounds(gt=0))
    max_std: float = field(default=2.0, metadata=bounds(gt=0))
    base_act_std: float = field(default=0.05, metadata=bounds(ge=0))
    momentum: float = field(default=0.1, metadata=bounds(ge=0, lt=1))
    discount: float = field(default=0.99, metadata=bounds(gt=0, le=1))
    warm_start: str = field(default="shift", metadata=bounds(choices=CEM_WARM_STARTS))
    seed: int = 42
    action_low: Any = None
    action_high: Any = None
    value_weight: float = field(default=1.0, metadata=bounds(ge=0))
    score_chunk: int | None = field(default=None, metadata=bounds(ge=1))

    def validate(self) -> None:
        super().validate()
        check_std_range(self)
        if self.num_samples + self.num_policy_samples < 1:
            raise SettingError("num_samples", "need at least one sample; got num_samples=0 and num_policy_samples=0")


@register("planner", "cem")
class CEMPlanner(SamplingPlanner):
    """The cross-entropy method with the policy prior, on MPPI's score.

    Each tick: the mean starts from the warm start (``warm_start``: ``"shift"``, the env's previous plan shifted
    left by one step with its last step repeated; ``"policy"``, the policy head's chunk; ``"none"``, zeros) and the
    std at ``init_std``. Each of ``iterations`` draws ``num_samples`` sequences mean + std·ε (clipped to the action
    bounds), ranks them with the ``num_policy_samples`` fixed policy samples (noise std ``base_act_std``; none on a
    model without a policy head, as for MPPI) by
    R = Σ_{k<T} γ^k r̂_k + w γ^(T+value_offset) V̂_last (``value_weight`` w), keeps the ``num_elites`` best and
    refits: mean ← m·mean + (1 − m)·mean(elites), std ← clamp(m·std + (1 − m)·std(elites), ``min_std``,
    ``max_std``), ``momentum`` m being PETS's smoothing α (0: the plain refit).

    The action is the first step of the final mean, not of the best elite: the mean averages ``num_elites``
    sequences, where the best one is the sample whose score the model's error inflated most, and it is the plan
    the next tick's shift warm start continues. ``returns`` is the final elites' mean score; ``diagnostics`` holds
    the best score (``max_return``), the final ``std`` and the policy samples' share of the elites.

    Randomness comes from the planner's own ``torch.Generator``, seeded with ``seed`` and by ``reset(seed=...)``:
    a tick is deterministic given the seed and the call sequence. ``score_chunk``: most sequences per ``imagine``
    call (None: 128 on CPU, all at once elsewhere).
    """

    per_env_state = True  # the warm start
    config_class = CEMConfig  # the schema of its settings

    def __init__(self, world_model: nn.Module, **settings: Any) -> None:
        self.config = cfg = CEMConfig.from_dict(settings)
        super().__init__(world_model, cfg.action_low, cfg.action_high)
        self.num_samples, self.iterations = cfg.num_samples, cfg.iterations
        self.init_sampling(cfg.seed)
        self.num_policy_samples = cfg.num_policy_samples if world_model.policy is not None else 0
        if world_model.policy is None and cfg.warm_start == "policy":
            raise SettingError("warm_start", "'policy' needs a world model with a policy head")
        if self.num_samples + self.num_policy_samples < 1:
            raise SettingError("num_samples", "need at least one sample; this world model has no policy head for "
                                              "the policy samples")
        self.num_elites = min(cfg.num_elites, self.num_samples + self.num_policy_samples)
        self.executor = TickExecutor(self._score, chunk=cfg.score_chunk)

    # ------------------------------------------------------------------ state
    def _initial_mean(self, batch: int, chunk: Tensor | None) -> Tensor:
        """This tick's initial mean (B, T, A) from ``warm_start``: the policy ``chunk``, the previous plan shifted,
        or zeros (also after a reset or a change of batch size)."""
        if self.config.warm_start == "policy" and chunk is not None:
            return self.clip(chunk).to(self.dtype)
        prev = self.previous_plan(batch)
        if self.config.warm_start == "none" or prev is None:
            return torch.zeros(batch, self.horizon, self.action_dim, device=self.device, dtype=self.dtype)
        return self.shifted(prev)

    # ------------------------------------------------------------------ scoring
    def _score(self, actions: Tensor, encoding: Any, prepared: Any, command: Tensor | None) -> Tensor:
        """(B, N) scores of action sequences (B, N, T, A), on the encoding and context prepared once per tick."""
        wm = self.world_model
        im = wm.imagine(encoding, actions, command, prepared=prepared, last_value_only=True)
        return plan_score(im, self.config.discount, wm.config.value_offset, value_weight=self.config.value_weight)

    # ------------------------------------------------------------------ planning
    def _plan(self, obs_hist: dict[str, Tensor], act_hist: Tensor, command: Tensor | None) -> PlanResult:
        sequences = act_hist.shape[0] * (self.num_samples + self.num_policy_samples)
        return self.executor.run(self.device, self._tick, obs_hist, act_hist, command, sequences=sequences)

    def _tick(self, obs_hist: dict[str, Tensor], act_hist: Tensor, command: Tensor | None) -> PlanResult:
        """One CEM tick (wherever the executor runs it)."""
        wm, cfg = self.world_model, self.config
        b, t, a = act_hist.shape[0], self.horizon, self.action_dim
        dev, dt, gen = self.device, self.dtype, self._generator()
        encoding = wm.encode(obs_hist, act_hist)
        ctx = (encoding, wm.dynamics.prepare(encoding), command)
        needs_chunk = self.num_policy_samples or cfg.warm_start == "policy"
        chunk = wm.policy_actions(encoding, command) if needs_chunk else None
        fixed: list[Tensor] = []  # the policy samples and their scores: drawn and scored once per tick
        if chunk is not None and self.num_policy_samples:
            policy_samples = self.policy_samples(chunk, self.num_policy_samples, cfg.base_act_std)
            fixed = [policy_samples, self.executor.score(policy_samples, *ctx)]
        mean = self._initial_mean(b, chunk)
        std = torch.full_like(mean, cfg.init_std)
        keep = 1.0 - cfg.momentum
        for _ in range(cfg.iterations):
            eps = torch.randn(b, self.num_samples, t, a, generator=gen, device=dev, dtype=dt)
            samples = self.clip(mean[:, None] + std[:, None] * eps)
            returns = self.executor.score(samples, *ctx) if self.num_samples else samples.new_zeros(b, 0)
            if fixed:
                samples, returns = torch.cat([samples, fixed[0]], dim=1), torch.cat([returns, fixed[1]], dim=1)
            elite_returns, idx = finite_returns(returns, "CEM").topk(self.num_elites, dim=1)
            elites = samples.gather(1, idx[:, :, None, None].expand(-1, -1, t, a))
            mean = cfg.momentum * mean + keep * elites.mean(1)
            std = (cfg.momentum * std + keep * elites.std(1, correction=0)).clamp(cfg.min_std, cfg.max_std)

        plan = self.clip(mean)
        self.prev_mean = plan.clone()
        diagnostics = {"max_return": elite_returns[:, 0], "std": std,
                       "policy_elite_fraction": (idx >= self.num_samples).to(dt).mean(1)}
        return PlanResult(action=plan[:, 0].clone(), plan=plan, returns=elite_returns.mean(1),
                          diagnostics=diagnostics)

    def __repr__(self) -> str:
        c = self.config
        return (f"{type(self).__name__}(samples={self.num_samples}+{self.num_policy_samples} policy, "
                f"iterations={c.iterations}, elites={self.num_elites}, momentum={c.momentum}, horizon={self.horizon}, "
                f"warm_start={c.warm_start!r})")
