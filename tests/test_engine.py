"""The generic data engine: policy mixture, action perturbation, labels, dropping, shards, resume."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simdist.components.tasks.toy_reach import ToyReachEnv, expert_policy, generate_toy_dataset, suboptimal_policies
from simdist.data import iter_episodes, read_dataset_info
from simdist.data.engine import ActionPerturber, PerturbationConfig, _windows, generate, mc_values
from simdist.envs.base import StepResult

SMALL = PerturbationConfig(min_noise=0.2, max_noise=0.8, noise_window=(2, 6), clean_window=(3, 9))


def episodes(path: Path) -> list:
    return sorted(iter_episodes(path, shuffle_shards=False, split_by_node=False, split_by_worker=False),
                  key=lambda e: e.episode_id)


def test_perturbation_statistics() -> None:
    cfg = PerturbationConfig()
    B, A, T = 400, 3, 3000
    p = ActionPerturber(cfg, B, A, np.random.default_rng(0))
    assert cfg.min_noise <= p.sigma.min() and p.sigma.max() <= cfg.max_noise and p.sigma.shape == (B, A)
    assert abs(p.noised[~p.never].mean() - 0.5) < 0.1
    clean = np.zeros((B, A), np.float32)
    masks, resid = [], []
    for _ in range(T):
        out, noised = p(clean)
        masks.append(noised)
        resid.append(out)
    m, r = np.stack(masks), np.stack(resid)  # (T, B), (T, B, A)
    assert not m[:, p.never].any() and 0 < p.never.sum() < 0.06 * B
    assert np.all(r[~m] == 0)
    assert abs(m.mean() - cfg.expected_noised_fraction()) < 0.015
    assert abs(cfg.expected_noised_fraction() - 0.085) < 0.002  # SIMDIST.md 4.4
    for e in range(0, B, 7):
        on = _windows(m[:, e])[:-1]  # the last window may be cut by the end of the run
        off = _windows(~m[:, e])[:-1]
        assert all(1 <= b - a <= 49 for a, b in on)
        assert all(25 <= b - a <= 499 for a, b in off)
    # noise is N(0, σ²) per env and dim
    e = int(np.argmax(m.sum(0)))
    std = r[m[:, e], e].std(axis=0)
    np.testing.assert_allclose(std, p.sigma[e], rtol=0.35)
    off = ActionPerturber(PerturbationConfig(enabled=False), 8, 2, np.random.default_rng(0))
    assert not any(off(np.ones((8, 2)))[1].any() for _ in range(100))


def test_mc_values() -> None:
    r = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(mc_values(r, 0.5), [2.0 + 0.5 * 3.0, 3.0, 0.0])


def test_mixture_fraction_and_expert_flags(tmp_path: Path) -> None:
    env = ToyReachEnv(32, seed=0, episode_length=6)
    subs = suboptimal_policies()
    s = generate(env, expert_policy(), subs, out_dir=str(tmp_path), steps_per_env=180, expert_prob=0.3,
                 perturbation=SMALL, seed=1, progress=False)
    eps = episodes(tmp_path)
    assert len(eps) == s["episodes"] == 960 and s["dropped"] == 0
    assert sum(len(e) for e in eps) == s["transitions"]
    frac = np.mean([e.meta["expert_policy"] for e in eps])
    assert abs(frac - 0.3) < 0.05 and frac == pytest.approx(s["expert_episode_fraction"])
    names = [e.meta["policy"] for e in eps if not e.meta["expert_policy"]]
    counts = np.array([names.count(p.name) for p in subs])
    assert counts.min() > 0.6 * counts.mean()
    flags = np.concatenate([e.expert for e in eps])
    assert s["expert_fraction"] == pytest.approx(flags.mean())
    assert abs(s["noised_fraction"] - SMALL.expected_noised_fraction()) < 0.05
    for e in eps:
        noised = np.zeros(len(e), bool)
        for a, b in e.meta["noised_windows"]:
            noised[a:b] = True
        np.testing.assert_array_equal(e.expert, e.meta["expert_policy"] & ~noised)
        assert SMALL.min_noise <= min(e.meta["noise_sigma"]) and max(e.meta["noise_sigma"]) <= SMALL.max_noise
        if e.meta["never_noised"]:
            assert not noised.any()
        assert {"mass", "friction", "goal", "seed", "env_id"} <= set(e.meta)


def test_applied_action_recorded_and_labels(tmp_path: Path) -> None:
    env = ToyReachEnv(8, seed=0, episode_length=40)
    expert = expert_policy()
    s = generate(env, expert, [], out_dir=str(tmp_path), steps_per_env=120, expert_prob=1.0,
                 perturbation=SMALL, seed=2, progress=False)
    eps = episodes(tmp_path)
    assert s["episodes"] == len(eps) == 24
    differs = []
    for e in eps:
        clean = expert({"state": e.obs["state"]})
        same = np.all(e.actions == clean, axis=1)
        assert same[e.expert].all()  # expert flag ⇒ the clean expert action was applied
        inside = np.all(np.abs(clean) < 0.99, axis=1)  # clipping cannot hide the noise there
        differs.append(~same[~e.expert & inside])
        assert np.abs(e.actions).max() <= 1.0  # clipped to the action spec
        np.testing.assert_allclose(e.values, mc_values(e.rewards, 0.99), rtol=1e-5, atol=1e-6)
        assert e.commands.shape == (len(e), 0)
        # the recorded rewards are the env's on the applied action (dt-scaled)
        assert np.all(np.abs(e.rewards) < 0.1 * 3.0 + 1e-6)
    differs_all = np.concatenate(differs)
    assert differs_all.size > 20 and differs_all.all()


def test_value_fn_labels(tmp_path: Path) -> None:
    env = ToyReachEnv(4, seed=0, episode_length=10)
    generate(env, expert_policy(), suboptimal_policies(), out_dir=str(tmp_path), steps_per_env=20,
             value_fn=lambda obs, cmd: obs["state"][:, 0] * 10, seed=0, progress=False)
    for e in episodes(tmp_path):
        np.testing.assert_allclose(e.values[:-1], e.obs["state"][1:, 0] * 10, rtol=1e-6)


class DivergingEnv(ToyReachEnv):
    """Env 0 reports divergence at step 5, env 1 returns NaN observations at step 8."""

    def step(self, actions: np.ndarray) -> StepResult:
        res = super().step(actions)
        if self.t[0] == 5:
            res.info["diverged"][0] = True
            res.terminated[0] = True
        if self.t[1] == 8:
            res.obs["state"][1] = np.nan
        return res


def test_diverged_episodes_dropped(tmp_path: Path) -> None:
    env = DivergingEnv(4, seed=0, episode_length=20)
    s = generate(env, expert_policy(), suboptimal_policies(), out_dir=str(tmp_path), steps_per_env=20,
                 perturbation=SMALL, seed=0, progress=False)
    # env 0 diverges every 5 steps (4 episodes), env 1 every 8 steps (2 episodes)
    assert s["dropped"] == 6
    assert read_dataset_info(tmp_path)["dropped_episodes"] == 6
    eps = episodes(tmp_path)
    assert len(eps) == s["episodes"] == 2
    assert all(np.isfinite(e.obs["state"]).all() for e in eps)


def test_resume_counts_dropped_episodes_as_before(tmp_path: Path) -> None:
    """A rerun replays the dropped (diverged) episodes too: they must not count towards the budget, else the
    resumed run stops early and loses the episodes an uninterrupted run writes."""
    kw = dict(perturbation=SMALL, seed=0, progress=False, writer_kwargs={"max_episodes_per_shard": 3})
    full = generate(DivergingEnv(4, seed=0, episode_length=20), expert_policy(), suboptimal_policies(),
                    out_dir=str(tmp_path / "full"), total_transitions=150, **kw)
    # an interrupted run: the same command with a smaller budget left a committed prefix of the dataset
    generate(DivergingEnv(4, seed=0, episode_length=20), expert_policy(), suboptimal_policies(),
             out_dir=str(tmp_path / "resumed"), total_transitions=60, **kw)
    again = generate(DivergingEnv(4, seed=0, episode_length=20), expert_policy(), suboptimal_policies(),
                     out_dir=str(tmp_path / "resumed"), total_transitions=150, **kw)
    assert full["dropped"] > 0 and again["skipped_existing"] > 0
    a, b = episodes(tmp_path / "full"), episodes(tmp_path / "resumed")
    assert [e.episode_id for e in a] == [e.episode_id for e in b]
    for x, y in zip(a, b):
        for k, v in x.arrays().items():
            np.testing.assert_array_equal(v, y.arrays()[k], err_msg=k)
    info_a, info_b = read_dataset_info(tmp_path / "full"), read_dataset_info(tmp_path / "resumed")
    assert info_a["dropped_episode_ids"] == info_b["dropped_episode_ids"]
    assert info_a["stats"] == info_b["stats"]
    keys = ("episodes", "transitions", "dropped", "expert_fraction", "noised_fraction", "steps")
    assert {k: again[k] for k in keys} == {k: full[k] for k in keys}


def test_round_trip_resume_and_budget(tmp_path: Path) -> None:
    out = tmp_path / "toy"
    s1 = generate_toy_dataset(str(out), num_envs=8, transitions=2500, seed=3)
    assert s1["transitions"] >= 2500 and s1["transitions_per_s"] > 0
    info = read_dataset_info(out)
    assert info["num_steps"] == s1["transitions"] and info["metadata"]["generator"]["seed"] == 3
    assert info["spec"]["obs"] == {"state": [4]} and info["spec"]["action_dim"] == 2
    eps = episodes(out)
    assert [e.episode_id for e in eps] == list(range(len(eps)))
    s2 = generate_toy_dataset(str(out), num_envs=8, transitions=2500, seed=3)
    # the rerun writes nothing; its summary still describes the whole dataset
    assert s2["written_episodes"] == 0 and s2["skipped_existing"] == s1["episodes"]
    assert {k: s2[k] for k in ("episodes", "transitions", "expert_fraction", "noised_fraction")} == \
        {k: s1[k] for k in ("episodes", "transitions", "expert_fraction", "noised_fraction")}
    assert read_dataset_info(out)["num_steps"] == s1["transitions"]
    # a larger budget on the same seed continues with new, budget-independent episode ids
    s3 = generate_toy_dataset(str(out), num_envs=8, transitions=4000, seed=3)
    assert s3["skipped_existing"] == s1["episodes"] and s3["written_episodes"] > 0
    assert s3["episodes"] == s1["episodes"] + s3["written_episodes"]
    eps3 = episodes(out)
    assert [e.episode_id for e in eps3] == list(range(len(eps3)))
    for a, b in zip(eps, eps3):
        np.testing.assert_array_equal(a.actions, b.actions)
    with pytest.raises(ValueError):
        generate(ToyReachEnv(2), expert_policy(), [], out_dir=str(tmp_path / "x"), seed=0)


class _ConstantStudent:
    """A stateful stand-in student: constant actions; remembers what the engine told it."""

    name = "constant-student"

    def __init__(self, value: float) -> None:
        self.value, self.calls, self.recorded, self.resets = value, 0, [], []

    def __call__(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        self.calls += 1
        return np.full((len(obs["state"]), 2), self.value, np.float32)

    def record(self, applied: np.ndarray) -> None:
        self.recorded.append(np.array(applied))

    def reset(self, ids: np.ndarray) -> None:
        self.resets.append(np.array(ids))


class _RowStudent(_ConstantStudent):
    """The same, planning only for the envs the engine asks for (as ``PlannerPolicy`` with a policy head)."""

    plans_rows = True

    def __init__(self, value: float) -> None:
        super().__init__(value)
        self.rows_planned = 0

    def __call__(self, obs: dict[str, np.ndarray], rows: np.ndarray | None = None) -> np.ndarray:
        actions = super().__call__(obs)
        self.rows_planned += int(np.sum(rows))
        return actions[rows]


@pytest.mark.parametrize("student_type", [_ConstantStudent, _RowStudent])
def test_student_takeover_windows(tmp_path: Path, student_type: type) -> None:
    from simdist.data.engine import TakeoverConfig

    env = ToyReachEnv(16, seed=0, episode_length=30)
    expert, student = expert_policy(), student_type(0.37)
    takeover = TakeoverConfig(student_window=(3, 8), expert_window=(4, 12))
    s = generate(env, expert, suboptimal_policies(), out_dir=str(tmp_path), steps_per_env=300, expert_prob=0.6,
                 perturbation=SMALL, seed=4, progress=False, student=student, takeover=takeover)
    eps = episodes(tmp_path)
    assert student.calls == len(student.recorded) == 300  # called and told the applied actions every step
    assert sum(len(r) for r in student.resets) >= 16 + len(eps)  # every episode start (and the first)
    took_steps = 0
    for e in eps:
        by_student = np.all(e.actions == np.float32(0.37), axis=1)
        noised = np.zeros(len(e), bool)
        for a, b in e.meta["noised_windows"]:
            noised[a:b] = True
        if not e.meta["expert_policy"]:
            assert not by_student.any()  # the student only takes over expert-driven envs
            continue
        took_steps += int(by_student.sum())
        assert not (e.expert & by_student).any() and not (noised & by_student).any()
        clean = expert({"state": e.obs["state"]})
        assert np.all(e.actions[e.expert] == clean[e.expert])  # labels stay the expert's clean actions
        np.testing.assert_array_equal(e.expert, ~noised & ~by_student)
    assert took_steps > 0
    expected = 0.6 * takeover.expected_student_fraction()
    assert abs(s["student_fraction"] - expected) < 0.08
    assert read_dataset_info(tmp_path)["metadata"]["generator"]["student"]["name"] == "constant-student"
    if student_type is _RowStudent:  # asked only for the envs it drove
        assert student.rows_planned == round(s["student_fraction"] * 16 * 300)


def test_expert_only_data_has_only_clean_expert_steps(tmp_path: Path) -> None:
    """Table I's expert-only switch (``simdist generate --expert-only``): the same budget, every step the
    expert's and unperturbed."""
    from simdist.tools import generate as generate_tool

    out = tmp_path / "expert-only"
    assert generate_tool.main(["--task", "toy-reach", "--envs", "4", "--transitions", "600", "--expert-only",
                               "--out", str(out), "--no-progress", "--json"]) == 0
    episodes = list(iter_episodes(out, shuffle_shards=False))
    assert sum(len(ep) for ep in episodes) >= 600
    assert all(ep.expert.all() and ep.meta["expert_policy"] and ep.meta["noised_fraction"] == 0.0 for ep in episodes)
    assert read_dataset_info(out)["metadata"]["generator"]["expert_only"] is True


def test_push_perturbation_holds_one_offset_per_window() -> None:
    cfg = PerturbationConfig.push()
    assert cfg.hold and cfg.noise_window == (3, 11)
    p = ActionPerturber(cfg, 64, 3, np.random.default_rng(1))
    outs, masks = zip(*(p(np.zeros((64, 3), np.float32)) for _ in range(200)))
    out, m = np.stack(outs), np.stack(masks)  # (T, B, A), (T, B)
    assert np.all(out[~m] == 0) and m.any()
    windows = [(e, a, b) for e in range(64) for a, b in _windows(m[:, e])[:-1]]
    assert windows and all(3 <= b - a <= 10 for _, a, b in windows)
    for e, a, b in windows:  # one offset over the window, a fresh one the next
        np.testing.assert_array_equal(out[a:b, e], np.broadcast_to(out[a, e], (b - a, 3)))
    firsts = np.stack([out[a, e] for e, a, _ in windows])
    assert len(np.unique(firsts.round(6), axis=0)) == len(firsts)
    fresh = ActionPerturber(PerturbationConfig.manipulation(), 64, 3, np.random.default_rng(1))
    f = np.stack([fresh(np.zeros((64, 3), np.float32))[0] for _ in range(200)])
    e = int(np.argmax((f != 0).any(-1).sum(0)))
    assert len(np.unique(f[(f[:, e] != 0).any(-1), e].round(6), axis=0)) > 1  # per-step noise is not held
