"""UR5e data engine: the mixture and noise statistics, state cloning, expert-continuation values, a tiny dataset."""

from __future__ import annotations

import numpy as np
import pytest

from simdist.components.tasks.ur5e.assembly import PegAssembly
from simdist.components.tasks.ur5e.data import PolicyMixture, generate_ur5e
from simdist.components.tasks.ur5e.env import ArmEnvConfig, UR5eEnv
from simdist.components.tasks.ur5e.expert import make_expert, suboptimal_experts
from simdist.components.tasks.ur5e.value import continuation_returns, restore, snapshot
from simdist.data.engine import ActionPerturber, PerturbationConfig
from simdist.data.shards import iter_episodes
from simdist.tasks import make_task


def test_manipulation_noise_windows_and_sigma():
    cfg = PerturbationConfig.manipulation()
    rng = np.random.default_rng(0)
    pert = ActionPerturber(cfg, 400, 7, rng)
    assert (pert.sigma >= 0.05).all() and (pert.sigma <= 1.0).all()
    noised = np.stack([pert(np.zeros((400, 7), np.float32))[1] for _ in range(600)])  # (T, B)
    assert noised.mean() == pytest.approx(cfg.expected_noised_fraction(), abs=0.02)
    assert cfg.expected_noised_fraction() == pytest.approx(0.975 * 3 / (3 + 7.5))  # means of U[1,5], U[5,10]
    never = ~noised.any(0)
    assert never.mean() == pytest.approx(0.025, abs=0.02)
    # window lengths: noised runs of 1..5 steps, clean runs of 5..10 (inside the series)
    runs = {True: [], False: []}
    for e in np.flatnonzero(~never)[:50]:
        series = noised[:, e]
        edges = np.flatnonzero(np.diff(series.astype(int))) + 1
        for a, b in zip(edges[:-1], edges[1:]):
            runs[bool(series[a])].append(b - a)
    assert min(runs[True]) >= 1 and max(runs[True]) <= 5
    assert min(runs[False]) >= 5 and max(runs[False]) <= 10


def test_mixture_draws_the_expert_half_the_time():
    asm = PegAssembly()
    mix = PolicyMixture(make_expert(asm), suboptimal_experts(asm), 4000, 7, seed=0)
    assert (mix.assign == 0).mean() == pytest.approx(0.5, abs=0.03)
    counts = np.bincount(mix.assign[mix.assign > 0], minlength=11)[1:]
    assert (counts > 100).all()  # every degraded variant is drawn


def test_a_cloned_state_evolves_as_the_original():
    a = UR5eEnv(PegAssembly(), 3, ArmEnvConfig(), seed=1)
    b = UR5eEnv(PegAssembly(), 3, ArmEnvConfig(), seed=7)
    expert = make_expert(a.assembly)
    obs = a.reset(seed=1)
    b.reset(seed=7)
    for _ in range(12):
        obs = a.step(expert(obs)).obs
    restore(b, snapshot(a, np.arange(3)), np.arange(3))
    np.testing.assert_allclose(b.observations["object"], a.observations["object"], atol=1e-6)
    actions = np.tile(np.array([0.3, -0.2, -0.5, 0.0, 0.0, 0.1, 1.0], np.float32), (3, 1))
    for _ in range(3):
        sa, sb = a.step(actions), b.step(actions)
    np.testing.assert_allclose(sb.obs["proprio"], sa.obs["proprio"], atol=1e-4)
    np.testing.assert_allclose(sb.reward, sa.reward, atol=1e-4)
    a.close()
    b.close()


def test_expert_continuations_value_a_nearly_inserted_peg_above_a_fresh_start():
    def make_env(n, seed):
        return UR5eEnv(PegAssembly(), n, ArmEnvConfig(reset_mix=(1, 0, 0, 1)), seed=seed)

    env = make_env(8, 0)
    env.reset(seed=0)
    snap = snapshot(env, np.arange(8))
    kinds = env.reset_kind.copy()
    env.close()
    values = continuation_returns(make_env, lambda: make_expert(PegAssembly()), snap, batch=8)
    assert np.isfinite(values).all()
    assert values[kinds == 3].min() > values[kinds == 0].max()


def test_a_tiny_dataset_has_the_mixture_values_and_the_critic_report(tmp_path):
    task = make_task("ur5e-peg", profile=None)
    out = tmp_path / "data"
    summary = generate_ur5e(task, str(out), num_envs=8, transitions=900, seed=0, progress=False, critic_envs=8,
                            critic_steps=20, critic_epochs=5)
    assert summary["trajectories"] == summary["episodes"] >= 4
    assert 0.05 < summary["expert_fraction"] < 0.8 and summary["noised_fraction"] > 0.1
    assert (out / "critic.safetensors").is_file() and summary["critic"]["states"] > 0
    episodes = list(iter_episodes(str(out), shuffle_shards=False))
    assert {"proprio", "object", "privileged", "physics"} <= set(episodes[0].obs)
    assert all(np.isfinite(ep.values).all() for ep in episodes)
    assert any(ep.expert.any() for ep in episodes) and not all(ep.expert.all() for ep in episodes)
    again = generate_ur5e(task, str(out), num_envs=8, transitions=900, seed=0, progress=False, critic_envs=8,
                          critic_steps=20, critic_epochs=5)
    assert again["written_episodes"] == 0 and again["critic"] == summary["critic"]  # resumed, same critic


def test_two_workers_share_the_parts_and_the_critic(tmp_path):
    task = make_task("ur5e-peg", profile=None)
    out = tmp_path / "data"
    kwargs = dict(num_envs=8, transitions=900, seed=0, progress=False, critic_envs=8, critic_steps=20,
                  critic_epochs=5, parts=2, world=2)
    first = generate_ur5e(task, str(out), rank=1, **kwargs)  # the second worker starts first: it fits the critic
    assert first["parts_done"] == 1 and first["worker"] == {"rank": 1, "world": 2, "parts": [1]}
    second = generate_ur5e(task, str(out), rank=0, **kwargs)
    assert second["parts_done"] == 2 and second["critic"] == first["critic"]  # loaded, not refitted
    ids = [ep.episode_id for ep in iter_episodes(str(out), shuffle_shards=False)]
    assert len(ids) == len(set(ids)) == second["episodes"]
    part_ids = [[ep.episode_id for ep in iter_episodes(str(out / f"part-{k:04d}"), shuffle_shards=False)]
                 for k in range(2)]
    assert max(part_ids[0]) < 457 <= min(part_ids[1])  # part 1's ids start after part 0's: budget + envs - 1


def test_a_critic_fitted_under_other_contacts_is_refused(tmp_path):
    import json

    from simdist.components.tasks.ur5e.data import CRITIC_REPORT, CRITIC_WEIGHTS, load_or_fit_critic
    from simdist.tasks import TaskError

    (tmp_path / CRITIC_WEIGHTS).write_bytes(b"")
    (tmp_path / CRITIC_REPORT).write_text(json.dumps({"states": 1}))  # from before the option: noslip
    with pytest.raises(TaskError, match="fitted with --contacts noslip, not fast"):
        load_or_fit_critic(make_task("ur5e-peg", profile=None, contacts="fast"), tmp_path, seed=0, num_envs=1,
                           steps=1)
