"""``planner/mppi``: batched MPPI over the world model's imagined returns (SIMDIST section 6).

Per tick the history is encoded once, the dynamics' context is prepared once and the base-policy
chunk is computed once; every iteration then scores B × N action sequences with one ``imagine`` call
that broadcasts the shared context. ``naive=True`` (or ``planner/mppi_naive``) instead recomputes the
encoder, context and policy head for every sample and iteration, as the official code does (SIMDIST
11.1f); it consumes the same random numbers and gives the same result, only slower.

On CPU the fast path scores the samples in chunks of about ``score_chunk`` sequences: the result is
the same, but the activations stay small enough to be reused by the allocator instead of being
mapped and zeroed afresh by the kernel for every layer (a measured 20 % of a paper-size tick).
``compile=True`` scores through ``torch.compile`` (one graph per tick shape; the first tick compiles).
With ``parallel_chunks`` (default) and T torch threads, T Python threads score whole chunks at once with
one torch thread each for the duration of the scoring (the process-wide thread count is restored
afterwards): at this size one matrix product splits poorly over threads, whole chunks split evenly.
The fast path also asks the value head for the last position only (the bootstrap is all that uses it)
and scores the fixed base-policy samples once per tick instead of once per iteration.

``PAPER`` holds the official planner settings (SIMDIST 6.1: 450 + 22 samples × 8 iterations) and
``REALTIME`` a smaller setting measured to keep the tick's p99 within a 50 Hz budget on a 2-core CPU
(``simdist bench`` reports both): ``simdist.create("planner", "mppi", world_model=wm, **REALTIME)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch
from torch import Tensor, nn

from simdist.registry import register

from .base import Bound, Planner, PlanResult, discounted_return

WARM_STARTS = ("shift", "official", "none", "policy")

#: Sequences per ``imagine`` call on CPU when ``score_chunk`` is None (measured: 100-250 is flat).
DEFAULT_CPU_CHUNK = 128
# Measured on the 2-core dev machine (1 thread, shared with other jobs): 16 + 2 sequences in one
# iteration cost ≈ 15 ms CPU per tick (encoder 1 ms, policy head 2.3 ms, one imagine ≈ 8 ms); each
# further iteration or 16 samples adds ≈ 8 ms, which no longer fits a 20 ms p99 under load.
REALTIME_SAMPLES, REALTIME_POLICY, REALTIME_ITERATIONS, REALTIME_ELITES = 16, 2, 1, 4

#: The official MPPI settings (SIMDIST 6.1); these are also the constructor defaults.
PAPER: dict[str, Any] = dict(
    num_samples=450, mixture_coef=0.05, iterations=8, num_elites=64, temperature=0.25, init_std=2.0,
    min_std=0.05, base_act_std=0.05, momentum=0.0, discount=0.99, seed=42,
)
#: A real-time setting for a 50 Hz loop on a 2-core CPU (its size chosen with ``simdist bench``; see above).
#: One iteration cannot narrow a wide first draw, so it samples near the base policy's chunk: measured on
#: the Go2 (a 3 m flat course, 0.5 m/s, 4 trials, a model 2,300 steps into pretraining) the paper's shift
#: warm start with std 2.0 fell after 0.48 m, the policy prior with std 0.1 completed every trial.
REALTIME: dict[str, Any] = dict(PAPER, num_samples=REALTIME_SAMPLES, num_policy_samples=REALTIME_POLICY,
                                iterations=REALTIME_ITERATIONS, num_elites=REALTIME_ELITES, init_std=0.1,
                                warm_start="policy")


def scaled_settings(num_samples: int, iterations: int, *, init_std: float | None = None,
                    warm_start: str | None = None, **overrides: Any) -> dict[str, Any]:
    """The official settings at another budget: the policy mixture and elite count scale with the sample
    count (5 % policy samples, at least 2; elites a quarter of the samples, 4 to 64), so small budgets
    keep the base-policy samples that ``int(num_samples * mixture_coef)`` would round away.
    ``init_std`` and ``warm_start`` replace the official values unless None (as command-line options pass
    them); ``overrides`` replace any setting.
    ``scaled_settings(16, 1, init_std=0.1, warm_start="policy") == REALTIME``; ``scaled_settings(450, 8)`` is
    the paper's setting."""
    policy = max(REALTIME_POLICY, int(num_samples * PAPER["mixture_coef"]))
    elites = min(PAPER["num_elites"], max(REALTIME_ELITES, num_samples // 4))
    settings = dict(PAPER, num_samples=int(num_samples), num_policy_samples=policy, iterations=int(iterations),
                    num_elites=elites)
    if init_std is not None:
        settings["init_std"] = init_std
    if warm_start is not None:
        settings["warm_start"] = warm_start
    settings.update(overrides)
    return settings


@register("planner", "mppi")
class MPPIPlanner(Planner):
    """MPPI with elite re-fitting (TD-MPC semantics) and the official SimDist defaults.

    Each tick: the initial mean comes from the warm start and the std is reset to ``init_std``.
    ``num_policy_samples`` (default ``int(num_samples * mixture_coef)``) noisy copies of the base-policy
    chunk (noise std ``base_act_std``) are drawn once and kept fixed across iterations. Each of the
    ``iterations`` draws ``num_samples`` sequences mean + std·ε, scores all of them with
    R = Σ_{k<T} γ^k r̂_k + γ^(T+value_offset) V̂_last, keeps the ``num_elites`` best and re-fits
    mean/std with weights exp(temperature·(R − R_max)) (``temperature`` is an *inverse* temperature);
    std is clamped to [min_std, max_std] and the mean is blended with ``momentum``. The result is the
    final mean: ``action`` = its first step, ``plan`` = all of it.

    Warm starts (``warm_start``), from the previous tick's final plan p of the same env:
    ``"shift"`` (default) [p_1, …, p_{T-1}, p_{T-1}] (shift left by one, last step repeated);
    ``"official"`` [p_{T-1}, 0, …, 0] (the released ``roll(+1)``-then-zero code, SIMDIST 11.1a);
    ``"none"`` zeros; ``"policy"``: the base policy's action chunk of this tick (a prior for budgets with
    one iteration, where a wide first draw cannot be narrowed again; needs a policy head). After ``reset``
    (or a change of batch size) the mean starts at zero.

    ``score_chunk``: most sequences per ``imagine`` call (None: 128 on CPU, all at once elsewhere);
    ``parallel_chunks``: on CPU, score chunks on as many Python threads as torch has threads;
    ``compile``: score through ``torch.compile`` (True, or a mode such as ``"reduce-overhead"``, which
    uses CUDA graphs on a GPU); the first tick of each shape compiles.

    Samples and outputs are clipped to the action bounds (planner arguments, else the model config).
    Randomness comes from the planner's own ``torch.Generator``, seeded with ``seed`` at construction and
    by ``reset(seed=...)``, so a tick is deterministic given the seed and the call sequence.
    """

    per_env_state = True  # the warm start

    def __init__(
        self, world_model: nn.Module, num_samples: int = 450, mixture_coef: float = 0.05,
        num_policy_samples: int | None = None, iterations: int = 8, num_elites: int = 64,
        temperature: float = 0.25, init_std: float = 2.0, min_std: float = 0.05, max_std: float = 2.0,
        base_act_std: float = 0.05, momentum: float = 0.0, discount: float = 0.99, warm_start: str = "shift",
        seed: int = 42, action_low: Bound = None, action_high: Bound = None, naive: bool = False,
        score_chunk: int | None = None, compile: bool | str = False, parallel_chunks: bool = True,
    ) -> None:
        super().__init__(world_model, action_low, action_high)
        if warm_start not in WARM_STARTS:
            raise ValueError(f"warm_start must be one of {WARM_STARTS}, got {warm_start!r}")
        if num_policy_samples is None:
            num_policy_samples = int(num_samples * mixture_coef)
        if world_model.policy is None:
            num_policy_samples = 0
            if warm_start == "policy":
                raise ValueError("warm_start='policy' needs a world model with a policy head")
        if num_samples < 0 or num_policy_samples < 0 or num_samples + num_policy_samples < 1:
            raise ValueError(f"need at least one sample; got num_samples={num_samples}, "
                             f"num_policy_samples={num_policy_samples}")
        if iterations < 1 or num_elites < 1:
            raise ValueError(f"iterations and num_elites must be >= 1, got {iterations} and {num_elites}")
        if not 0.0 < min_std <= max_std:
            raise ValueError(f"need 0 < min_std <= max_std, got {min_std}, {max_std}")
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {momentum}")
        self.num_samples, self.num_policy_samples = int(num_samples), int(num_policy_samples)
        self.iterations = int(iterations)
        self.num_elites = min(int(num_elites), self.num_samples + self.num_policy_samples)
        self.temperature, self.init_std, self.min_std, self.max_std = temperature, init_std, min_std, max_std
        self.base_act_std, self.momentum, self.discount = base_act_std, momentum, discount
        self.warm_start, self.naive, self.seed = warm_start, naive, int(seed)
        if score_chunk is not None and score_chunk < 1:
            raise ValueError(f"score_chunk must be >= 1 or None, got {score_chunk}")
        self.score_chunk, self.compile, self.parallel_chunks = score_chunk, compile, parallel_chunks
        self._compiled: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_size = 0
        self.prev_mean: Tensor | None = None
        self._gen: torch.Generator | None = None
        self._generator()

    # ------------------------------------------------------------------ state
    def _generator(self) -> torch.Generator:
        dev = self.device
        if self._gen is None or self._gen.device != dev:
            self._gen = torch.Generator(device=dev)
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

    def warm_start_mean(self, batch: int) -> Tensor:
        """The initial mean (B, T, A) of this tick, from ``prev_mean`` and ``warm_start``."""
        mean = torch.zeros(batch, self.horizon, self.action_dim, device=self.device, dtype=self.dtype)
        prev = self.prev_mean
        if prev is None or prev.shape[0] != batch or self.warm_start == "none":
            return mean
        prev = prev.to(mean)
        if self.warm_start == "shift":
            return torch.cat([prev[:, 1:], prev[:, -1:]], dim=1)
        mean[:, 0] = prev[:, -1]  # "official"
        return mean

    # ------------------------------------------------------------------ scoring
    def _score(self, actions: Tensor, ctx: tuple) -> Tensor:
        """Returns (B, N) of action sequences (B, N, T, A)."""
        if self.naive:
            return self._score_naive(actions, *ctx)
        b, n = actions.shape[:2]
        chunk = self.score_chunk
        if chunk is None:
            chunk = DEFAULT_CPU_CHUNK if actions.device.type == "cpu" else n * b
        pieces = -(-(b * n) // chunk)  # ceil
        if pieces <= 1 or n == 1:
            return self._score_chunk(actions, *ctx)
        chunks = actions.tensor_split(min(pieces, n), dim=1)
        workers = torch.get_num_threads() if self.parallel_chunks and actions.device.type == "cpu" else 1
        if workers <= 1 or len(chunks) < 2:
            return torch.cat([self._score_chunk(a, *ctx) for a in chunks], 1)
        return torch.cat(self._score_parallel(chunks, ctx, min(workers, len(chunks))), 1)

    def _score_parallel(self, chunks: Sequence[Tensor], ctx: tuple, workers: int) -> list[Tensor]:
        """Score ``chunks`` on ``workers`` Python threads with one torch thread each, then restore the
        thread count. Small matrices split poorly over threads inside one operation; whole chunks do."""
        if self._pool is None or self._pool_size != workers:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
            self._pool, self._pool_size = ThreadPoolExecutor(workers, thread_name_prefix="mppi"), workers
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            grad = torch.is_grad_enabled()

            def score(a: Tensor) -> Tensor:
                with torch.set_grad_enabled(grad):
                    return self._score_chunk(a, *ctx)

            return list(self._pool.map(score, chunks))
        finally:
            torch.set_num_threads(threads)

    def _score_chunk(self, actions: Tensor, *ctx: Any) -> Tensor:
        """:meth:`_score_fast`, through ``torch.compile`` when ``compile`` is set (compiled on first use)."""
        if not self.compile:
            return self._score_fast(actions, *ctx)
        if self._compiled is None:
            mode = self.compile if isinstance(self.compile, str) else None
            self._compiled = torch.compile(self._score_fast, dynamic=False, mode=mode)
        return self._compiled(actions, *ctx)

    def _score_fast(self, actions: Tensor, encoding: Any, prepared: Any, command: Tensor | None) -> Tensor:
        wm = self.world_model
        im = wm.imagine(encoding, actions, command, prepared=prepared, last_value_only=True)
        return discounted_return(im.rewards, im.values, self.discount, wm.config.value_offset)

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
        im = wm.imagine(encoding, actions.reshape(b * n, *actions.shape[2:]), cmd)
        ret = discounted_return(im.rewards, im.values, self.discount, wm.config.value_offset)
        return ret.reshape(b, n)

    # ------------------------------------------------------------------ planning
    def _plan(self, obs_hist: dict[str, Tensor], act_hist: Tensor, command: Tensor | None) -> PlanResult:
        wm = self.world_model
        b, t, a = act_hist.shape[0], self.horizon, self.action_dim
        dev, dt, gen = self.device, self.dtype, self._generator()
        if self.naive:
            ctx: tuple = (obs_hist, act_hist, command)
            needs_policy = self.num_policy_samples or self.warm_start == "policy"
            encoding = wm.encode(obs_hist, act_hist) if needs_policy else None
        else:
            encoding = wm.encode(obs_hist, act_hist)
            ctx = (encoding, wm.dynamics.prepare(encoding), command)

        policy_samples = chunk = None
        if self.num_policy_samples or self.warm_start == "policy":
            chunk = wm.policy_actions(encoding, command)
        if self.num_policy_samples:
            noise = torch.randn(b, self.num_policy_samples, t, a, generator=gen, device=dev, dtype=dt)
            policy_samples = self.clip(chunk[:, None] + self.base_act_std * noise)

        mean = self.clip(chunk).to(dt) if self.warm_start == "policy" else self.warm_start_mean(b)
        std = torch.full_like(mean, self.init_std)
        policy_returns = None  # the policy samples stay fixed, so the fast path scores them once per tick
        for _ in range(self.iterations):
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
            returns = torch.nan_to_num(returns, nan=torch.finfo(dt).min)
            elite_returns, idx = returns.topk(self.num_elites, dim=1)
            elites = samples.gather(1, idx[:, :, None, None].expand(-1, -1, t, a))
            w = torch.softmax(self.temperature * elite_returns, dim=1)[:, :, None, None]
            new_mean = (w * elites).sum(1)
            std = (w * (elites - new_mean[:, None]) ** 2).sum(1).sqrt().clamp(self.min_std, self.max_std)
            mean = self.momentum * mean + (1.0 - self.momentum) * new_mean

        plan = self.clip(mean)
        self.prev_mean = plan.clone()
        return PlanResult(
            action=plan[:, 0].clone(), plan=plan, returns=(w[:, :, 0, 0] * elite_returns).sum(1),
            diagnostics={
                "max_return": elite_returns[:, 0],
                "std": std,
                "policy_elite_fraction": (idx >= self.num_samples).to(dt).mean(1),
            },
        )

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(samples={self.num_samples}+{self.num_policy_samples} policy, "
                f"iterations={self.iterations}, elites={self.num_elites}, temperature={self.temperature}, "
                f"horizon={self.horizon}, warm_start={self.warm_start!r}, naive={self.naive}, "
                f"compile={self.compile!r})")


@register("planner", "mppi_naive")
class NaiveMPPIPlanner(MPPIPlanner):
    """:class:`MPPIPlanner` with ``naive=True``: the official per-sample recomputation, for benchmarks."""

    def __init__(self, world_model: nn.Module, **kwargs: Any) -> None:
        kwargs.setdefault("naive", True)
        super().__init__(world_model, **kwargs)
