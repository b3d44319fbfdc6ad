"""V^e for the UR5e data: the scripted expert's value, fitted from expert continuations of cloned states.

SimDist labels every step with the expert's critic V^e(s), whoever acted (MANIPULATION.md 3.4a). The
scripted expert has no critic, so one is fitted the way a critic is: states are collected under the data
engine's own mixture (expert and degraded variants, perturbation windows, diverse resets); every
``every``-th step the whole physics state of the batch is cloned (:func:`snapshot`) into a second env
(:func:`restore`), where the expert takes over (it infers its phase from the state) until the episode
ends; the discounted return (gamma 0.99) of that continuation is the state's label. An episode that
ends in success counts as absorbing: its last reward continues to the time limit (otherwise ending
early would be worth less than dawdling on the shaping terms). An MLP on the
observation groups (proprio, object and the privileged extras, which include the time left) is regressed
on those labels; its held-out error is reported with the labels' spread.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from simdist.rows import concat_rows, row_batches, take_rows

logger = logging.getLogger(__name__)

#: the env's own per-simulation bookkeeping, copied with the physics
_ENV_FIELDS = ("episode_step", "hold", "success", "last_action", "prev_action", "starts", "cell", "reset_kind",
               "_diverged")
#: model fields that env or assembly may have expanded per simulation (randomisation, thread welds)
_MODEL_FIELDS = ("geom_friction", "body_mass", "actuator_gainprm", "actuator_biasprm", "eq_data",
                 "dof_frictionloss", "dof_damping", "jnt_stiffness")
_DATA_FIELDS = ("qpos", "qvel", "ctrl", "mocap_pos", "mocap_quat", "eq_active", "act")
FEATURE_GROUPS = ("proprio", "object", "privileged")


def snapshot(env: Any, rows: np.ndarray) -> dict[str, Any]:
    """Copies of everything that makes simulations ``rows`` of ``env`` what they are."""
    rows = np.asarray(rows, np.int64)
    b = env.batch
    snap: dict[str, Any] = {"data": {f: np.array(b.bind(f)[rows]) for f in _DATA_FIELDS},
                            "model": {}, "env": {f: np.array(getattr(env, f)[rows]) for f in _ENV_FIELDS},
                            "params": {k: v[rows].copy() for k, v in env.params.items()}}
    for f in _MODEL_FIELDS:
        values = b.expanded(f)
        if values is not None:
            snap["model"][f] = np.array(values[rows])
    return snap


def restore(env: Any, snap: dict[str, Any], rows: np.ndarray) -> None:
    """Write a :func:`snapshot` into simulations ``rows`` of ``env`` (same model, same profile)."""
    rows = np.asarray(rows, np.int64)
    b = env.batch
    for f, values in snap["model"].items():
        b.expand(f)[rows] = values
    b.set_const(rows)
    b.reset(rows, stage=0)
    for f, values in snap["data"].items():
        b.bind(f)[rows] = values
    for f, values in snap["env"].items():
        getattr(env, f)[rows] = values
    for k, v in snap["params"].items():
        env.params[k][rows] = v
    b.forward(rows)
    env._warn[rows] = env._warnings()[rows]
    env._compute_obs()


def _accumulate(env: Any, step: Any, ret: np.ndarray, disc: np.ndarray, alive: np.ndarray, gamma: float) -> None:
    """Add one step's discounted reward to ``ret`` in place (success absorbing: an episode that ends in success
    keeps its last reward for the time left) and advance ``disc`` and ``alive``."""
    ret += np.where(alive, disc * step.reward, 0.0)
    disc *= gamma
    won = alive & step.info["success"]
    left = env.config.max_steps - env.episode_step
    ret += np.where(won, disc * step.reward * (1 - gamma ** left) / (1 - gamma), 0.0)
    alive &= ~(step.terminated | step.truncated)


def continuation_returns(make_env: Any, make_policy: Any, snap: dict[str, Any], *, batch: int = 64,
                         gamma: float = 0.99, seed: int = 0, progress: bool = False,
                         prefix: np.ndarray | None = None, horizon: int | None = None,
                         bootstrap: Any = None, env: Any = None) -> np.ndarray:
    """Discounted return of the expert taking over each snapshot row until its episode ends; with ``prefix``
    (N, T, A), row i first executes the open-loop actions ``prefix[i]`` (a planner's candidate), then the
    expert continues. ``horizon``: stop after that many steps (prefix included) and, with ``bootstrap``
    (a critic, ``value_fn(obs) -> (B,)``), add its discounted value of the rows still running (n-step V^e).
    ``env``: run in this env (kept open, its rows overwritten) instead of a new one from ``make_env``."""
    from simdist.data.engine import progress_bar

    n = len(snap["env"]["episode_step"])
    if prefix is not None and (prefix.ndim != 3 or len(prefix) != n):
        raise ValueError(f"prefix must be (N={n}, T, A) open-loop actions, got {getattr(prefix, 'shape', None)}")
    out = np.zeros(n)
    own = env is None
    env = make_env(min(batch, n), seed) if own else env
    bar = progress_bar(n, progress, desc="V^e continuations", unit="state")
    try:
        if own:
            env.reset(seed=seed)
        steps = env.config.max_steps if horizon is None else min(horizon, env.config.max_steps)
        for idx, rows in row_batches(n, env.num_envs):
            restore(env, take_rows(snap, idx), rows)
            policy = make_policy()
            policy.reset()
            obs, ret, disc = env.observations, np.zeros(env.num_envs), np.ones(env.num_envs)
            alive = np.zeros(env.num_envs, bool)
            alive[rows] = True
            for t in range(steps):
                env.active = alive  # rows that ended (or hold no state) stop costing physics
                if prefix is not None and t < prefix.shape[1]:
                    actions = np.zeros((env.num_envs, prefix.shape[2]), np.float32)
                    actions[rows] = prefix[idx, t]
                else:
                    actions = policy(obs)
                step = env.step(actions)
                _accumulate(env, step, ret, disc, alive, gamma)
                obs = step.obs
                if not alive.any():
                    break
            if bootstrap is not None and alive.any():
                ret += np.where(alive, disc * bootstrap(obs), 0.0)
            out[idx] = ret[rows]
            bar.update(len(idx))
    finally:
        bar.close()
        env.active = None
        if own:
            env.close()
    return out


class ContinuationValue:
    """``value_fn(obs, commands) -> (B,)`` for the data engine: Monte-Carlo V^e of each of ``env``'s post-step
    states, the expert continuing from a clone of it in a second env for ``horizon`` steps, then ``critic``'s
    value (None: until the episode ends). Costs ``horizon`` steps of a second env per labelled step."""

    def __init__(self, env: Any, make_env: Any, make_expert: Any, *, horizon: int | None, critic: Any = None,
                 gamma: float = 0.99, seed: int = 0) -> None:
        self.env, self.make_expert, self.horizon, self.critic, self.gamma = env, make_expert, horizon, critic, gamma
        self.shadow = make_env(env.num_envs, seed + 7919)
        self.shadow.reset(seed=seed + 7919)

    def __call__(self, obs: dict[str, np.ndarray], commands: np.ndarray | None = None) -> np.ndarray:
        snap = snapshot(self.env, np.arange(self.env.num_envs))
        return continuation_returns(None, self.make_expert, snap, gamma=self.gamma, horizon=self.horizon,
                                    bootstrap=self.critic, env=self.shadow).astype(np.float32)

    def close(self) -> None:
        self.shadow.close()


def run_prefix(make_env: Any, snap: dict[str, Any], prefix: np.ndarray, *, batch: int = 64, gamma: float = 0.99,
               seed: int = 0) -> tuple[np.ndarray, dict[str, Any], dict[str, np.ndarray], np.ndarray]:
    """Execute the open-loop actions ``prefix`` (N, T, A) from each snapshot row: the discounted return of the
    T steps (success absorbing), the state after them (a snapshot), its observation, and whether the episode
    ended within them."""
    n = len(snap["env"]["episode_step"])
    if prefix.ndim != 3 or len(prefix) != n:
        raise ValueError(f"prefix must be (N={n}, T, A) open-loop actions, got {getattr(prefix, 'shape', None)}")
    ret, ended = np.zeros(n), np.zeros(n, bool)
    snaps, obs_rows = [], []
    env = make_env(min(batch, n), seed)
    try:
        env.reset(seed=seed)
        for idx, rows in row_batches(n, env.num_envs):
            restore(env, take_rows(snap, idx), rows)
            r, disc = np.zeros(env.num_envs), np.ones(env.num_envs)
            alive = np.zeros(env.num_envs, bool)
            alive[rows] = True
            for t in range(prefix.shape[1]):
                actions = np.zeros((env.num_envs, prefix.shape[2]), np.float32)
                actions[rows] = prefix[idx, t]
                _accumulate(env, env.step(actions), r, disc, alive, gamma)
            ret[idx], ended[idx] = r[rows], ~alive[rows]
            snaps.append(snapshot(env, rows))
            obs_rows.append({k: np.array(v[rows]) for k, v in env.observations.items()})
    finally:
        env.close()
    return ret, concat_rows(snaps), concat_rows(obs_rows), ended


def features(obs: dict[str, np.ndarray], groups: tuple[str, ...] = FEATURE_GROUPS) -> np.ndarray:
    return np.concatenate([np.asarray(obs[g], np.float32) for g in groups], axis=1)


class ArmCritic:
    """``value_fn(obs, commands) -> (B,)``: the fitted V^e on the post-step observation (the data engine's form),
    reading the observation ``groups`` (all of :data:`FEATURE_GROUPS` unless fitted without some)."""

    def __init__(self, net: nn.Module, mean: np.ndarray, std: np.ndarray,
                 groups: tuple[str, ...] = FEATURE_GROUPS) -> None:
        self.net, self.mean, self.std = net.eval(), mean.astype(np.float32), std.astype(np.float32)
        self.groups = tuple(groups)

    def __call__(self, obs: dict[str, np.ndarray], commands: np.ndarray | None = None) -> np.ndarray:
        return self.predict(features(obs, self.groups))

    def predict(self, x: np.ndarray) -> np.ndarray:
        """V^e of feature rows ``x`` (the groups' features concatenated)."""
        with torch.no_grad():
            return self.net(torch.from_numpy(((x - self.mean) / self.std).astype(np.float32))).squeeze(-1).numpy()

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {**{f"net.{k}": v for k, v in self.net.state_dict().items()},
                "mean": torch.from_numpy(self.mean), "std": torch.from_numpy(self.std)}

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor], groups: tuple[str, ...] = FEATURE_GROUPS
                        ) -> ArmCritic:
        mean, std = state["mean"].numpy(), state["std"].numpy()
        net = _mlp(len(mean), int(state["net.0.weight"].shape[0]))
        net.load_state_dict({k[4:]: v for k, v in state.items() if k.startswith("net.")})
        return cls(net, mean, std, groups)


def _mlp(inputs: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(inputs, hidden), nn.ELU(), nn.Linear(hidden, hidden), nn.ELU(),
                         nn.Linear(hidden, 1))


@dataclass
class CriticReport:
    """How well the critic fits the continuation returns (held-out 20 % of the states)."""

    states: int
    label_mean: float
    label_std: float
    heldout_rmse: float
    heldout_r2: float
    collect_seconds: float
    fit_seconds: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def collect_labelled_states(make_env: Any, mixture: Any, *, num_envs: int, steps: int, every: int, seed: int,
                            gamma: float = 0.99, continuation_batch: int = 64, make_expert: Any,
                            progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """States under the data mixture (``mixture(env, obs) -> actions``) and their continuation returns."""
    from simdist.data.engine import progress_bar

    bar = progress_bar(steps, progress, desc="V^e states", unit="step")
    env = make_env(num_envs, seed)
    obs = env.reset(seed=seed)
    feats, snaps = [], []
    try:
        for t in range(steps):
            if t % every == every - 1:
                rows = np.flatnonzero(env.episode_step > 0)
                snaps.append(snapshot(env, rows))
                feats.append(features({k: v[rows] for k, v in obs.items()}))
            step = env.step(mixture(env, obs))
            obs = step.obs
            done = np.flatnonzero(step.terminated | step.truncated)
            if len(done):
                obs = env.reset(ids=done)
                mixture.reset(done)
            bar.update(1)
    finally:
        bar.close()
        env.close()
    snap = concat_rows(snaps)
    labels = continuation_returns(make_env, make_expert, snap, batch=continuation_batch, gamma=gamma, seed=seed + 1,
                                  progress=progress)
    return np.concatenate(feats), labels


def fit_critic(x: np.ndarray, y: np.ndarray, *, seed: int = 0, epochs: int = 200, hidden: int = 256,
               groups: tuple[str, ...] = FEATURE_GROUPS) -> tuple[ArmCritic, float, float]:
    """Regress an MLP on (x, y); returns it and its held-out RMSE and R^2 (last 20 % of a fixed permutation).
    ``x`` holds the features of ``groups``."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(x))
    cut = int(0.8 * len(x))
    train, test = perm[:cut], perm[cut:]
    mean, std = x[train].mean(0), x[train].std(0) + 1e-6
    xs = torch.from_numpy(((x - mean) / std).astype(np.float32))
    ys = torch.from_numpy(y.astype(np.float32))
    torch.manual_seed(seed)
    net = _mlp(x.shape[1], hidden)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-5)
    gen = torch.Generator().manual_seed(seed)
    tr = torch.from_numpy(train)
    for _ in range(epochs):
        for idx in tr[torch.randperm(len(tr), generator=gen)].split(256):
            loss = (net(xs[idx]).squeeze(-1) - ys[idx]).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        pred = net(xs[torch.from_numpy(test)]).squeeze(-1).numpy()
    err = pred - y[test]
    rmse = float(np.sqrt(np.mean(err ** 2)))
    r2 = float(1.0 - np.mean(err ** 2) / max(np.var(y[test]), 1e-12))
    return ArmCritic(net, mean, std, groups), rmse, r2


def fit_expert_critic(make_env: Any, mixture: Any, make_expert: Any, *, num_envs: int = 32, steps: int = 300,
                      every: int = 10, seed: int = 0, epochs: int = 200, progress: bool = False
                      ) -> tuple[ArmCritic, CriticReport]:
    """Collect continuation-labelled states and fit V^e on them (see the module docstring)."""
    t0 = time.perf_counter()
    x, y = collect_labelled_states(make_env, mixture, num_envs=num_envs, steps=steps, every=every, seed=seed,
                                   make_expert=make_expert, progress=progress)
    t1 = time.perf_counter()
    critic, rmse, r2 = fit_critic(x, y, seed=seed, epochs=epochs)
    report = CriticReport(len(y), float(y.mean()), float(y.std()), rmse, r2, t1 - t0, time.perf_counter() - t1)
    logger.info("V^e critic: %d states, labels %.3f +- %.3f, held-out RMSE %.3f (R^2 %.3f)", report.states,
                report.label_mean, report.label_std, rmse, r2)
    return critic, report
