"""Gymnasium both ways: any Gymnasium env as a ``gym:ID`` task (batched, seeded, profiled, refused when its
spaces do not fit), and every simdist task as a Gymnasium env that Gymnasium's own ``check_env`` accepts."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from simdist import make_task
from simdist.data.engine import PerturbationConfig, generate
from simdist.data.shards import iter_episodes
from simdist.errors import InputError
from simdist.profiles import ProfileError
from simdist.tasks import TaskError, task_names


def test_gym_id_builds_a_registered_task_with_a_preset_from_its_spaces() -> None:
    from simdist import WorldModel
    from simdist.components.tasks.gym import GymTask

    task = make_task("gym:Pendulum-v1")
    assert isinstance(task, GymTask) and task.task_name == "gym:Pendulum-v1" and task.env_id == "Pendulum-v1"
    assert task.dt == pytest.approx(0.05)
    spec = task.dataset_spec()
    assert spec.obs == {"state": (3,)} and spec.action_dim == 1 and spec.command_dim == 0
    model = WorldModel.from_preset("gym:Pendulum-v1")
    assert model.config.obs_spec == {"state": [3]} and model.config.action_dim == 1
    assert model.config.encoder.name == "mlp" and model.config.dynamics.name == "mlp"
    assert WorldModel.from_preset("gym:Pendulum-v1+transformer").config.dynamics.name == "transformer"
    env = task.make_env(2, seed=0)
    try:
        assert env.action_spec.low == -1.0 and env.action_spec.high == 1.0  # Pendulum's [-2, 2] rescaled
    finally:
        env.close()


def test_entry_point_and_unknown_id() -> None:
    task = make_task("gym:gymnasium.envs.classic_control.pendulum:PendulumEnv")
    assert task.dataset_spec().obs == {"state": (3,)}
    with pytest.raises(InputError, match="No-Such-Env-v0"):
        make_task("gym:No-Such-Env-v0")
    with pytest.raises(TaskError, match="gym:ID"):  # an unknown plain name lists the family
        make_task("no-such-task")


def test_seeding_follows_gymnasium() -> None:
    """``reset(seed=s)`` seeds env i with s + i, as Gymnasium's vector API; equal seeds replay equally."""
    task = make_task("gym:InvertedPendulum-v5")
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (20, 3, 1)).astype(np.float32)

    def run(seed: int) -> np.ndarray:
        env = task.make_env(3, seed=seed)
        try:
            obs = [env.reset(seed=seed)["state"]]
            for a in actions:
                r = env.step(a)
                obs.append(r.obs["state"])
                done = np.flatnonzero(r.terminated | r.truncated)
                if len(done):  # the finished envs only, as the data engine and rollouts do
                    obs.append(env.reset(ids=done)["state"])
            return np.stack(obs)
        finally:
            env.close()

    a, b, c = run(7), run(7), run(8)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a[0], c[0])
    single = gymnasium.make("InvertedPendulum-v5")
    np.testing.assert_allclose(a[0, 1], single.reset(seed=8)[0], rtol=1e-6)  # env 1 of seed 7 is seed 8
    single.close()


def test_terminations_and_truncations_stay_apart(tmp_path) -> None:
    """InvertedPendulum's pole falls (terminated, value 0); Pendulum only times out (truncated, value bootstrapped)."""
    for env_id, ended in (("InvertedPendulum-v5", "terminated"), ("Pendulum-v1", "truncated")):
        env = make_task(f"gym:{env_id}").make_env(2, seed=0, real=False)
        try:
            generate(env, lambda obs: np.ones((2, 1), np.float32), [], out_dir=str(tmp_path / env_id),
                     total_transitions=300 if ended == "truncated" else 50, expert_prob=1.0,
                     perturbation=PerturbationConfig(enabled=False), value_fn=lambda obs, c: np.full(2, 5.0),
                     seed=0, progress=False, absorbing_terminations=True)
        finally:
            env.close()
        episodes = list(iter_episodes(str(tmp_path / env_id), shuffle_shards=False))
        assert episodes
        for ep in episodes:
            assert ep.meta[ended] and not ep.meta["terminated" if ended == "truncated" else "truncated"]
            assert ep.values[-1] == (0.0 if ended == "terminated" else 5.0)
            assert (ep.values[:-1] == 5.0).all()
        if ended == "truncated":
            assert all(len(ep) == 200 for ep in episodes)  # Pendulum-v1's time limit


class _DictObsEnv(gymnasium.Env):
    observation_space = spaces.Dict({"x": spaces.Box(-1, 1, (2,))})
    action_space = spaces.Box(-1, 1, (1,))


class _ImageEnv(gymnasium.Env):
    observation_space = spaces.Box(0, 255, (8, 8, 3), np.uint8)
    action_space = spaces.Box(-1, 1, (1,))


class _DiscreteEnv(gymnasium.Env):
    observation_space = spaces.Box(-1, 1, (2,))
    action_space = spaces.Discrete(3)


@pytest.mark.parametrize("cls,words", [(_DictObsEnv, "observation space Dict"),
                                       (_ImageEnv, "looks like an image"),
                                       (_DiscreteEnv, r"action space Discrete\(3\)")])
def test_unsupported_spaces_are_refused_by_name(cls, words) -> None:
    env_id = f"simdist-test/{cls.__name__}-v0"
    if env_id not in gymnasium.registry:
        gymnasium.register(id=env_id, entry_point=cls)
    with pytest.raises(InputError, match=words) as err:
        make_task(f"gym:{env_id}")
    assert "\n" not in str(err.value) and f"gym:{env_id}" in str(err.value)


def test_profile_keys_change_the_mujoco_model() -> None:
    nominal = make_task("gym:InvertedPendulum-v5").make_env(1, 0)
    env = make_task("gym:InvertedPendulum-v5", profile={
        "mass_scale": 2.0, "body_mass_scale": [{"body": "pole", "scale": 1.5}], "friction_scale": 0.5,
        "actuator_gain": 3.0}).make_env(1, 0)
    try:
        env.reset(seed=0)
        nominal.reset(seed=0)
        m, m0 = env.models[0], nominal.models[0]
        pole = m.body("pole").id
        expected = 2.0 * m0.body_mass
        expected[pole] *= 1.5
        np.testing.assert_allclose(m.body_mass, expected)
        np.testing.assert_allclose(m.body_inertia[pole], 3.0 * m0.body_inertia[pole])
        np.testing.assert_allclose(m.geom_friction[:, 0], 0.5 * m0.geom_friction[:, 0])
        np.testing.assert_allclose(m.actuator_gainprm[:, 0], 3.0 * m0.actuator_gainprm[:, 0])
        env.reset(seed=1)  # applied from the nominal values: a second reset does not compound
        np.testing.assert_allclose(m.body_mass, expected)
    finally:
        env.close()
        nominal.close()


def test_latency_and_observation_noise() -> None:
    lag = make_task("gym:InvertedPendulum-v5", profile={"latency": 2}).make_env(1, 0)
    plain = make_task("gym:InvertedPendulum-v5").make_env(1, 0)
    try:
        lag.reset(seed=3)
        plain.reset(seed=3)
        a = np.ones((1, 1), np.float32)
        for k in range(4):  # the first two steps act with zero, then the lagged ones
            got = lag.step(a).obs["state"]
            want = plain.step(a * (k >= 2)).obs["state"]
            np.testing.assert_allclose(got, want, atol=1e-6)
    finally:
        lag.close()
        plain.close()
    noisy = [make_task("gym:InvertedPendulum-v5", profile={"obs_noise": 0.1}).make_env(1, 0) for _ in range(2)]
    clean = make_task("gym:InvertedPendulum-v5").make_env(1, 0)
    try:
        x, y, z = (e.reset(seed=4)["state"] for e in (*noisy, clean))
        np.testing.assert_array_equal(x, y)  # seeded noise
        assert 0.01 < np.abs(x - z).mean() < 0.5
    finally:
        for e in (*noisy, clean):
            e.close()


def test_profiles_are_checked_like_every_tasks_profiles(tmp_path) -> None:
    from simdist.components.tasks.gym.task import GymTask

    assert {"sim", "lag", "lag1", "lag2", "heavy"} <= set(GymTask.profiles())
    assert make_task("gym:InvertedPendulum-v5", profile="lag").profile.latency == 3
    bad = tmp_path / "bad.yaml"
    bad.write_text("latency: -1\n")
    with pytest.raises(ProfileError, match=r"bad.yaml: latency = -1 is out of range"):
        make_task("gym:InvertedPendulum-v5", profile=str(bad))
    bad.write_text("mass: 2\n")
    with pytest.raises(ProfileError, match="mass"):
        make_task("gym:InvertedPendulum-v5", profile=str(bad))
    with pytest.raises(InputError, match="no body 'torso'"):
        make_task("gym:InvertedPendulum-v5",
                  profile={"body_mass_scale": [{"body": "torso", "scale": 2}]}).make_env(1, 0)
    with pytest.raises(InputError, match="not a MuJoCo env"):
        make_task("gym:Pendulum-v1", profile={"mass_scale": 2.0}).make_env(1, 0)


def test_any_policy_callable_is_an_expert(tmp_path) -> None:
    """A TorchScript module and a plain Python callable drive the data engine as the expert."""
    from simdist.components.tasks.gym.data import generate_gym_dataset, load_experts

    torch.manual_seed(0)
    net = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Tanh()))
    net.save(str(tmp_path / "policy.pt"))
    expert, sub, critic = load_experts(str(tmp_path / "policy.pt"))
    assert sub == [] and critic is None
    obs = {"state": np.zeros((4, 3), np.float32)}
    assert expert(obs).shape == (4, 1)
    task = make_task("gym:Pendulum-v1")
    summary = generate_gym_dataset(task, str(tmp_path / "data"), experts=str(tmp_path / "policy.pt"), num_envs=2,
                                   transitions=400, seed=0)
    assert summary["transitions"] == 400 and summary["noised_fraction"] > 0
    with pytest.raises(InputError, match="--experts"):
        load_experts(str(tmp_path / "nothing-here"))


def _builtin_tasks() -> list[str]:
    return [n for n in task_names() if ":" not in n]


@pytest.mark.parametrize("name", _builtin_tasks())
def test_every_task_passes_gymnasiums_check_env(name) -> None:
    env = make_task(name).gym_env()
    try:
        check_env(env, skip_render_check=True)
        obs, _ = env.reset(seed=1)
        assert env.observation_space.contains(obs)
        obs2, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        assert isinstance(reward, float) and isinstance(terminated, bool) and isinstance(truncated, bool)
    finally:
        env.close()
    flat = make_task(name).gym_env(profile=None, flatten=True)  # the training simulator, one Box
    try:
        check_env(flat, skip_render_check=True)
        assert isinstance(flat.observation_space, spaces.Box)
    finally:
        flat.close()


@pytest.mark.usefixtures("single_thread")
def test_a_gym_id_runs_generate_fit_and_evaluate(tmp_path, capsys) -> None:
    """No user code: a Gymnasium id through ``simdist generate``, ``fit``, ``export`` and ``evaluate`` (MPPI)."""
    import json

    from simdist.cli import main

    torch.manual_seed(0)
    torch.jit.script(torch.nn.Sequential(torch.nn.Linear(4, 1), torch.nn.Tanh())).save(str(tmp_path / "expert.pt"))
    task = ["--task", "gym:InvertedPendulum-v5"]
    assert main(["generate", *task, "--experts", str(tmp_path / "expert.pt"), "--envs", "4", "--transitions", "600",
                 "--out", str(tmp_path / "data"), "--no-progress", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["transitions"] >= 600
    assert main(["fit", "--config", "recipes/gym/base.yaml", "--config", "recipes/gym/pretrain.yaml",
                 "--model.init_args.preset", "gym:InvertedPendulum-v5", "--data.train", str(tmp_path / "data"),
                 "--trainer.max_steps", "2", "--trainer.logger", "false", "--trainer.enable_progress_bar", "false",
                 "--trainer.default_root_dir", str(tmp_path / "fit"), "--data.batch_size", "8",
                 "--data.windows_per_epoch", "32"]) in (0, None)
    assert main(["export", "--ckpt", str(tmp_path / "fit" / "checkpoints" / "last.ckpt"),
                 "--out", str(tmp_path / "model")]) == 0
    capsys.readouterr()
    assert main(["evaluate", *task, "--agent", str(tmp_path / "model"), "--profile", "lag", "--trials", "2",
                 "--envs", "2", "--samples", "8", "--iterations", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["profile"] == "lag" and len(result["values"]) == 2


@pytest.mark.slow  # about 40 s on two shared cores (four PPO iterations twice, then generate)
@pytest.mark.usefixtures("single_thread")
def test_train_expert_keeps_a_ladder_and_resumes(tmp_path, capsys) -> None:
    """``simdist train-expert --task gym:ID``: PPO (rsl-rl-lib) checkpoints, resumed by rerunning, exported as an
    expert with its critic and the sub-optimal ladder that the data engine mixes in."""
    from simdist.cli import main
    from simdist.components.tasks.gym.data import load_experts

    log, out = tmp_path / "ppo", tmp_path / "set"
    args = ["train-expert", "--task", "gym:InvertedPendulum-v5", "--log-dir", str(log), "--envs", "2",
            "--steps-per-env", "8", "--save-interval", "1", "--seed", "3"]
    assert main([*args, "--iterations", "2"]) == 0
    first = sorted(p.name for p in log.glob("model_*.pt"))
    assert main([*args, "--iterations", "4", "--export", str(out)]) == 0  # resumes after the newest checkpoint
    assert sorted(p.name for p in log.glob("model_*.pt")) == ["model_0.pt", "model_1.pt", "model_2.pt", "model_3.pt"]
    assert set(first) < {p.name for p in log.glob("model_*.pt")}
    expert, ladder, critic = load_experts(str(out))
    assert len(ladder) == 3 and critic is not None and expert.obs_key == "state"
    obs = {"state": np.zeros((5, 4), np.float32)}
    assert expert(obs).shape == (5, 1) and critic(obs).shape == (5,)
    capsys.readouterr()
    assert main(["generate", "--task", "gym:InvertedPendulum-v5", "--experts", str(out), "--envs", "2",
                 "--transitions", "200", "--out", str(tmp_path / "data"), "--no-progress", "--json"]) == 0
    episodes = list(iter_episodes(str(tmp_path / "data"), shuffle_shards=False))
    policies = {ep.meta["policy"] for ep in episodes}
    assert len(policies) > 1  # the expert and its ladder
    assert all(ep.values[-1] == 0.0 for ep in episodes if ep.meta["terminated"])


def test_cloned_states_replay_exactly_with_actions_in_flight() -> None:
    """The plan-ranking analysis's clones: a restored env (on the lag profile, actions in the delay) steps as the
    original does; the true return of a candidate is the candidate, then the expert, then its critic."""
    from simdist.components.tasks.gym.clone import expert_continuation_returns

    task = make_task("gym:HalfCheetah-v5", profile={"latency": 2})
    rng = np.random.default_rng(0)
    env = task.make_env(3, seed=0)
    try:
        env.reset(seed=0)
        for _ in range(5):
            env.step(rng.uniform(-1, 1, (3, 6)).astype(np.float32))
        snap = task.snapshot_states(env, np.array([2, 0]))
        future = rng.uniform(-1, 1, (4, 3, 6)).astype(np.float32)
        want = [env.step(a) for a in future]
    finally:
        env.close()
    from simdist.components.tasks.gym.clone import restore

    copy = task.make_env(2, seed=9)
    try:
        copy.reset(seed=9)
        restore(copy, snap)
        for a, w in zip(future, want):
            got = copy.step(a[[2, 0]])
            np.testing.assert_allclose(got.obs["state"], w.obs["state"][[2, 0]], rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(got.reward, w.reward[[2, 0]], rtol=1e-6)
    finally:
        copy.close()
    candidates = np.stack([np.ones((8, 6)), -np.ones((8, 6))]).astype(np.float32)
    snap2 = {k: v[[0, 0]] for k, v in snap.items()}
    out = expert_continuation_returns(lambda n, s: task.make_env(n, s), snap2, candidates,
                                      expert=lambda obs: np.zeros((len(obs["state"]), 6), np.float32),
                                      critic=lambda obs: np.zeros(len(obs["state"])), gamma=0.99, expert_steps=3)
    assert out.shape == (2,) and np.isfinite(out).all() and out[0] != out[1]
    with pytest.raises(InputError, match="--expert-set"):
        task.true_returns(snap, np.array([0]), candidates[:1], gamma=0.99, seed=0)
