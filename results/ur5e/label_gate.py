"""The value-label gate: do a method's V^e labels rank a planner's candidates as the simulator does?

A perfect world model would predict each candidate's rewards exactly and reach its true end state; the only
thing left between the planner and the true ranking is then the value label at that end state. This module
measures that gap with no model at all. States the scripted expert visits on the task's profile and grid are
cloned; at each, K candidates of T steps (the expert's action held, plus Gaussian noise σ: the planner's prior
samples) run open loop from a clone (the plug-in's ``value.run_prefix``), giving their true discounted rewards and
their true end states. The truth is what the planner predicts with a perfect value: the rewards plus γ^T times
the expert's own continuation from the end state until the episode ends (success absorbing, as the labels).
A value-label method scores the candidates as Σγ^k r_k + γ^T V(s_T) with its V; Spearman's ρ against the truth
(per state, mean with a 95 % bootstrap interval over states) says whether it ranks. The ceiling is the same
test with V replaced by the expert's continuation return computed again in a fresh simulation (1 up to
simulation noise: the truth is that quantity).

Methods (:func:`run_gate`): ``rewards`` (V = 0), the continuation critic of the data engine (the UR5e plug-in's
``value`` module) at
its default size and larger, each with and without the privileged inputs, a TD(λ) critic fitted on the
expert's own transitions, and n-step Monte-Carlo V^e (the expert for n steps, then the critic), with the
cost of each: the one-off fitting cost and the labelling cost per state.

    python -m results.ur5e.label_gate --task ur5e-peg --grid narrow --out results/ur5e/labels/ur5e-peg.json

A research script on the UR5e plug-in's own value labels: it imports the plug-in's modules (``value``, ``expert``,
``data``), which results/ allows for the plug-in of its area only (``tests/test_results_api.py``).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from results.runner import atomic_path
from simdist.components.tasks.ur5e.value import (
    FEATURE_GROUPS,
    ArmCritic,
    collect_labelled_states,
    continuation_returns,
    features,
    fit_critic,
    run_prefix,
)

logger = logging.getLogger(__name__)

PUBLIC_GROUPS = ("proprio", "object")  # what the world model sees (no time left, no physics parameters)


@dataclass
class GateConfig:
    """``states`` expert-visited states (``every`` control steps apart), ``candidates`` K of ``horizon`` T steps
    each (the expert's action held plus noise ``sigma``), ``num_envs`` parallel envs."""

    states: int = 16
    candidates: int = 16
    sigma: float = 0.3
    horizon: int = 5
    every: int = 10
    num_envs: int = 8
    gamma: float = 0.99
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("states", "candidates", "horizon", "every", "num_envs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.candidates < 2:
            raise ValueError(f"candidates must be >= 2 to rank, got {self.candidates}")
        if not self.sigma >= 0.0:
            raise ValueError(f"sigma must be >= 0, got {self.sigma}")
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1], got {self.gamma}")


@dataclass
class Oracle:
    """The gate's fixed part: candidates, their true rewards and end states, and the truth."""

    candidates: np.ndarray  # (S, K, T, A)
    prefix_return: np.ndarray  # (S, K): Σ_{k<T} γ^k r_k
    ended: np.ndarray  # (S, K): the episode ended within the T steps
    end_states: Any  # snapshots, one row per candidate (S*K)
    end_obs: dict[str, np.ndarray]  # (S*K, ...)
    continuation: np.ndarray  # (S*K,): the expert's return from the end state
    truth: np.ndarray  # (S, K)
    seconds: float

    def score(self, labels: np.ndarray, gamma: float) -> np.ndarray:
        """(S, K) candidate scores with ``labels`` (S*K,) as V at the end states (0 where the episode ended)."""
        t = self.candidates.shape[2]
        v = np.where(self.ended, 0.0, np.asarray(labels, np.float64).reshape(self.ended.shape))
        return self.prefix_return + gamma ** t * v


def expert_states(task: Any, cfg: GateConfig) -> tuple[Any, np.ndarray]:
    """``cfg.states`` states the scripted expert visits on the task's real env (its profile, starts uniform over
    its grid), every ``cfg.every`` steps of each episode, with the expert's action there."""
    from simdist.components.tasks.ur5e.expert import make_expert

    env = task.make_env(cfg.num_envs, cfg.seed, real=True)
    expert = make_expert(task.assembly(), control_hz=task.control_hz)
    snaps, acts, kept = [], [], 0
    try:
        obs = env.reset(seed=cfg.seed)
        expert.reset()
        while kept < cfg.states:
            actions = expert(obs)
            take = np.flatnonzero((env.episode_step > 0) & (env.episode_step % cfg.every == 0))[: cfg.states - kept]
            if len(take):
                snaps.append(task.snapshot_states(env, take))
                acts.append(actions[take].copy())
                kept += len(take)
            step = env.step(actions)
            done = np.flatnonzero(step.terminated | step.truncated)
            obs = step.obs
            if len(done):
                obs = env.reset(ids=done)
                expert.reset(done)
    finally:
        env.close()
    return task.merge_states(snaps), np.concatenate(acts)


def take_rows(states: Any, rows: np.ndarray) -> Any:
    """Rows ``rows`` of every leaf of a row-first tree of cloned states (repeats allowed: one state, many
    candidates)."""
    if isinstance(states, dict):
        return {k: take_rows(v, rows) for k, v in states.items()}
    return states[rows]


def hold_candidates(actions: np.ndarray, cfg: GateConfig) -> np.ndarray:
    """(S, K, T, A): each state's action held for T steps plus N(0, σ²) noise per step and dimension, clipped."""
    rng = np.random.default_rng(cfg.seed)
    s, a = actions.shape
    noise = rng.normal(0.0, cfg.sigma, (s, cfg.candidates, cfg.horizon, a))
    return np.clip(actions[:, None, None, :] + noise, -1.0, 1.0).astype(np.float32)


def oracle(task: Any, cfg: GateConfig, progress: bool = False) -> Oracle:
    """States, candidates, their true rewards and end states, and the truth (rewards + γ^T V^e continuation)."""
    t0 = time.perf_counter()
    snap, actions = expert_states(task, cfg)
    cand = hold_candidates(actions, cfg)
    s, k = cand.shape[:2]
    rows = np.repeat(np.arange(s), k)

    def make_env(n: int, seed: int) -> Any:
        return task.make_env(n, seed, real=True)

    ret, end_states, end_obs, ended = run_prefix(make_env, take_rows(snap, rows), cand.reshape(s * k, *cand.shape[2:]),
                                                 gamma=cfg.gamma, seed=cfg.seed + 1)
    cont = expert_return(task, end_states, gamma=cfg.gamma, seed=cfg.seed + 2, progress=progress)
    o = Oracle(cand, ret.reshape(s, k), ended.reshape(s, k), end_states, end_obs, cont, np.zeros((s, k)),
               time.perf_counter() - t0)
    o.truth = o.score(cont, cfg.gamma)
    return o


def expert_return(task: Any, states: Any, *, gamma: float, seed: int, horizon: int | None = None,
                  bootstrap: Callable[[dict[str, np.ndarray]], np.ndarray] | None = None,
                  progress: bool = False) -> np.ndarray:
    """Monte-Carlo V^e on the task's real env: the expert from each state until its episode ends, or for
    ``horizon`` steps and then ``bootstrap``'s value (n-step)."""
    from simdist.components.tasks.ur5e.expert import make_expert

    def make_env(n: int, s: int) -> Any:
        return task.make_env(n, s, real=True)

    return continuation_returns(make_env, lambda: make_expert(task.assembly(), control_hz=task.control_hz), states,
                                gamma=gamma, seed=seed, progress=progress, horizon=horizon,
                                bootstrap=None if bootstrap is None else (lambda obs: bootstrap(obs)))


def label_report(o: Oracle, labels: np.ndarray, gamma: float) -> dict[str, Any]:
    """The ranking of the candidates scored with ``labels`` against the truth, and the labels' own error at the
    end states (R² and RMS against the expert's continuation, where the episode had not ended)."""
    from simdist.diagnostics import ranking_report

    rep = ranking_report(o.score(labels, gamma), o.truth)
    live = ~o.ended.ravel()
    err = np.asarray(labels, np.float64)[live] - o.continuation[live]
    var = max(float(np.var(o.continuation[live])), 1e-12)
    return rep | {"end_state_rmse": float(np.sqrt(np.mean(err ** 2))),
                  "end_state_r2": float(1 - np.mean(err ** 2) / var)}


# ---- the value-label methods --------------------------------------------------------------------------------------

def critic_states(task: Any, *, num_envs: int, steps: int, every: int, seed: int, cache: Path | None,
                  progress: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
    """The data engine's critic states (its policy mixture on the training simulator) and their continuation
    labels, with the CPU seconds they took; cached in ``cache`` (an .npz) so a rerun resumes."""
    from simdist.components.tasks.ur5e.data import PolicyMixture
    from simdist.components.tasks.ur5e.expert import make_expert, suboptimal_experts

    if cache is not None and cache.is_file():
        z = np.load(cache)
        return z["x"], z["y"], float(z["cpu_s"])
    asm = task.assembly()
    mixture = PolicyMixture(make_expert(asm, control_hz=task.control_hz),
                            suboptimal_experts(asm, task.control_hz, seed), num_envs, 7, seed)
    c0 = time.process_time()
    x, y = collect_labelled_states(lambda n, s: task.make_env(n, s, real=False), mixture, num_envs=num_envs,
                                   steps=steps, every=every, seed=seed,
                                   make_expert=lambda: make_expert(asm, control_hz=task.control_hz),
                                   progress=progress)
    cpu = time.process_time() - c0
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(cache) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, x=x, y=y, cpu_s=cpu)
    return x, y, cpu


def group_columns(groups: tuple[str, ...], sizes: dict[str, int]) -> np.ndarray:
    """Column indices of ``groups`` inside features laid out in :data:`FEATURE_GROUPS` order."""
    start, cols = 0, []
    for g in FEATURE_GROUPS:
        if g in groups:
            cols.extend(range(start, start + sizes[g]))
        start += sizes[g]
    return np.asarray(cols, np.int64)


def expert_transitions(task: Any, *, num_envs: int, steps: int, seed: int, gamma: float
                       ) -> dict[str, np.ndarray]:
    """The scripted expert alone on the training simulator (diverse resets): per step the features before and
    after, the reward, the absorbing tail of a success (its last reward for the time left) and the end flag."""
    from simdist.components.tasks.ur5e.expert import make_expert

    env = task.make_env(num_envs, seed, real=False)
    expert = make_expert(task.assembly(), control_hz=task.control_hz)
    x, xn, r, tail, done = [], [], [], [], []
    try:
        obs = env.reset(seed=seed)
        expert.reset()
        for _ in range(steps):
            step = env.step(expert(obs))
            left = env.config.max_steps - env.episode_step
            ended = step.terminated | step.truncated
            x.append(features(obs))
            xn.append(features(step.obs))
            r.append(step.reward.astype(np.float64))
            tail.append(np.where(step.info["success"], gamma * step.reward * (1 - gamma ** left) / (1 - gamma), 0.0))
            done.append(ended)
            obs = step.obs
            ids = np.flatnonzero(ended)
            if len(ids):
                obs = env.reset(ids=ids)
                expert.reset(ids)
    finally:
        env.close()
    return {k: np.stack(v) for k, v in (("x", x), ("xn", xn), ("r", r), ("tail", tail), ("done", done))}


def lambda_returns(tr: dict[str, np.ndarray], v_next: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """(steps, envs) TD(λ) targets: G_t = r_t + tail_t + γ (1 - done_t) [(1 - λ) V(s_{t+1}) + λ G_{t+1}], the
    last step bootstrapped with V alone."""
    r, tail, done = tr["r"], tr["tail"], tr["done"].astype(np.float64)
    g = np.zeros_like(r)
    nxt = v_next[-1]
    for t in range(len(r) - 1, -1, -1):
        mix = v_next[t] if t == len(r) - 1 else (1 - lam) * v_next[t] + lam * nxt
        g[t] = r[t] + tail[t] + gamma * (1 - done[t]) * mix
        nxt = g[t]
    return g


def fit_td_critic(tr: dict[str, np.ndarray], *, gamma: float, lam: float = 0.95, iterations: int = 4,
                  epochs: int = 60, seed: int = 0, columns: np.ndarray | None = None,
                  groups: tuple[str, ...] = FEATURE_GROUPS) -> ArmCritic:
    """Fitted TD(λ) on the expert's transitions: ``iterations`` rounds of λ-return targets under the current V
    (0 at first) and a fresh regression on them."""
    cols = slice(None) if columns is None else columns
    x, xn = tr["x"][..., cols], tr["xn"][..., cols]
    steps, envs = tr["r"].shape
    v_next = np.zeros((steps, envs))
    critic = None
    for _ in range(iterations):
        g = lambda_returns(tr, v_next, gamma, lam)
        critic, _, _ = fit_critic(x.reshape(steps * envs, -1), g.reshape(-1), seed=seed, epochs=epochs,
                                  groups=groups)
        v_next = critic.predict(xn.reshape(steps * envs, -1)).reshape(steps, envs)
    assert critic is not None
    return critic


def cached_oracle(task: Any, cfg: GateConfig, cache: Path | None, progress: bool = False) -> Oracle:
    """:func:`oracle`, kept in ``cache`` (a pickle named by the config) so a rerun resumes after it."""
    import pickle

    name = "oracle-" + "-".join(f"{k}{v}" for k, v in asdict(cfg).items()) + f"-{task.name}.pkl"
    path = None if cache is None else cache / name
    if path is not None and path.is_file():
        with open(path, "rb") as f:
            return pickle.load(f)
    o = oracle(task, cfg, progress=progress)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp, open(tmp, "wb") as f:
            pickle.dump(o, f)
    return o


def run_gate(task: Any, cfg: GateConfig, *, cache: Path | None = None, critic_envs: int = 32,
             critic_steps: int = 300, larger: int = 4, td_envs: int = 32, td_steps: int = 300,
             mc_horizons: tuple[int, ...] = (10, 25), progress: bool = False,
             on_method: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """The gate for every method (see the module docstring); one report per method with its costs.
    ``on_method(report)`` is called with the report so far after each method (a partial file)."""
    o = cached_oracle(task, cfg, cache, progress=progress)
    logger.info("oracle: %d states x %d candidates in %.0f s", *o.truth.shape, o.seconds)
    sizes = {g: int(np.asarray(o.end_obs[g]).shape[1]) for g in FEATURE_GROUPS}
    methods: dict[str, dict[str, Any]] = {}
    head = {"task": task.describe(), "config": asdict(cfg), "oracle_seconds": o.seconds,
            "true_return": float(o.truth.mean()), "true_spread_per_state": float(np.ptp(o.truth, axis=1).mean()),
            "ended_within_candidate": float(o.ended.mean()), "methods": methods}

    def record(name: str, labels: np.ndarray, **cost: Any) -> None:
        methods[name] = label_report(o, labels, cfg.gamma) | cost
        logger.info("%s: Spearman %.3f", name, methods[name]["spearman"]["mean"])
        if on_method is not None:
            on_method(head)

    n = o.continuation.size
    record("rewards only (V = 0)", np.zeros(n), fit_cpu_s=0.0, label_cpu_s_per_state=0.0)
    c0 = time.process_time()
    ceiling = expert_return(task, o.end_states, gamma=cfg.gamma, seed=cfg.seed + 3, progress=progress)
    record("ceiling: Monte-Carlo V^e to the end", ceiling, fit_cpu_s=0.0,
           label_cpu_s_per_state=(time.process_time() - c0) / n)

    x, y, cpu = critic_states(task, num_envs=critic_envs * larger, steps=critic_steps, every=10, seed=cfg.seed,
                              cache=None if cache is None else cache / f"critic-states-{critic_envs * larger}x"
                                                                         f"{critic_steps}.npz", progress=progress)
    small = np.arange(len(y) // larger)  # the rows of the first critic_envs envs' worth: the engine's default size
    critics: dict[str, ArmCritic] = {}
    for size, rows, hidden in (("default", small, 256), ("larger", np.arange(len(y)), 512)):
        for inputs, groups in (("all inputs", FEATURE_GROUPS), ("no privileged inputs", PUBLIC_GROUPS)):
            cols = group_columns(groups, sizes)
            f0 = time.process_time()
            critic, rmse, r2 = fit_critic(x[rows][:, cols], y[rows], seed=cfg.seed, hidden=hidden, groups=groups)
            name = f"continuation critic, {size} ({len(rows)} states, {hidden} wide), {inputs}"
            critics[name] = critic
            record(name, critic(o.end_obs), fit_cpu_s=cpu * len(rows) / len(y) + time.process_time() - f0,
                   label_cpu_s_per_state=0.0, heldout_r2=r2, heldout_rmse=rmse, fit_states=int(len(rows)))
    f0 = time.process_time()
    tr = expert_transitions(task, num_envs=td_envs, steps=td_steps, seed=cfg.seed, gamma=cfg.gamma)
    collect = time.process_time() - f0
    for inputs, groups in (("all inputs", FEATURE_GROUPS), ("no privileged inputs", PUBLIC_GROUPS)):
        f0 = time.process_time()
        td = fit_td_critic(tr, gamma=cfg.gamma, seed=cfg.seed, columns=group_columns(groups, sizes), groups=groups)
        heldout = td.predict(x[:, group_columns(groups, sizes)])
        record(f"TD(0.95) critic on {td_envs * td_steps} expert transitions, {inputs}", td(o.end_obs),
               fit_cpu_s=collect + time.process_time() - f0, label_cpu_s_per_state=0.0,
               r2_on_continuation_states=float(1 - np.mean((heldout - y) ** 2) / np.var(y)))
    boot_name = next(k for k in critics if "default" in k and "all inputs" in k)
    for h in mc_horizons:
        c0 = time.process_time()
        labels = expert_return(task, o.end_states, gamma=cfg.gamma, seed=cfg.seed + 3, horizon=h,
                               bootstrap=critics[boot_name], progress=progress)
        record(f"Monte-Carlo V^e, {h} expert steps then the default critic", labels,
               fit_cpu_s=methods[boot_name]["fit_cpu_s"], label_cpu_s_per_state=(time.process_time() - c0) / n)
    ceiling_rho = methods["ceiling: Monte-Carlo V^e to the end"]["spearman"]["mean"]
    for m in methods.values():
        m["fraction_of_ceiling"] = m["spearman"]["mean"] / ceiling_rho if ceiling_rho > 0 else float("nan")
    # the ceiling is itself a method (Monte-Carlo V^e to the end), the most expensive one per state
    passing = [k for k, m in methods.items() if m["fraction_of_ceiling"] >= 0.8]
    cheapest = min(passing, key=lambda k: (methods[k]["label_cpu_s_per_state"], methods[k]["fit_cpu_s"]),
                   default=None)
    return head | {"cheapest_passing": cheapest}


def main(argv: list[str] | None = None) -> None:
    from simdist import get
    from simdist.data import atomic_write_json

    p = argparse.ArgumentParser(prog="python -m results.ur5e.label_gate",
                                description=__doc__.split("\n")[0])
    p.add_argument("--task", default="ur5e-peg", choices=("ur5e-peg", "ur5e-table-leg"))
    p.add_argument("--profile", default="sim", help="the profile the states and candidates run on (default sim)")
    p.add_argument("--grid", default="narrow", choices=("narrow", "wide"))
    for name, default in (("states", 16), ("candidates", 16), ("every", 10), ("envs", 8), ("seed", 0),
                          ("critic-envs", 32), ("critic-steps", 300), ("larger", 4), ("td-envs", 32),
                          ("td-steps", 300)):
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--sigma", type=float, default=0.3, help="the candidates' noise around the expert's action")
    p.add_argument("--mc-horizons", default="10,25", help="n of the n-step Monte-Carlo labels, comma-separated")
    p.add_argument("--cache", default="outputs/ur5e/labels", help="folder of the cached critic states")
    p.add_argument("--out", required=True, help="the report (JSON)")
    args = p.parse_args(argv)
    try:
        cfg = GateConfig(states=args.states, candidates=args.candidates, sigma=args.sigma, every=args.every,
                         num_envs=args.envs, seed=args.seed)
        horizons = tuple(int(h) for h in args.mc_horizons.split(",") if h)
    except ValueError as err:
        p.error(str(err))
    task_class = get("task", args.task)
    try:
        task = task_class(profile=args.profile, grid=args.grid)
    except Exception as err:  # noqa: BLE001 - a bad profile: one line, exit 2
        p.error(f"--profile {args.profile}: {err}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    command = "python -m results.ur5e.label_gate " + " ".join(argv or sys.argv[1:])

    def write(report: dict[str, Any]) -> None:
        atomic_write_json(Path(args.out), report | {"command": command})

    report = run_gate(task, cfg, cache=Path(args.cache), critic_envs=args.critic_envs, critic_steps=args.critic_steps,
                      larger=args.larger, td_envs=args.td_envs, td_steps=args.td_steps, mc_horizons=horizons,
                      on_method=lambda r: write(r | {"partial": True}))
    write(report)
    print(json.dumps({k: {"spearman": v["spearman"], "fraction_of_ceiling": v["fraction_of_ceiling"]}
                      for k, v in report["methods"].items()}, indent=1))


if __name__ == "__main__":
    main()
