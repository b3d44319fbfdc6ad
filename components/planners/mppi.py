"""``planner/mppi``: batched MPPI over the world model's imagined returns (SIMDIST section 6).

Per tick the history is encoded once, the dynamics' context is prepared once and the base-policy
chunk is computed once; every iteration then scores B × N action sequences with one ``imagine`` call
that broadcasts the shared context. ``naive=True`` (or ``planner/mppi_naive``) instead recomputes the
encoder, context and policy head for every sample and iteration, as the official code does (SIMDIST
11.1f); it consumes the same random numbers and gives the same result, only slower. The fast path also
asks the value head for the last position only (the bootstrap is all that uses it) and scores the fixed
base-policy samples once per tick instead of once per iteration.

This module holds the algorithm (sampling, elites, weights, warm start, momentum). How the tick and its
scoring run (chunks, private single-threaded threads on CPU, ``torch.compile``) is
:class:`~simdist.planning.execution.TickExecutor`'s business; it changes no process-wide torch
setting. :class:`MPPIConfig` is the one declaration of its settings and defaults (a ``planner.json``'s keys, every
preset, every ``--planner.KEY VALUE``); the presets (``PAPER``, ``MANIPULATION``, ``REALTIME``: instances of it) live
beside it in :mod:`simdist.components.planners.presets`: ``build_planner(world_model, planner_preset("realtime"))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

from simdist.components.planners.sampling import SamplingPlanner, check_std_range, finite_returns
from simdist.model.expansion import check_expansion, expand_imagination
from simdist.planning.base import PlanResult, check_disagreement, plan_score
from simdist.planning.execution import TickExecutor
from simdist.planning.intent import IntentReference
from simdist.registry import register
from simdist.schema import SettingError, Validated, bounds

#: MPPI's initial mean per tick (``warm_start``): the previous plan shifted, the official reset, zeros, or the
#: base policy's action chunk
WARM_STARTS = ("shift", "official", "none", "policy")
#: how MPPI outputs the binary action dimensions (``binary_dims``): see :class:`MPPIPlanner`
BINARY_MODES = ("mean", "elite", "hysteresis")
#: the fewest policy samples and elites a rescaled budget keeps (:meth:`MPPIConfig.at_budget`)
MIN_POLICY_SAMPLES, MIN_ELITES = 2, 4


@dataclass
class MPPIConfig(Validated):
    """The settings of :class:`MPPIPlanner` (a ``planner.json``'s keys besides ``planner`` and
    ``temporal_ensemble``), with their types, ranges and defaults: the only declaration of them, which every MPPI
    setting is checked against wherever it comes from (a model folder, a preset, ``--planner.KEY VALUE``).
    Defaults: the paper's (SIMDIST 6.1). Presets are instances (:mod:`.presets`); :meth:`at_budget` rescales one."""

    num_samples: int = field(default=450, metadata=bounds(ge=0))
    mixture_coef: float = field(default=0.05, metadata=bounds(ge=0, le=1))
    num_policy_samples: int | None = field(default=None, metadata=bounds(ge=0))
    iterations: int = field(default=8, metadata=bounds(ge=1))
    num_elites: int = field(default=64, metadata=bounds(ge=1))
    temperature: float = field(default=0.25, metadata=bounds(gt=0))
    init_std: float = field(default=2.0, metadata=bounds(gt=0))
    min_std: float = field(default=0.05, metadata=bounds(gt=0))
    max_std: float = field(default=2.0, metadata=bounds(gt=0))
    base_act_std: float = field(default=0.05, metadata=bounds(ge=0))
    momentum: float = field(default=0.0, metadata=bounds(ge=0, lt=1))
    discount: float = field(default=0.99, metadata=bounds(gt=0, le=1))
    warm_start: str = field(default="shift", metadata=bounds(choices=WARM_STARTS))
    seed: int = 42
    action_low: Any = None
    action_high: Any = None
    naive: bool = False
    score_chunk: int | None = field(default=None, metadata=bounds(ge=1))
    compile: bool | str = False
    parallel_chunks: bool = True
    keep_candidates: bool = False
    tick_threads: int | str | None = None
    disagreement: float = field(default=0.0, metadata=bounds(ge=0))
    value_weight: float = field(default=1.0, metadata=bounds(ge=0))
    value_expansion: int = field(default=0, metadata=bounds(ge=0))
    prior_weight: float = field(default=0.0, metadata=bounds(ge=0))
    intent_weight: float = field(default=0.0, metadata=bounds(ge=0))
    intent_model: Any = None
    binary_dims: tuple[int, ...] | list[int] = ()
    binary_mode: str = field(default="mean", metadata=bounds(choices=BINARY_MODES))
    hysteresis: float = field(default=0.5, metadata=bounds(ge=0, lt=1))

    #: the settings a preset's ``planner.json`` form always states (the paper's table), besides the non-defaults
    stated: ClassVar[tuple[str, ...]] = ("num_samples", "mixture_coef", "iterations", "num_elites", "temperature",
                                         "init_std", "min_std", "base_act_std", "momentum", "discount", "seed")
    #: what a preset carries onto a task's own preset (``--planner-preset NAME``): its budget and initial sampling
    budget: ClassVar[tuple[str, ...]] = ("num_samples", "iterations", "init_std", "warm_start")
    #: the settings that act as the released code does (its ``roll(+1)``-then-zero reset, SIMDIST 11.1a)
    released_code: ClassVar[dict[str, Any]] = {"warm_start": "official"}

    def validate(self) -> None:
        super().validate()
        if not isinstance(self.intent_model, (str, nn.Module, type(None))):  # a folder, Hub id or model in code
            raise SettingError("intent_model", f"expected a folder, a Hub id or null, got {self.intent_model!r}")
        if isinstance(self.tick_threads, int) and self.tick_threads < 1:
            raise SettingError("tick_threads", f"expected an integer >= 1, 'auto' or null, got {self.tick_threads!r}")
        if isinstance(self.tick_threads, str) and self.tick_threads != "auto":
            raise SettingError("tick_threads", f"expected an integer >= 1, 'auto' or null, got {self.tick_threads!r}")
        check_std_range(self)
        if self.prior_weight > 0 and self.base_act_std <= 0:
            raise SettingError("prior_weight", "a policy prior needs base_act_std > 0 (its std), got "
                                               f"base_act_std={self.base_act_std}")
        if self.intent_weight > 0 and self.naive:
            raise SettingError("intent_weight", "the intent term scores on the fast path only; use naive=false")

    def at_budget(self, num_samples: int | None = None, iterations: int | None = None,
                  **overrides: Any) -> MPPIConfig:
        """These settings at another budget (None: this one's samples or iterations): the policy mixture and elite
        count scale with the sample count (``mixture_coef`` of it as policy samples, at least 2; elites a quarter
        of the samples, 4 to ``num_elites``), so small budgets keep the base-policy samples that
        ``int(num_samples * mixture_coef)`` would round away; ``overrides`` then replace any setting.
        ``PAPER.at_budget(16, 1, init_std=0.1, warm_start="policy", tick_threads="auto") == REALTIME``."""
        samples = int(num_samples or self.num_samples)
        policy = max(MIN_POLICY_SAMPLES, int(samples * self.mixture_coef))
        elites = min(self.num_elites, max(MIN_ELITES, samples // 4))
        return replace(self, **{"num_samples": samples, "num_policy_samples": policy,
                                "iterations": int(iterations or self.iterations), "num_elites": elites, **overrides})


@register("planner", "mppi")
class MPPIPlanner(SamplingPlanner):
    """MPPI with elite re-fitting (TD-MPC semantics) and the official SimDist defaults.

    Each tick: the initial mean comes from the warm start and the std is reset to ``init_std``.
    ``num_policy_samples`` (default ``int(num_samples * mixture_coef)``) noisy copies of the base-policy
    chunk (noise std ``base_act_std``) are drawn once and kept fixed across iterations. Each of the
    ``iterations`` draws ``num_samples`` sequences mean + std·ε, scores all of them with
    R = Σ_{k<T} γ^k r̂_k + γ^(T+value_offset) V̂_last (less the ``disagreement`` penalty), keeps the
    ``num_elites`` best and re-fits mean/std with weights exp(temperature·(R − R_max)) (``temperature`` is an
    *inverse* temperature); std is clamped to [min_std, max_std] and the mean is blended with ``momentum``. The
    result is the final mean: ``action`` = its first step, ``plan`` = all of it.

    Warm starts (``warm_start``), from the previous tick's final plan p of the same env:
    ``"shift"`` (default) [p_1, …, p_{T-1}, p_{T-1}] (shift left by one, last step repeated);
    ``"official"`` [p_{T-1}, 0, …, 0] (the released ``roll(+1)``-then-zero code, SIMDIST 11.1a);
    ``"none"`` zeros; ``"policy"``: the base policy's action chunk of this tick (a prior for budgets with
    one iteration, where a wide first draw cannot be narrowed again; needs a policy head). After ``reset``
    (or a change of batch size) the mean starts at zero.

    Execution (:class:`~simdist.planning.execution.TickExecutor`; the plan stays the same):
    ``score_chunk``: most sequences per ``imagine`` call (None: 128 on CPU, all at once elsewhere);
    ``parallel_chunks``: on CPU, when the calling thread runs torch on T > 1 threads, tick on the planner's
    own single-threaded threads and score chunks on T of them (False: on the calling thread with its
    settings; no process-wide setting changes either way);
    ``compile``: score through ``torch.compile`` (True, or a mode such as ``"reduce-overhead"``, which
    uses CUDA graphs on a GPU); the first tick of each shape compiles;
    ``tick_threads``: torch threads of a tick that fits one chunk (None: the caller's; an int; ``"auto"``:
    the faster of one thread and the caller's, timed over the first ticks,
    :mod:`~simdist.planning.threads`; :attr:`thread_report` says what was chosen).

    ``keep_candidates``: also return every sequence the tick scored and its predicted return
    (``diagnostics["candidates"]`` (B, M, T, A), ``["candidate_returns"]`` (B, M); the policy samples once, with
    the first iteration) and the iteration that drew each (``["candidate_iteration"]`` (M,)),
    the planner's own sampling distribution, for analyses of how the model ranks what the planner considers.

    ``disagreement`` λ >= 0 (beyond the paper): with an ensemble dynamics (``dynamics/ensemble``) every score
    becomes R − λ Σ_{k<T} γ^k u_k, u_k the members' disagreement about ẑ_{t+k+1}
    (:func:`~simdist.planning.base.plan_score`), so MPPI prefers sequences the members agree on; the returns and
    candidate returns it reports are these scores. λ > 0 on a single dynamics is refused at construction.

    ``value_weight`` w >= 0 (beyond the paper; 1: the paper's score) weights the value term γ^(T+offset) V̂_last;
    w = 0 ranks by the horizon's predicted rewards alone, for a model whose value head cannot rank (measured
    with ``simdist mechanism``; the UR5e's, docs/ur5e-simdist.md 7.5). Reported returns are the weighted scores.

    ``value_expansion`` K >= 0 (beyond the paper; 0: the paper's score): after each candidate's T steps the policy
    head acts K more imagined steps from the imagined window and the value is read there,
    Σ_{k<T+K} γ^k r̂_k + γ^(T+K+offset) V̂(ẑ_{T+K}) (:mod:`simdist.model.expansion`; K up to the horizon, on
    models whose encoder can assemble an imagined window, ``encoder/mlp``; refused at construction otherwise).

    ``prior_weight`` β >= 0 (beyond the paper; 0: the paper's MPPI) ranks by R + β log N(a; π, σ²) instead of R:
    the base policy's chunk π as a Gaussian prior of std σ = ``base_act_std`` over every step and dimension
    (the control cost of information-theoretic MPPI with the policy as its nominal), so a candidate moves away
    from the policy only as far as its predicted return pays for it. It is the planner for a score that ranks
    weakly: MPPI's choices then add a lean that persists from tick to tick (docs/ur5e-simdist.md 7.7), and β sets
    how much of the score's preference the plan may follow. The prior term only ranks and weights: the returns
    the planner reports (and its kept candidates') are the model's scores R.

    ``intent_weight`` λ >= 0 (beyond the paper) subtracts λ Σ_k mean_d (ẑ_k − ẑ^ref_k)² from every score: the
    distance of the candidate's imagined latents to the policy's intent, the latents that ``intent_model``'s
    dynamics (a folder or Hub id; None: the planner's own model) imagines for the policy chunk
    (:mod:`~simdist.planning.intent`). With an adapted model and its base as ``intent_model``, the planner looks
    for the actions that reach under the adapted physics what the policy meant under the simulator's. Like the
    disagreement penalty, the term is part of the scores the planner reports.

    ``binary_dims`` (beyond the paper): action dimensions the env thresholds at 0 (a gripper's open/close). The
    official planner outputs their weighted mean like any other dimension (``binary_mode="mean"``), which
    flips with the sign of a near-zero average when the ranking is weak. ``"elite"``: the sign of the best
    sequence's value; ``"hysteresis"``: the command (±1) keeps its sign until the weighted mean's first step
    crosses ``hysteresis`` on the other side, so noise around 0 cannot flip it. The warm start keeps the
    continuous mean either way.

    Samples and outputs are clipped to the action bounds (planner arguments, else the model config).
    Randomness comes from the planner's own ``torch.Generator``, seeded with ``seed`` at construction and
    by ``reset(seed=...)``, so a tick is deterministic given the seed and the call sequence.
    """

    per_env_state = True  # the warm start
    config_class = MPPIConfig  # the one declaration of its settings
    presets: ClassVar[dict[str, Any]] = {}  # its named settings: .presets attaches them (PAPER, REALTIME, ...)

    def __init__(self, world_model: nn.Module, config: MPPIConfig | None = None, **settings: Any) -> None:
        """``config`` (None: the defaults, the paper's) with ``settings`` replacing any of its fields
        (``MPPIPlanner(wm, num_samples=64, iterations=2)``), checked by :class:`MPPIConfig`."""
        cfg = replace(config or MPPIConfig(), **settings)
        self.config = cfg
        super().__init__(world_model, cfg.action_low, cfg.action_high)
        self.disagreement = check_disagreement(cfg.disagreement, world_model)
        self.value_weight, self.prior_weight = float(cfg.value_weight), float(cfg.prior_weight)
        self.value_expansion = check_expansion(world_model, cfg.value_expansion)
        num_policy_samples = cfg.num_policy_samples
        if num_policy_samples is None:
            num_policy_samples = int(cfg.num_samples * cfg.mixture_coef)
        if world_model.policy is None:
            num_policy_samples = 0
            if cfg.warm_start == "policy" or cfg.prior_weight > 0 or cfg.intent_weight > 0:
                raise ValueError("warm_start='policy', prior_weight > 0 and intent_weight > 0 need a world model "
                                 "with a policy head")
        if cfg.num_samples + num_policy_samples < 1:
            raise ValueError(f"need at least one sample; got num_samples={cfg.num_samples}, "
                             f"num_policy_samples={num_policy_samples}")
        if any(not 0 <= int(d) < self.action_dim for d in cfg.binary_dims):
            raise ValueError(f"binary_dims must index the {self.action_dim} action dimensions, got "
                             f"{list(cfg.binary_dims)}")
        self.binary_dims, self.binary_mode = [int(d) for d in cfg.binary_dims], cfg.binary_mode
        self.hysteresis = cfg.hysteresis
        self.binary_state: Tensor | None = None  # the held ±1 command per env and binary dimension
        self.intent_weight = float(cfg.intent_weight)
        self.intent = IntentReference(world_model, cfg.intent_model) if cfg.intent_weight > 0 else None
        if self.intent is not None:
            self.intent.check_compatible()
        self.num_samples, self.num_policy_samples = int(cfg.num_samples), int(num_policy_samples)
        self.iterations = int(cfg.iterations)
        self.num_elites = min(int(cfg.num_elites), self.num_samples + self.num_policy_samples)
        self.temperature, self.init_std, self.min_std, self.max_std = (cfg.temperature, cfg.init_std, cfg.min_std,
                                                                       cfg.max_std)
        self.base_act_std, self.momentum, self.discount = cfg.base_act_std, cfg.momentum, cfg.discount
        self.warm_start, self.naive = cfg.warm_start, cfg.naive
        self.score_chunk, self.compile, self.parallel_chunks = cfg.score_chunk, cfg.compile, cfg.parallel_chunks
        self.keep_candidates = bool(cfg.keep_candidates)
        self.tick_threads = cfg.tick_threads
        self.executor = TickExecutor(self._score_fast, chunk=cfg.score_chunk, parallel=cfg.parallel_chunks,
                                     compile=cfg.compile, tick_threads=cfg.tick_threads)
        self.init_sampling(cfg.seed)
        self._generator()

    # ------------------------------------------------------------------ state
    def reset(self, ids: Sequence[int] | Tensor | None = None, seed: int | None = None) -> None:
        """Drop the warm-start plan and the held binary command of envs ``ids`` (all if None); reseed the
        generator if ``seed``."""
        super().reset(ids, seed)
        if ids is None or self.binary_state is None:
            self.binary_state = None
        else:
            self.binary_state[torch.as_tensor(ids, device=self.binary_state.device).long()] = 0.0

    def warm_start_mean(self, batch: int) -> Tensor:
        """The initial mean (B, T, A) of this tick, from ``prev_mean`` and ``warm_start``."""
        mean = torch.zeros(batch, self.horizon, self.action_dim, device=self.device, dtype=self.dtype)
        prev = self.previous_plan(batch)
        if prev is None or self.warm_start == "none":
            return mean
        if self.warm_start == "shift":
            return self.shifted(prev)
        mean[:, 0] = prev[:, -1]  # "official"
        return mean

    # ------------------------------------------------------------------ scoring
    def _score(self, actions: Tensor, ctx: tuple) -> Tensor:
        """Returns (B, N) of action sequences (B, N, T, A)."""
        return self._score_naive(actions, *ctx) if self.naive else self.executor.score(actions, *ctx)

    def _score_fast(self, actions: Tensor, encoding: Any, prepared: Any, command: Tensor | None,
                    intent: Tensor | None = None) -> Tensor:
        wm = self.world_model
        im = wm.imagine(encoding, actions, command, prepared=prepared, last_value_only=True)
        scored = expand_imagination(wm, encoding, im, actions, command, self.value_expansion)
        score = plan_score(scored, self.discount, wm.config.value_offset, self.disagreement, self.value_weight)
        if intent is None:
            return score
        return score - self.intent_weight * IntentReference.distance(im.latents, intent)

    def _score_naive(self, actions: Tensor, obs_hist: dict[str, Tensor], act_hist: Tensor,
                     command: Tensor | None) -> Tensor:
        """Official-style scoring: the whole model (encoder, context, policy head) per sample."""
        wm = self.world_model
        b, n = actions.shape[:2]

        def rep(x: Tensor) -> Tensor:
            return x.repeat_interleave(n, dim=0)

        encoding = wm.encode({k: rep(v) for k, v in obs_hist.items()}, rep(act_hist))
        cmd = None if command is None else rep(command)
        if wm.policy is not None:
            wm.policy_actions(encoding, cmd)  # computed and discarded, as in the official inference call
        flat = actions.reshape(b * n, *actions.shape[2:])
        im = expand_imagination(wm, encoding, wm.imagine(encoding, flat, cmd), flat, cmd, self.value_expansion)
        return plan_score(im, self.discount, wm.config.value_offset, self.disagreement, self.value_weight
                          ).reshape(b, n)

    # ------------------------------------------------------------------ planning
    def _plan(self, obs_hist: dict[str, Tensor], act_hist: Tensor, command: Tensor | None) -> PlanResult:
        if self.naive:  # the official structure, with the caller's settings
            return self._tick(obs_hist, act_hist, command)
        sequences = act_hist.shape[0] * (self.num_samples + self.num_policy_samples)
        return self.executor.run(self.device, self._tick, obs_hist, act_hist, command, sequences=sequences)

    def _tick(self, obs_hist: dict[str, Tensor], act_hist: Tensor, command: Tensor | None) -> PlanResult:
        """One MPPI tick (wherever the executor runs it)."""
        wm = self.world_model
        b, t, a = act_hist.shape[0], self.horizon, self.action_dim
        dev, dt, gen = self.device, self.dtype, self._generator()
        if self.naive:
            ctx: tuple = (obs_hist, act_hist, command)
            needs_policy = self.num_policy_samples or self.warm_start == "policy" or self.prior_weight > 0
            encoding = wm.encode(obs_hist, act_hist) if needs_policy else None
        else:
            encoding = wm.encode(obs_hist, act_hist)
            ctx = (encoding, wm.dynamics.prepare(encoding), command)

        policy_samples = None
        chunk: Any = None  # the policy's chunk (B, T, A), where a setting needs it
        if self.num_policy_samples or self.warm_start == "policy" or self.prior_weight > 0 or self.intent is not None:
            chunk = wm.policy_actions(encoding, command)
        if self.intent is not None:
            ctx = (*ctx, self.intent.latents(encoding, self.clip(chunk).to(dt)))
        if self.num_policy_samples:
            policy_samples = self.policy_samples(chunk, self.num_policy_samples, self.base_act_std)

        mean = self.clip(chunk).to(dt) if self.warm_start == "policy" else self.warm_start_mean(b)
        std = torch.full_like(mean, self.init_std)
        policy_returns = None  # the policy samples stay fixed, so the fast path scores them once per tick
        kept: list[tuple[Tensor, Tensor]] = []
        for it in range(self.iterations):
            eps = torch.randn(b, self.num_samples, t, a, generator=gen, device=dev, dtype=dt)
            samples = self.clip(mean[:, None] + std[:, None] * eps)
            if policy_samples is not None:
                samples = torch.cat([samples, policy_samples], dim=1)
            if policy_returns is None or self.naive:
                returns = self._score(samples, ctx)
                if policy_samples is not None:
                    policy_returns = returns[:, self.num_samples:]
            else:
                returns = torch.cat([self._score(samples[:, : self.num_samples], ctx), policy_returns], dim=1)
            returns = finite_returns(returns, "MPPI")
            if self.keep_candidates:
                n = samples.shape[1] if it == 0 else self.num_samples  # the fixed policy samples once
                kept.append((samples[:, :n], returns[:, :n]))
            ranked = returns
            if self.prior_weight > 0 and chunk is not None:
                ranked = returns + self.prior_weight * self._prior_log_likelihood(samples, chunk)
            elite_ranked, idx = ranked.topk(self.num_elites, dim=1)
            elite_returns = elite_ranked if ranked is returns else returns.gather(1, idx)
            elites = samples.gather(1, idx[:, :, None, None].expand(-1, -1, t, a))
            w = torch.softmax(self.temperature * elite_ranked, dim=1)[:, :, None, None]
            new_mean = (w * elites).sum(1)
            std = (w * (elites - new_mean[:, None]) ** 2).sum(1).sqrt().clamp(self.min_std, self.max_std)
            mean = self.momentum * mean + (1.0 - self.momentum) * new_mean

        plan = self.clip(mean)
        self.prev_mean = plan.clone()
        if self.binary_dims and self.binary_mode != "mean":
            plan = self._binary(plan, elites[:, 0])
        diagnostics = {"max_return": elite_returns[:, 0], "std": std,
                       "policy_elite_fraction": (idx >= self.num_samples).to(dt).mean(1)}
        if kept:
            diagnostics["candidates"] = torch.cat([k[0] for k in kept], dim=1)
            diagnostics["candidate_returns"] = torch.cat([k[1] for k in kept], dim=1)
            diagnostics["candidate_iteration"] = torch.cat(
                [torch.full((k[0].shape[1],), i, dtype=torch.long, device=dev) for i, k in enumerate(kept)])
        return PlanResult(action=plan[:, 0].clone(), plan=plan, returns=(w[:, :, 0, 0] * elite_returns).sum(1),
                          diagnostics=diagnostics)

    def _prior_log_likelihood(self, samples: Tensor, chunk: Tensor) -> Tensor:
        """log N(samples; the clipped policy chunk, base_act_std²) per sequence, up to its constant: (B, N)."""
        gap = (samples - self.clip(chunk).to(samples.dtype)[:, None]) / self.base_act_std
        return -0.5 * gap.pow(2).sum(dim=(2, 3))

    def _binary(self, plan: Tensor, best: Tensor) -> Tensor:
        """``plan`` with its binary dimensions as ±1 commands (``binary_mode``: the best sequence's sign, or the
        weighted mean's with hysteresis against the env's held command)."""
        d = self.binary_dims
        plan = plan.clone()
        if self.binary_mode == "elite":
            plan[:, :, d] = torch.where(best[:, :, d] > 0, 1.0, -1.0).to(plan.dtype)
            return plan
        first = plan[:, 0, d]
        held = self.binary_state
        if held is None or held.shape != first.shape:
            held = torch.zeros_like(first)
        held = torch.where(held == 0, torch.where(first > 0, 1.0, -1.0).to(plan.dtype), held)  # 0: not set yet
        held = torch.where(first > self.hysteresis, 1.0, torch.where(first < -self.hysteresis, -1.0, held))
        self.binary_state = held.to(plan.dtype)
        plan[:, :, d] = self.binary_state[:, None, :].expand(-1, plan.shape[1], -1)
        return plan

    @staticmethod
    def summary(settings: dict[str, Any]) -> str:
        """One line naming an MPPI budget, e.g. ``mppi 450+22 samples x 8 iterations, std 2.0, warm start official,
        no ensembling`` (what a collection's log says of the acting planner)."""
        name = settings.get("planner", "mppi")
        if "num_samples" not in settings:
            return str(name)
        policy = settings.get("num_policy_samples")
        ensemble = settings.get("temporal_ensemble")
        return (f"{name} {settings['num_samples']}{'' if policy is None else f'+{policy}'} samples x "
                f"{settings.get('iterations')} iterations, std {settings.get('init_std')}, warm start "
                f"{settings.get('warm_start', 'shift')}, "
                + (f"ensembling {ensemble}" if ensemble else "no ensembling"))

    @property
    def sequences_per_tick(self) -> int:
        """The nominal work of a tick per env: every sequence of every iteration, the policy samples included."""
        return (self.num_samples + self.num_policy_samples) * self.iterations

    @property
    def scored_sequences_per_tick(self) -> int:
        """The sequences the fast path scores per env and tick (the fixed policy samples once)."""
        return self.num_samples * self.iterations + self.num_policy_samples

    @property
    def budget_label(self) -> str:
        """The budget in short, ``samples+policy samples x iterations`` (``450+22x8``)."""
        return f"{self.num_samples}+{self.num_policy_samples}x{self.iterations}"

    @property
    def thread_report(self) -> dict[str, Any]:
        """The ``tick_threads`` setting and, once an ``"auto"`` choice is made, the choice and its timings."""
        return dict(self.executor.thread_choice.report)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(samples={self.num_samples}+{self.num_policy_samples} policy, "
                f"iterations={self.iterations}, elites={self.num_elites}, temperature={self.temperature}, "
                f"horizon={self.horizon}, warm_start={self.warm_start!r}, naive={self.naive}, "
                f"compile={self.compile!r}{f', disagreement={self.disagreement}' if self.disagreement else ''})")


@register("planner", "mppi_naive")
class NaiveMPPIPlanner(MPPIPlanner):
    """:class:`MPPIPlanner` with ``naive=True``: the official per-sample recomputation, for benchmarks."""

    def __init__(self, world_model: nn.Module, config: MPPIConfig | None = None, **settings: Any) -> None:
        settings.setdefault("naive", True)
        super().__init__(world_model, config, **settings)

