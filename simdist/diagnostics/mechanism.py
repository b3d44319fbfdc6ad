"""Does the model rank the planner's candidates as the real environment does? (the mechanism of adaptation)

A better held-out consistency loss only helps the robot if the planner's choice changes for the better. This
module measures that choice directly. The reference agent's planner drives the proxy-real env; every
``every`` steps, each env's state is cloned (``StateCloning.snapshot_states``) with the agent's observation
history, and K of the sequences the planner scored at that tick are kept (its own sampling distribution:
every iteration's samples and the base-policy samples). Each candidate is executed open loop on the
proxy-real env from a clone of its state and then continued by the task's expert (``StateCloning.true_returns``:
Σ_{k<T} γ^k r_k + γ^T V^e(s_T), the quantity the planner predicts). Every model under test scores the same
candidates from the same histories as its planner does (Σ γ^k r̂_k + γ^(T+offset) V̂, less MPPI's ensemble
disagreement penalty when it has one). Per state: Spearman's ρ between predicted and true returns, the
true-return regret of the model's top choice (best true return minus the true return of the model's argmax)
and that regret over the state's true-return range, the within-state error (RMS of predicted minus true once
each state's mean is removed: what ranking depends on) beside the spreads of the predicted and true returns;
means with 95 % bootstrap intervals over states. The raw returns are kept.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from simdist.capabilities import StateCloning, require
from simdist.data.engine import action_hold
from simdist.diagnostics.visited import VisitedStates, candidate_rows, imagine_candidates
from simdist.evaluation import bootstrap_ci, seeds_bootstrap_ci
from simdist.tasks import Task

logger = logging.getLogger(__name__)

#: which of a tick's scored sequences the candidates are drawn from (:class:`MechanismConfig`)
POOLS = ("all", "last")


@dataclass
class MechanismConfig:
    """How many states, candidates and which envs: ``states`` cloned states (``every`` control steps apart,
    after ``skip`` steps of each episode), ``candidates`` K per state, ``num_envs`` parallel envs; ``pool``
    which of the planner's sequences the candidates are drawn from: ``"all"`` (every iteration's samples and the
    policy samples) or ``"last"`` (the last iteration's samples alone, the ones the final plan is fitted to)."""

    states: int = 40
    candidates: int = 32
    every: int = 5
    skip: int = 0
    num_envs: int = 8
    gamma: float = 0.99
    seed: int = 0
    pool: str = "all"

    def __post_init__(self) -> None:
        for name in ("states", "candidates", "every", "num_envs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.candidates < 2:
            raise ValueError(f"candidates must be >= 2 to rank, got {self.candidates}")
        if isinstance(self.skip, bool) or not isinstance(self.skip, int) or self.skip < 0:
            raise ValueError(f"skip must be an integer >= 0, got {self.skip!r}")
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1], got {self.gamma}")
        if self.pool not in POOLS:
            raise ValueError(f"pool must be one of {POOLS}, got {self.pool!r}")


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation of two 1-D arrays (average ranks for ties; 0 if either is constant)."""
    ra, rb = _ranks(np.asarray(a, np.float64)), _ranks(np.asarray(b, np.float64))
    sa, sb = ra.std(), rb.std()
    if sa == 0.0 or sb == 0.0:
        return 0.0
    return float(((ra - ra.mean()) * (rb - rb.mean())).mean() / (sa * sb))


def _ranks(x: np.ndarray) -> np.ndarray:
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2.0)[inverse]


def visit_states(task: Task, agent: Any, cfg: MechanismConfig) -> VisitedStates:
    """Drive ``agent`` (a planning agent whose planner keeps its candidates) on the task's real env and clone
    ``cfg.states`` states, each with its history and K of the candidates the planner scored there
    (:func:`drive_and_clone` with the agent's planner and history)."""
    planner = agent.with_settings(keep_candidates=True, seed=cfg.seed).planner
    return drive_and_clone(task, planner, agent.new_history(cfg.num_envs), cfg)


def drive_and_clone(task: Task, planner: Any, history: Any, cfg: MechanismConfig,
                    shadows: Mapping[str, Any] | None = None) -> VisitedStates:
    """Let ``planner`` (one that keeps its candidates) act on the task's real env through ``history`` (an
    :class:`~simdist.planning.ObservationHistory` of ``cfg.num_envs`` envs) and clone ``cfg.states`` states.
    ``shadows`` (name → planner) plan on the same history every tick and never act; every tick's action of the
    driver (``"driver"``) and of each shadow is kept in :attr:`VisitedStates.actions`."""
    if not getattr(planner, "keep_candidates", False):
        raise ValueError(f"{type(planner).__name__} does not keep its candidates; the analysis needs an MPPI agent")
    shadows = dict(shadows or {})
    task = require(task, StateCloning, "the plan-ranking analysis")
    env = task.make_env(cfg.num_envs, cfg.seed, real=True)
    rng = np.random.default_rng(cfg.seed)
    snaps: list[Any] = []
    obs_rows: list[dict[str, torch.Tensor]] = []
    act_rows: list[torch.Tensor] = []
    cmd_rows: list[torch.Tensor] = []
    cand_rows: list[torch.Tensor] = []
    ticks: dict[str, list[np.ndarray]] = {"driver": [], **{name: [] for name in shadows}}
    episode_rows: list[np.ndarray] = []
    episode = np.arange(cfg.num_envs)  # each env's current episode id, unique over the run
    next_episode = cfg.num_envs
    try:
        obs = env.reset(seed=cfg.seed)
        history.reset(obs, command=history.command_of(obs))
        planner.reset(seed=cfg.seed)
        for shadow in shadows.values():
            shadow.reset()
        age = np.zeros(cfg.num_envs, np.int64)
        was_held = np.zeros(cfg.num_envs, bool)
        kept = 0
        while kept < cfg.states:
            held = action_hold(env, cfg.num_envs)  # an evaluation's standing phase: zero actions, no states
            released = np.flatnonzero(was_held & ~held)
            if len(released):
                for p in (planner, *shadows.values()):
                    p.reset(ids=released.tolist())
            was_held = held
            result = planner.plan(history)
            for name, shadow in shadows.items():
                ticks[name].append(shadow.plan(history).action.detach().cpu().numpy())
            take = np.flatnonzero((age >= cfg.skip) & ((age - cfg.skip) % cfg.every == 0) & ~held)
            take = take[: cfg.states - kept]
            kept += len(take)
            if len(take):
                snaps.append(task.snapshot_states(env, take))
                o, a, c = history.as_inputs(take)
                obs_rows.append(o)
                act_rows.append(a)
                cmd_rows.append(c)
                episode_rows.append(episode[take])
                pool = result.diagnostics["candidates"][torch.as_tensor(take)]
                if cfg.pool == "last":
                    drawn = result.diagnostics["candidate_iteration"]
                    pool = pool[:, (drawn == drawn.max()).to(pool.device)]
                if pool.shape[1] < cfg.candidates:
                    raise ValueError(f"the planner scores {pool.shape[1]} sequences per tick; asked for "
                                     f"{cfg.candidates} candidates")
                pick = np.stack([rng.choice(pool.shape[1], cfg.candidates, replace=False) for _ in take])
                cand_rows.append(pool[torch.arange(len(take))[:, None], torch.as_tensor(pick)])
            actions = result.action.detach().cpu().numpy().astype(np.float32)
            actions[held] = 0.0
            ticks["driver"].append(actions)
            step = env.step(actions)
            history.push(step.obs, actions, command=history.command_of(step.obs))
            age += 1
            done = np.flatnonzero(step.terminated | step.truncated)
            if len(done):
                obs = env.reset(ids=done)
                sub = {k: v[done] for k, v in obs.items()}
                history.reset(sub, ids=done, command=history.command_of(sub))
                for p in (planner, *shadows.values()):
                    p.reset(ids=done.tolist())
                age[done] = 0
                episode[done] = next_episode + np.arange(len(done))
                next_episode += len(done)
    finally:
        env.close()
    return VisitedStates(
        states=task.merge_states(snaps),
        obs_hist={k: torch.cat([o[k] for o in obs_rows]) for k in obs_rows[0]},
        act_hist=torch.cat(act_rows), command=torch.cat(cmd_rows), candidates=torch.cat(cand_rows),
        actions={name: np.concatenate(rows) for name, rows in ticks.items()},
        episodes=np.concatenate(episode_rows))


@torch.no_grad()
def predicted_returns(world_model: Any, visited: VisitedStates, gamma: float, disagreement: float = 0.0,
                      value_weight: float = 1.0) -> np.ndarray:
    """(S, K) returns the model predicts for the candidates, from the same histories the planner had, scored as
    MPPI scores them (:func:`~simdist.planning.base.plan_score`: the value term weighted by ``value_weight``,
    less ``disagreement`` λ times an ensemble's discounted disagreement)."""
    from simdist.planning.base import plan_score

    ret = plan_score(imagine_candidates(world_model, visited), gamma, world_model.config.value_offset, disagreement,
                     value_weight)
    return ret.cpu().numpy().astype(np.float64)


@torch.no_grad()
def predicted_parts(world_model: Any, visited: VisitedStates, gamma: float,
                    expansion: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(S, K) the two parts of the model's score: its horizon rewards Σ_{k<T} γ^k r̂_k and its value term
    γ^(T+offset) V̂(ẑ_T) (their sum is :func:`predicted_returns` without a disagreement penalty); ``expansion``
    K > 0: the planner's value expansion, rewards over T+K steps and the value at ẑ_{T+K}."""
    from simdist.planning.base import return_parts

    im = imagine_candidates(world_model, visited, expansion=expansion)
    rewards, value = return_parts(im.rewards, im.values, gamma, world_model.config.value_offset)
    return (rewards.cpu().numpy().astype(np.float64), value.cpu().numpy().astype(np.float64))


def _within_var(x: np.ndarray) -> np.ndarray:
    """Per state (row): the variance over candidates."""
    return (x - x.mean(1, keepdims=True)).var(1)


def _centred_rms(pred: np.ndarray, true: np.ndarray) -> np.ndarray:
    err = (pred - pred.mean(1, keepdims=True)) - (true - true.mean(1, keepdims=True))
    return np.sqrt((err ** 2).mean(1))


def split_truth(parts: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Where the true candidate spread lies, from (S, K) true-return parts (:meth:`StateCloning.true_return_parts`):
    ``tail_share``, the tail's within-state variance over the horizon's plus the tail's;
    ``term_shares``, each reward term's within-state variance over the sum of every term's and the tail's;
    the fall rate per state and the share of states where at least one candidate falls."""
    horizon, tail = parts["horizon"], parts["tail"]
    vh, vt = _within_var(horizon), _within_var(tail)
    terms = {k.removeprefix("reward/"): v for k, v in parts.items() if k.startswith("reward/")}
    v_terms = {k: _within_var(v) for k, v in terms.items()}
    denom = np.maximum(sum(v_terms.values(), vt), 1e-12)
    fell = parts.get("fell", np.zeros_like(horizon))
    return {
        "tail_share": asdict(bootstrap_ci(vt / np.maximum(vh + vt, 1e-12))),
        "horizon_spread": asdict(bootstrap_ci(np.ptp(horizon, axis=1))),
        "tail_spread": asdict(bootstrap_ci(np.ptp(tail, axis=1))),
        "fall_rate": asdict(bootstrap_ci(fell.mean(1))),
        "states_with_a_fall": asdict(bootstrap_ci((fell.max(1) > 0).astype(float))),
        "term_shares": {k: asdict(bootstrap_ci(v / denom)) for k, v in v_terms.items()},
    }


def split_report(pred_reward: np.ndarray, pred_value: np.ndarray, parts: Mapping[str, np.ndarray]
                 ) -> dict[str, Any]:
    """Which part of the prediction carries the ranking error: per state, Spearman ρ of the whole score against
    the true return, of the predicted horizon rewards against the true horizon part (dynamics and reward head),
    of the value term against the true tail (the value head on the predicted final latent), and of the whole
    score against each true part; each part's error once the state's mean is removed (RMS) and the value term's
    mean offset from the true tail (its level, which ranking ignores); means with 95 %
    intervals over states. States where every candidate falls have no tail to rank (ρ 0 there)."""
    horizon, tail, total = parts["horizon"], parts["tail"], parts["total"]
    whole = pred_reward + pred_value
    per = {
        "rho": [spearman(p, t) for p, t in zip(whole, total)],
        "rho_reward": [spearman(p, t) for p, t in zip(pred_reward, horizon)],
        "rho_value": [spearman(p, t) for p, t in zip(pred_value, tail)],
        "rho_score_vs_horizon": [spearman(p, t) for p, t in zip(whole, horizon)],
        "rho_score_vs_tail": [spearman(p, t) for p, t in zip(whole, tail)],
        "rho_value_vs_total": [spearman(p, t) for p, t in zip(pred_value, total)],
        "reward_error": _centred_rms(pred_reward, horizon), "value_error": _centred_rms(pred_value, tail),
        "value_offset": (pred_value - tail).mean(1),
        "predicted_reward_spread": np.ptp(pred_reward, axis=1), "predicted_value_spread": np.ptp(pred_value, axis=1),
    }
    return {k: asdict(bootstrap_ci(np.asarray(v, np.float64))) for k, v in per.items()}


@torch.no_grad()
def true_latent_parts(world_model: Any, visited: VisitedStates, true_latents: np.ndarray, gamma: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(S, K) the model's score parts on the latents the candidates really reached (``true_latents`` (S, K, T, D),
    the model's encoding of their open-loop observations): its reward head's horizon rewards and its value
    head's term on the true end state, as :func:`predicted_parts` gives them on the imagined latents."""
    from simdist.planning.base import return_parts

    im = imagine_candidates(world_model, visited, torch.as_tensor(true_latents))
    rewards, value = return_parts(im.rewards, im.values, gamma, world_model.config.value_offset)
    return rewards.double().cpu().numpy(), value.double().cpu().numpy()


def true_latent_report(pred_reward: np.ndarray, pred_value: np.ndarray, true_reward: np.ndarray,
                       true_value: np.ndarray, parts: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The control that separates the dynamics from the heads: the frozen heads scored on the candidates' true
    latents (``true_*``) beside the imagined ones (``pred_*``), each ranked against the true parts. Per state:
    ρ of the value head on the true end state against the true tail (``rho_value_on_true``: how the heads rank
    real futures; dynamics-only adaptation cannot change it), of the reward head on the true latents against the
    true horizon part (``rho_reward_on_true``), of both against the true total (``rho_on_true``), and of the
    value term on the imagined against on the true end state (``rho_value_pred_vs_true``: where the dynamics
    puts the end state, as the value head sees it); the value terms' spreads beside the true tail's."""
    horizon, tail, total = parts["horizon"], parts["tail"], parts["total"]
    per = {
        "rho_value_on_true": [spearman(p, t) for p, t in zip(true_value, tail)],
        "rho_reward_on_true": [spearman(p, t) for p, t in zip(true_reward, horizon)],
        "rho_on_true": [spearman(p, t) for p, t in zip(true_reward + true_value, total)],
        "rho_value_pred_vs_true": [spearman(p, t) for p, t in zip(pred_value, true_value)],
        "rho_reward_pred_vs_true": [spearman(p, t) for p, t in zip(pred_reward, true_reward)],
        "value_spread_on_true": np.ptp(true_value, axis=1), "value_spread_predicted": np.ptp(pred_value, axis=1),
        "tail_spread": np.ptp(tail, axis=1),
    }
    return {k: asdict(bootstrap_ci(np.asarray(v, np.float64))) for k, v in per.items()} | {
        "per_state": {k: np.round(np.asarray(v, np.float64), 6).tolist() for k, v in per.items()}}


def by_episode(per_state: Sequence[float] | np.ndarray, episodes: np.ndarray) -> dict[str, Any]:
    """Mean of a per-state metric with its 95 % interval from a two-level bootstrap over the episodes the states
    were cloned from (states of one episode are not independent), and how many episodes there were."""
    values = np.asarray(per_state, np.float64)
    groups = [values[episodes == e] for e in np.unique(episodes)]
    return asdict(seeds_bootstrap_ci(groups)) | {"episodes": len(groups)}


def true_returns(task: Task, visited: VisitedStates, cfg: MechanismConfig, progress: bool = False) -> np.ndarray:
    """(S, K) true returns of the candidates on the task's real env (see :meth:`StateCloning.true_returns`)."""
    rows, actions = candidate_rows(visited)
    cloning = require(task, StateCloning, "the plan-ranking analysis")
    out = cloning.true_returns(visited.states, rows, actions, gamma=cfg.gamma, seed=cfg.seed, progress=progress)
    return np.asarray(out, np.float64).reshape(visited.candidates.shape[:2])


def ranking_report(predicted: np.ndarray, true: np.ndarray) -> dict[str, Any]:
    """Per-state Spearman ρ, regret of the model's top choice and regret over the true range, with CIs."""
    if predicted.shape != true.shape or predicted.ndim != 2:
        raise ValueError(f"predicted {predicted.shape} and true {true.shape} must be the same (S, K)")
    if not (np.isfinite(predicted).all() and np.isfinite(true).all()):
        raise ValueError("non-finite returns: refusing to rank NaN")
    rho = np.array([spearman(p, t) for p, t in zip(predicted, true)])
    choice = true[np.arange(len(true)), predicted.argmax(1)]
    regret = true.max(1) - choice
    spread = np.ptp(true, axis=1)
    relative = np.where(spread > 0, regret / np.where(spread > 0, spread, 1.0), 0.0)
    top1 = (predicted.argmax(1) == true.argmax(1)).astype(float)
    # the error that matters for ranking: predicted minus true return once each state's mean is removed
    relative_error = (predicted - predicted.mean(1, keepdims=True)) - (true - true.mean(1, keepdims=True))
    offset = predicted.mean(1) - true.mean(1)
    return {name: asdict(bootstrap_ci(values)) for name, values in
            (("spearman", rho), ("regret", regret), ("relative_regret", relative), ("top1", top1),
             ("within_state_error_rms", np.sqrt((relative_error ** 2).mean(1))),
             ("predicted_spread", np.ptp(predicted, axis=1)), ("mean_offset", offset))} | {
        "states": int(len(true)), "candidates": int(true.shape[1])}


def planner_disagreement(agent: Any) -> float:
    """The disagreement penalty λ of ``agent``'s planner (MPPI's ``disagreement``); 0 when it has none."""
    return float(getattr(getattr(agent, "planner", None), "disagreement", 0.0) or 0.0)


def planner_value_weight(agent: Any) -> float:
    """The weight of the value term in ``agent``'s planner's score (MPPI's ``value_weight``); 1 when it has none."""
    weight = getattr(getattr(agent, "planner", None), "value_weight", None)
    return 1.0 if weight is None else float(weight)


def true_return_parts(task: Task, visited: VisitedStates, cfg: MechanismConfig, progress: bool = False
                      ) -> dict[str, np.ndarray]:
    """(S, K) parts of the candidates' true returns (see :meth:`StateCloning.true_return_parts`)."""
    rows, actions = candidate_rows(visited)
    cloning = require(task, StateCloning, "the plan-ranking analysis")
    out = cloning.true_return_parts(visited.states, rows, actions, gamma=cfg.gamma, seed=cfg.seed, progress=progress)
    return {name: np.asarray(v, np.float64).reshape(visited.candidates.shape[:2]) for name, v in out.items()}


def run_mechanism(task: Task, reference: Any, models: Mapping[str, Any], cfg: MechanismConfig,
                  progress: bool = False, split: bool = False, response: bool = False,
                  true_value: bool = False) -> dict[str, Any]:
    """States visited by ``reference``'s planner on the task's real env; one report per model of ``models``
    (name → agent with a ``world_model``) on the same states and candidates, each scored as its own planner
    scores them (with its planner's disagreement penalty, if any). ``split`` also splits the true returns into
    their parts (the task's :meth:`StateCloning.true_return_parts`) and each model's score into its horizon rewards and
    value term (:func:`split_truth`, :func:`split_report`; the raw parts are kept). ``response`` also measures how
    well each model's dynamics predicts the candidates' differences (:mod:`simdist.diagnostics.response`).
    ``true_value`` (needs ``split``) also scores each candidate's true latents, encoded from the observations it
    reached open loop, with the model's frozen heads (:func:`true_latent_report`). The main per-state ρ are also
    given with intervals bootstrapped over episodes (``by_episode``)."""
    if true_value and not split:
        raise ValueError("true_value ranks the heads on true latents against the true parts: it needs split")
    visited = visit_states(task, reference, cfg)
    parts = true_return_parts(task, visited, cfg, progress=progress) if split else None
    truth = parts["total"] if parts is not None else true_returns(task, visited, cfg, progress=progress)
    responses: dict[str, Any] = {}
    observations = None
    if response or true_value:
        from simdist.diagnostics.response import candidate_observations

        observations = candidate_observations(task, visited, cfg.seed, progress=progress)
    if response:
        from simdist.diagnostics.response import response_reports

        responses = response_reports(task, visited, models, cfg.seed, progress=progress, observations=observations)
    reports = {}
    for name, agent in models.items():
        predicted = predicted_returns(agent.world_model, visited, cfg.gamma, planner_disagreement(agent),
                                      planner_value_weight(agent))
        reports[name] = ranking_report(predicted, truth) | {"predicted_returns": predicted.round(4).tolist()}
        episodes = {"spearman": [spearman(p, t) for p, t in zip(predicted, truth)]}
        if parts is not None:
            pred_r, pred_v = predicted_parts(agent.world_model, visited, cfg.gamma)
            reports[name]["split"] = split_report(pred_r, pred_v, parts) | {
                "predicted_rewards": pred_r.round(4).tolist(), "predicted_values": pred_v.round(4).tolist()}
            episodes["rho_reward"] = [spearman(p, t) for p, t in zip(pred_r, parts["horizon"])]
            episodes["rho_value"] = [spearman(p, t) for p, t in zip(pred_v, parts["tail"])]
        if true_value and parts is not None and observations is not None:
            from simdist.diagnostics.response import true_latents

            true_r, true_v = true_latent_parts(agent.world_model, visited, true_latents(agent.world_model,
                                                                                        observations), cfg.gamma)
            control = true_latent_report(pred_r, pred_v, true_r, true_v, parts)
            reports[name]["true_latents"] = control
            episodes |= {k: control["per_state"][k] for k in ("rho_value_on_true", "rho_reward_on_true",
                                                              "rho_on_true", "rho_value_pred_vs_true")}
        if visited.episodes is not None:
            reports[name]["by_episode"] = {k: by_episode(v, visited.episodes) for k, v in episodes.items()}
        if name in responses:
            reports[name]["response"] = responses[name]
        logger.info("%s: Spearman %.3f, regret %.2f (%d states x %d candidates)", name,
                    reports[name]["spearman"]["mean"], reports[name]["regret"]["mean"], *truth.shape)
    extra = {} if visited.episodes is None else {"episodes": visited.episodes.tolist()}
    return extra | {
        "task": task.describe(), "config": asdict(cfg), "true_return": asdict(bootstrap_ci(truth.mean(1))),
        "true_spread": asdict(bootstrap_ci(np.ptp(truth, axis=1))), "true_returns": truth.round(4).tolist(),
        "models": reports} | ({} if parts is None else {
            "true_split": split_truth(parts),
            "true_parts": {k: v.round(5).tolist() for k, v in parts.items() if k != "total"}})
