"""The toy's "final critic": V^expert(s) fitted by regression on the PD expert's discounted returns.

SimDist labels values with the expert's critic (V of the expert, whoever generated the data); the
toy has no RL run, so its critic is fitted the same way a critic is: rollouts of the expert from
diverse states (random positions and velocities, the simulator's randomisation), discounted
returns-to-go as targets (episodes long enough that the truncation bias is below 1 %), and a small
MLP regressed on them.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from simdist.components.tasks.toy_reach.expert import expert_policy
from simdist.components.tasks.toy_reach.pointmass import START_RADIUS, ToyReachEnv


class ExpertCritic:
    """``value_fn(obs, commands) -> (B,)`` for the data engine: V^expert on the post-step state."""

    def __init__(self, net: nn.Module, mean: np.ndarray, std: np.ndarray) -> None:
        self.net, self.mean, self.std = net.eval(), mean.astype(np.float32), std.astype(np.float32)

    def __call__(self, obs: dict[str, np.ndarray], commands: np.ndarray | None = None) -> np.ndarray:
        x = (np.asarray(obs["state"], np.float32) - self.mean) / self.std
        with torch.no_grad():
            return self.net(torch.from_numpy(x)).squeeze(-1).numpy()


def expert_returns(num_envs: int = 48, rounds: int = 2, label_steps: int = 60, tail_steps: int = 400,
                   gamma: float = 0.99, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """States and the expert's discounted returns-to-go from them (γ^tail < 1 % truncation bias)."""
    rng = np.random.default_rng(seed)
    length = label_steps + tail_steps
    states, targets = [], []
    for r in range(rounds):
        env = ToyReachEnv(num_envs, variant="sim", seed=seed + r, episode_length=length + 1)
        obs = env.reset(seed=seed + r)
        vel = rng.uniform(-1.5, 1.5, size=(num_envs, 2))
        pos = env.positions + rng.uniform(-0.3, 0.3, size=(num_envs, 2))
        obs = env.set_state(np.clip(pos, -START_RADIUS, START_RADIUS), vel)
        policy = expert_policy()
        rows, rewards, alive = [], [], np.ones(num_envs, bool)
        for _ in range(length):
            rows.append(obs["state"].copy())
            step = env.step(policy(obs))
            rewards.append(np.where(alive, step.reward, 0.0))
            alive &= ~step.terminated
            obs = step.obs
        env.close()
        rew = np.stack(rewards)  # (length, B)
        ret = np.zeros_like(rew)
        acc = np.zeros(num_envs)
        for t in range(length - 1, -1, -1):
            acc = rew[t] + gamma * acc
            ret[t] = acc
        states.append(np.stack(rows[:label_steps]).reshape(-1, 4))
        targets.append(ret[:label_steps].reshape(-1))
    return np.concatenate(states), np.concatenate(targets).astype(np.float32)


def fit_expert_critic(seed: int = 0, epochs: int = 300, hidden: int = 64) -> ExpertCritic:
    """Fit V^expert (a 4→64→64→1 MLP) on :func:`expert_returns`; takes a few seconds on a CPU."""
    states, targets = expert_returns(seed=seed)
    mean, std = states.mean(0), states.std(0) + 1e-6
    x = torch.from_numpy((states - mean) / std)
    y = torch.from_numpy(targets)
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(4, hidden), nn.ELU(), nn.Linear(hidden, hidden), nn.ELU(), nn.Linear(hidden, 1))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for idx in torch.randperm(len(x), generator=gen).split(2048):
            loss = (net(x[idx]).squeeze(-1) - y[idx]).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return ExpertCritic(net, mean, std)
