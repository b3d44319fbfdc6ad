"""Small models and synthetic datasets shared by the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from simdist.model.config import WorldModelConfig


def tiny_config(**overrides: Any) -> WorldModelConfig:
    """A transformer world model small enough to train in seconds (state 4, action 2, command 1)."""
    cfg = dict(
        obs_spec={"state": [4]},
        action_dim=2,
        command_dim=1,
        history=4,
        horizon=3,
        latent_dim=16,
        encoder={"name": "mlp", "kwargs": {"hidden": [32]}},
        dynamics={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 2}},
        reward_head={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 2}},
        value_head={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 2}},
        policy_head={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 2}},
    )
    cfg.update(overrides)
    return WorldModelConfig(**cfg)


def toy_history(wm: Any, batch: int, seed: int = 1) -> Any:
    """A toy world model's observation history of ``batch`` envs: a random reset and three random steps."""
    from simdist.planning import ObservationHistory

    g = torch.Generator().manual_seed(seed)
    hist = ObservationHistory.for_model(wm, batch)
    hist.reset({"state": torch.randn(batch, 4, generator=g)})
    for _ in range(3):
        hist.push({"state": torch.randn(batch, 4, generator=g)}, torch.rand(batch, 2, generator=g) * 2 - 1)
    return hist


def random_batch(cfg: WorldModelConfig, batch: int = 3, seed: int = 0) -> dict[str, Any]:
    """A window batch with the shapes ``WorldModel.predict`` and the loss expect."""
    g = torch.Generator().manual_seed(seed)
    h, t, a, c = cfg.history, cfg.horizon, cfg.action_dim, cfg.command_dim

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g)

    return {
        "obs_hist": {k: r(batch, h + 1, *s) for k, s in cfg.obs_spec.items()},
        "act_hist": r(batch, h, a),
        "fut_acts": r(batch, t, a),
        "fut_cmds": r(batch, t + 1, c),
        "fut_obs": {k: r(batch, t, *s) for k, s in cfg.obs_spec.items()},
        "rewards": r(batch, t),
        "values": r(batch, t),
        "expert": (torch.rand(batch, t, generator=g) > 0.3).float(),
    }


def write_linear_dataset(
    out: Path, episodes: int = 12, length: int = 40, seed: int = 0, gain: float = 1.0
) -> Path:
    """Shards of a noisy linear system x' = A x + gain·B a, with reward −‖x‖² and MC values."""
    from simdist.data import DatasetSpec, Episode, EpisodeWriter

    rng = np.random.default_rng(seed)
    a_mat = np.array([[1, 0, 0.1, 0], [0, 1, 0, 0.1], [0, 0, 0.9, 0], [0, 0, 0, 0.9]], dtype=np.float32)
    b_mat = np.array([[0, 0], [0, 0], [0.1, 0], [0, 0.1]], dtype=np.float32) * gain
    spec = DatasetSpec(obs={"state": (4,)}, action_dim=2, command_dim=1)
    with EpisodeWriter(out, spec, max_episodes_per_shard=4) as writer:
        for ep_id in range(episodes):
            x = rng.normal(size=4).astype(np.float32)
            xs, acts, rews = [], [], []
            for _ in range(length):
                a = np.clip(-x[:2] - x[2:] + 0.3 * rng.normal(size=2), -2, 2).astype(np.float32)
                xs.append(x)
                acts.append(a)
                rews.append(-0.02 * float(x @ x))
                x = (a_mat @ x + b_mat @ a + 0.01 * rng.normal(size=4)).astype(np.float32)
            rews_arr = np.asarray(rews, dtype=np.float32)
            values = np.array([np.sum(rews_arr[i + 1:] * 0.99 ** np.arange(length - i - 1)) for i in range(length)])
            writer.write(Episode(
                obs={"state": np.stack(xs)}, actions=np.stack(acts),
                commands=np.full((length, 1), 0.5, np.float32), rewards=rews_arr, values=values,
                expert=rng.random(length) > 0.2, episode_id=ep_id, meta={"source": "test"},
            ))
    return out


def episodes_of(folder: str | Path) -> list:
    """Every episode of a dataset folder, in shard order."""
    from simdist.data import iter_episodes

    return list(iter_episodes(str(folder), shuffle_shards=False, split_by_node=False, split_by_worker=False))


def toy_world_model(data: str | Path) -> Any:
    """The toy preset's world model (freshly initialised) with the normaliser statistics of the dataset ``data``."""
    from simdist import WorldModel
    from simdist.data import load_stats

    model = WorldModel.from_preset("toy")
    model.normalizer.set_stats(load_stats(str(data)).to_dict())
    return model


def untrained_agents(world_model: Any) -> dict[str, Any]:
    """One small, untrained but acting agent of every built-in agent type, on ``world_model`` (a world model
    whose normaliser was fitted, e.g. :func:`toy_world_model`): the SimDist planners with a tiny MPPI budget,
    the BC policy, the latent baselines started from it, and a Diffusion Policy with the action range [-1, 1]."""
    from simdist.components.agents.bc import BCAgent, BCPolicy
    from simdist.components.agents.diffusion_policy import DiffusionPolicyAgent
    from simdist.components.agents.iql import IQLAgent
    from simdist.components.agents.rlpd import RLPDAgent
    from simdist.components.agents.sgft import SGFTAgent
    from simdist.components.agents.simdist import SimDistAgent, SimDistAgentConfig
    from simdist.components.agents.simdist.bc import SimDistBCAgent

    torch.manual_seed(0)
    planner = SimDistAgentConfig(settings={"num_samples": 16, "num_policy_samples": 2, "num_elites": 4,
                                                 "iterations": 1})
    simdist = SimDistAgent(world_model.eval(), planner, source="toy")
    policy = BCPolicy.from_world_model(world_model, hidden=[32, 32])
    latent = {"batch_size": 32, "hidden": [32, 32]}
    dp = DiffusionPolicyAgent.from_world_model(world_model, down_dims=[16, 32, 64], step_embed_dim=32)
    a = world_model.config.action_dim
    dp.model.set_action_range([-1.0] * a, [1.0] * a)
    return {"simdist": simdist, "simdist_bc": SimDistBCAgent.from_simdist(simdist), "bc": BCAgent(policy),
            "iql": IQLAgent.from_bc(policy, **latent),
            "rlpd": RLPDAgent.from_bc(policy, utd=2, num_critics=3, **latent),
            "sgft": SGFTAgent.from_bc(policy, utd=2, num_critics=3, **latent), "diffusion_policy": dp}


def json_differences(got: Any, expected: Any, rel: float, where: str = "") -> list[str]:
    """Where two JSON trees differ: structure, text and integers exactly, floats to within ``rel`` (recorded
    numbers from closed-loop physics: another CPU's vector instructions round differently, and the dynamics
    carry the difference on)."""
    if isinstance(expected, dict) and isinstance(got, dict):
        if set(got) != set(expected):
            return [f"{where or '.'}: keys {sorted(set(got) ^ set(expected))} differ"]
        return [d for k in expected for d in json_differences(got[k], expected[k], rel, f"{where}.{k}")]
    if isinstance(expected, list) and isinstance(got, list):
        if len(got) != len(expected):
            return [f"{where}: {len(got)} items, expected {len(expected)}"]
        return [d for i, (g, e) in enumerate(zip(got, expected)) for d in json_differences(g, e, rel, f"{where}[{i}]")]
    if isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        close = abs(got - expected) <= rel * max(abs(expected), abs(got)) or got == expected
        return [] if close else [f"{where}: {got!r}, expected {expected!r}"]
    return [] if got == expected and type(got) is type(expected) else [f"{where}: {got!r}, expected {expected!r}"]
