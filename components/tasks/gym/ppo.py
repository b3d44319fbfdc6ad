"""PPO experts for ``gym:ID`` tasks with rsl-rl-lib's ``OnPolicyRunner`` (the ``rl`` extra).

:class:`GymVecEnv` adapts :class:`~.env.GymBatchedEnv` to rsl-rl's ``VecEnv``: one observation group ``policy``
(the env's vector, read by actor and critic), finished envs reset inside ``step`` as rsl-rl expects, and
``extras["time_outs"]`` set on truncations only, so PPO bootstraps on time limits and not on terminations.
:func:`train` resumes from the newest ``model_<it>.pt`` of ``log_dir``; checkpoints every ``save_interval``
iterations are the sub-optimal ladder :func:`simdist.experts.export_expert_set` picks from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from rsl_rl.env import VecEnv
from rsl_rl.runners import OnPolicyRunner
from tensordict import TensorDict

from simdist.components.tasks.gym.env import OBS_KEY, GymBatchedEnv
from simdist.experts import resume_and_learn


class GymVecEnv(VecEnv):
    """rsl-rl ``VecEnv`` view of a :class:`GymBatchedEnv` (CPU tensors)."""

    def __init__(self, env: GymBatchedEnv, seed: int) -> None:
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.action_dim
        self.max_episode_length = int(env.max_episode_steps or 1000)
        self.device = "cpu"
        self.cfg = {"env": env.spec, "num_envs": env.num_envs}
        self._obs = env.reset(seed=seed)[OBS_KEY]
        self.episode_length_buf = torch.zeros(self.num_envs, dtype=torch.long)

    def _pack(self, obs: np.ndarray) -> TensorDict:
        return TensorDict({"policy": torch.from_numpy(obs.copy())}, batch_size=[self.num_envs])

    def get_observations(self) -> TensorDict:
        return self._pack(self._obs)

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        r = self.env.step(actions.detach().cpu().numpy())
        done = r.terminated | r.truncated
        self.episode_length_buf += 1
        self._obs = r.obs[OBS_KEY]
        log = {"/termination_rate": float(r.terminated.mean())}
        if done.any():
            ids = np.flatnonzero(done)
            self._obs = self.env.reset(ids=ids)[OBS_KEY]
            self.episode_length_buf[torch.from_numpy(ids)] = 0
        extras = {"time_outs": torch.from_numpy(r.truncated.copy()), "log": log}
        return (self._pack(self._obs), torch.from_numpy(r.reward.copy()),
                torch.from_numpy(done.astype(np.int64)), extras)


def ppo_config(hidden: tuple[int, ...] = (256, 256), num_steps_per_env: int = 64, save_interval: int = 25,
               learning_rate: float = 3e-4, init_std: float = 0.5) -> dict[str, Any]:
    """rsl-rl-lib 5 runner config for MuJoCo locomotion benchmarks (observation normalisation on)."""
    model = {"class_name": "MLPModel", "hidden_dims": list(hidden), "activation": "elu", "obs_normalization": True}
    return {
        "num_steps_per_env": num_steps_per_env,
        "save_interval": save_interval,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {**model, "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": init_std}},
        "critic": dict(model),
        "algorithm": {
            "class_name": "PPO", "clip_param": 0.2, "entropy_coef": 0.0, "value_loss_coef": 1.0,
            "use_clipped_value_loss": True, "num_learning_epochs": 10, "num_mini_batches": 8,
            "learning_rate": learning_rate, "schedule": "adaptive", "desired_kl": 0.01, "gamma": 0.99, "lam": 0.95,
            "max_grad_norm": 1.0,
        },
        "logger": "tensorboard",
        "check_for_nan": True,
    }


def train(spec: str, log_dir: str | Path, iterations: int, num_envs: int = 16, seed: int = 42, profile: Any = None,
          cfg: dict[str, Any] | None = None) -> OnPolicyRunner:
    """Train (or resume) PPO on Gymnasium env ``spec`` (on ``profile``, a :class:`~.profiles.GymProfile` or None)
    until ``iterations`` iterations exist in ``log_dir``."""
    torch.manual_seed(seed)
    env = GymVecEnv(GymBatchedEnv(spec, num_envs, seed=seed, profile=profile), seed)
    runner = OnPolicyRunner(env, cfg or ppo_config(), log_dir=str(log_dir), device="cpu")
    return resume_and_learn(runner, log_dir, iterations)
