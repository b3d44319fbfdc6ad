"""Closed-loop rollouts: policies and planners, episode logging, exploration noise."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from simdist import WorldModel, create
from simdist.components.tasks.toy_reach import ToyReachEnv, expert_policy
from simdist.data import DatasetSpec
from simdist.data.engine import PerturbationConfig
from simdist.model.presets import preset_config
from simdist.workflows.rollout import rollout


def test_policy_rollout_logs_episodes_in_the_schema() -> None:
    env = ToyReachEnv(3, seed=0, episode_length=12)
    spec = DatasetSpec.from_env(env)
    result = rollout(env, expert_policy(), episodes=5, seed=0, record_spec=spec, meta={"source": "real"})
    assert len(result.returns) == len(result.episodes) == 5
    assert result.lengths.tolist() == [12] * 5 and not result.terminated.any()
    for ep, ret in zip(result.episodes, result.returns):
        ep.validate(spec)
        assert ep.meta["source"] == "real" and not ep.expert.any()
        np.testing.assert_allclose(ep.rewards.sum(), ret, rtol=1e-5)
    assert len({ep.episode_id for ep in result.episodes}) == 5


def test_perturbation_changes_and_records_the_applied_actions() -> None:
    env = ToyReachEnv(4, seed=0, episode_length=20)
    spec = DatasetSpec.from_env(env)
    noise = PerturbationConfig(min_noise=0.5, max_noise=0.5, noise_window=(1, 2), clean_window=(1, 2),
                               never_noise_prob=0.0)
    clean = rollout(env, expert_policy(), episodes=4, seed=1, record_spec=spec)
    noisy = rollout(env, expert_policy(), episodes=4, seed=1, record_spec=spec, perturbation=noise)
    a_clean = np.concatenate([e.actions for e in clean.episodes])
    a_noisy = np.concatenate([e.actions for e in noisy.episodes])
    assert np.abs(a_noisy).max() <= 1.0  # clipped to the action spec
    assert not np.allclose(a_clean, a_noisy)
    # the recorded action is what the policy would do on the logged state plus noise, never the clean one
    ep = noisy.episodes[0]
    policy_actions = expert_policy()({"state": ep.obs["state"]})
    assert (np.abs(ep.actions - policy_actions).max(axis=1) > 1e-6).mean() > 0.2


def test_planner_rollout_resets_history_between_episodes() -> None:
    torch.manual_seed(0)
    wm = WorldModel(preset_config("toy")).eval()
    planner = create("planner", "mppi", world_model=wm, num_samples=8, iterations=1, num_elites=2)
    env = ToyReachEnv(2, seed=0, episode_length=5)
    result = rollout(env, planner, episodes=4, seed=0)
    assert len(result.returns) == 4 and np.isfinite(result.returns).all()


def test_rollout_obeys_the_envs_standing_phase_and_restarts_the_plan_when_walking_starts() -> None:
    from simdist.components.tasks.go2 import Go2Task
    from simdist.components.tasks.go2.data import go2_dataset_spec

    env = Go2Task(profile="ptfe-slope-5.7deg", episode_length_s=0.8).make_env(2, seed=0)

    class Constant:
        def __init__(self) -> None:
            self.resets: list[list[int]] = []

        def __call__(self, obs):
            return np.full((2, 12), 0.2, np.float32)

        def reset(self, ids=None) -> None:
            self.resets.append(sorted(int(i) for i in ids))

    policy = Constant()
    result = rollout(env, policy, episodes=2, seed=0, record_spec=go2_dataset_spec())
    assert policy.resets == [[0, 1]]  # once, when the 25 standing steps end
    for ep in result.episodes:
        assert len(ep) == 40 and np.all(ep.actions[:25] == 0)  # the protocol's reset phase
        np.testing.assert_allclose(ep.actions[25:], 0.2)
        np.testing.assert_allclose(ep.commands[:25], 0.0)


def test_go2_logged_episode_succeeds_when_it_reaches_the_course_end_even_if_it_falls_later() -> None:
    from simdist.components.tasks.go2 import Go2Task
    from simdist.workflows.rollout import RolloutResult

    task = Go2Task(profile="foam")  # a 3.00 m course
    result = RolloutResult(returns=np.zeros(3), lengths=np.full(3, 10), terminated=np.array([True, True, False]),
                           final_info=[{"best_progress": np.float32(3.0)}, {"best_progress": np.float32(2.9)},
                                       {"best_progress": np.float32(0.5)}])
    assert task.success(result).tolist() == [True, False, True]
    env = task.make_env(2, seed=0)
    env.reset(seed=0)
    best = []
    for _ in range(30):
        best.append(env.step(np.zeros((2, 12), np.float32)).info["best_progress"].copy())
    best = np.array(best)
    assert (np.diff(best, axis=0) >= 0).all() and (best <= 3.0).all()
    env.reset(ids=np.array([0]))
    assert env.best_progress[0] == 0.0


def test_go2_collection_env_ends_an_episode_at_the_course_end() -> None:
    from simdist.components.tasks.go2 import Go2Env, Go2Task

    env = Go2Task(profile="foam").make_env(2, seed=0)
    env.reset(seed=0)
    assert not env.step(np.zeros((2, 12), np.float32)).truncated.any()
    env.best_progress[0] = 3.0  # as if env 0 had walked the 3 m course
    res = env.step(np.zeros((2, 12), np.float32))
    assert res.truncated.tolist() == [True, False] and not res.terminated[0]
    with pytest.raises(ValueError, match="end_at_course_end"):
        Go2Env(1, end_at_course_end=True)


def test_rollout_counts_the_first_episodes_to_start_not_the_first_to_finish() -> None:
    """One env's pole falls at once, the other's later: the two counted episodes are each env's first (one short,
    one long), where counting the first two to finish would take two short ones of the fast env."""
    from simdist import make_task

    env = make_task("gym:InvertedPendulum-v5").make_env(2, seed=0)

    def push_env0(obs: dict) -> np.ndarray:
        return np.array([[3.0], [0.0]], np.float32)  # env 0 is pushed over, env 1 is left alone

    result = rollout(env, push_env0, episodes=2, seed=0)
    first = rollout(env, push_env0, episodes=4, seed=0)
    assert result.lengths[0] < result.lengths[1]  # start order: env 0's episode, then env 1's
    assert result.lengths.tolist() == first.lengths[:2].tolist()  # the same two episodes, however many follow
