"""Go2 data generation (tiny budget) and the straight-walk evaluation protocol."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("mujoco.batch")

from simdist.agents import build_controller  # noqa: E402
from simdist.components.tasks.go2 import data as go2_data  # noqa: E402
from simdist.components.tasks.go2.protocol import (  # noqa: E402
    PLAIN_TERRAINS,
    ProtocolResult,
    make_course,
    pooled_trials,
    run_protocol,
)
from simdist.data.shards import iter_episodes, load_spec, load_stats, read_dataset_info  # noqa: E402
from simdist.experts import ExpertSet, export_expert_set, load_expert_set  # noqa: E402
from simdist.tools import evaluate as evaluate_tool  # noqa: E402
from simdist.tools import generate as generate_tool  # noqa: E402


def _fake_ckpt(seed: int, hidden: tuple[int, ...] = (16, 16)) -> dict[str, Any]:
    """An rsl-rl 5 checkpoint dict (actor/critic MLPModel state dicts) with small random weights."""
    g = torch.Generator().manual_seed(seed)

    def mlp(out: int) -> dict[str, torch.Tensor]:
        dims, sd = [433, *hidden, out], {}
        for j in range(len(dims) - 1):
            sd[f"mlp.{2 * j}.weight"] = 0.1 * torch.randn(dims[j + 1], dims[j], generator=g)
            sd[f"mlp.{2 * j}.bias"] = 0.1 * torch.randn(dims[j + 1], generator=g)
        std = 1.0 + torch.rand(1, 433, generator=g)
        sd.update({"obs_normalizer._mean": 0.1 * torch.randn(1, 433, generator=g),
                   "obs_normalizer._var": std**2, "obs_normalizer._std": std,
                   "obs_normalizer.count": torch.tensor(100)})
        return sd

    actor = {**mlp(12), "distribution.std_param": torch.ones(12)}
    return {"actor_state_dict": actor, "critic_state_dict": mlp(1), "iter": 0, "infos": None}


@pytest.fixture(scope="module")
def expert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("run")
    for k, it in enumerate((0, 50, 100)):
        torch.save(_fake_ckpt(k), run / f"model_{it}.pt")
    out = run.parent / "experts"
    export_expert_set(run, out)
    return out


class RecordingCritic:
    """Wraps the critic and remembers every value it returned."""

    def __init__(self, critic: Any) -> None:
        self.critic, self.values = critic, []

    def __call__(self, obs: dict[str, np.ndarray], command: Any) -> np.ndarray:
        assert obs["privileged"].shape[1] == 433
        v = self.critic(obs, command)
        self.values.append(v.copy())
        return v


def test_generate_tiny(expert_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    es = load_expert_set(expert_dir)
    rec = RecordingCritic(es.critic)
    es = ExpertSet(expert=es.expert, critic=rec, suboptimal=es.suboptimal, manifest=es.manifest)  # type: ignore
    out = tmp_path / "data"
    summary = go2_data.generate_go2(es, out, num_envs=4, transitions=300, seed=3, part_size=150,
                                         env_kwargs={"episode_length_s": 1.0}, progress=False,
                                         log=lambda s: None)
    assert summary["parts_done"] == 2 and summary["transitions"] >= 300
    assert summary["dropped_diverged"] == 0
    labels = set(np.concatenate(rec.values).tolist())
    n = 0
    for part in ("part-0000", "part-0001"):
        info = read_dataset_info(out / part)
        assert info["spec"]["obs"] == {"proprio": [35], "extero": [315]} and info["spec"]["command_dim"] == 3
        meta = info["metadata"]["generator"]
        assert meta["value_label"] == "value_fn" and meta["base_seed"] == 3
        assert meta["env_kwargs"]["terrain"] == "rough" and meta["env_kwargs"]["terrain_mode"] == "random"
        assert meta["policies"] == ["expert_100", "policy_0", "policy_50"]
        for ep in iter_episodes(out / part, shuffle_shards=False):
            n += len(ep)
            assert set(ep.obs) == {"proprio", "extero"} and ep.commands.shape == (len(ep), 3)
            assert len(ep) <= 50
            assert set(ep.values.tolist()) <= labels  # V(s_{i+1}) from the critic
            assert 0.2 <= ep.meta["friction"] <= 1.2 and "terrain_type" in ep.meta
            assert len(ep.meta["noise_sigma"]) == 12
    assert n == summary["transitions"]
    # out/dataset.json indexes both parts: the folder reads as one dataset
    assert sum(len(ep) for ep in iter_episodes(out, shuffle_shards=False)) == n
    assert load_spec(out).obs == {"proprio": (35,), "extero": (315,)}
    assert load_stats(out) is not None
    state = json.loads((out / "generate.json").read_text())
    assert state["config"]["part_budgets"] == [150, 150] and state["summary"]["transitions"] == n

    # a part is deterministic given (seed, part): a fresh run of part 0 alone reproduces its episodes,
    # which is what resuming an interrupted part relies on
    solo = go2_data.generate_go2(es, tmp_path / "solo", num_envs=4, transitions=150, seed=3, part_size=0,
                                      env_kwargs={"episode_length_s": 1.0}, progress=False, log=lambda s: None)
    assert solo["transitions"] >= 150
    first = {ep.episode_id: ep for ep in iter_episodes(out / "part-0000", shuffle_shards=False)}
    for ep in iter_episodes(tmp_path / "solo" / "part-0000", shuffle_shards=False):
        ref = first[ep.episode_id]
        for k, v in ep.arrays().items():
            np.testing.assert_array_equal(v, ref.arrays()[k], err_msg=k)

    # the same command resumes: both parts are done, nothing is simulated
    argv = ["--experts", str(expert_dir), "--out", str(out), "--envs", "4", "--transitions", "300",
            "--part-size", "150", "--episode-length-s", "1", "--no-progress", "--json"]
    assert generate_tool.main([*argv, "--seed", "3"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["session"]["simulated_transitions"] == 0 and again["transitions"] == n
    with pytest.raises(ValueError, match=r"made with other settings \(seed 3 there, 4 now"):
        generate_tool.main([*argv, "--seed", "4"])


def test_protocol_expert(expert_dir: Path) -> None:
    es = load_expert_set(expert_dir)
    seen: list[np.ndarray] = []

    def controller(obs: dict[str, np.ndarray]) -> np.ndarray:
        np.testing.assert_array_equal(obs["privileged"][:, 9:12], obs["command"])
        seen.append(obs["command"].copy())
        return es.expert(obs)

    course = make_course(profile="ptfe-slope-5.7deg")
    res = run_protocol(controller, course, speeds=(0.5,), trials=2, max_steps=45)
    assert res.course_length == pytest.approx(1.82) and len(res.speeds) == 1
    s = res.speeds[0]
    assert len(s.progress) == 2 and all(0.0 <= p <= 1.82 for p in s.progress)
    assert len(seen) == 20  # 45 steps, the first 25 are the reset phase (no controller call)
    np.testing.assert_allclose(seen[0], 0.0, atol=0.05)  # x_des starts where walking starts
    assert (seen[-1][:, 0] > seen[0][:, 0]).all()  # x_des advances at 0.5 m/s
    assert all(t <= 20 * 0.02 + 1e-9 for t in s.walk_time)
    d = res.to_dict()
    assert d["mean_progress"] == pytest.approx(np.mean(s.progress)) and "speed" in res.table()


@pytest.mark.parametrize("terrain", PLAIN_TERRAINS)
def test_protocol_plain_terrains(terrain: str) -> None:
    course = make_course(terrain=terrain, course_length=0.5)
    res = run_protocol(lambda obs: np.zeros((len(obs["proprio"]), 12), np.float32), course, speeds=(0.3,),
                       trials=1, max_steps=30)
    s = res.speeds[0]
    assert s.progress[0] <= 0.5 and not s.success[0]


def test_evaluate_cli_model(tmp_path: Path, capsys: pytest.CaptureFixture[str], expert_dir: Path) -> None:
    _tiny_go2_world_model().save_pretrained(tmp_path / "wm")
    common = ["--terrain", "flat", "--speeds", "0.3", "--trials", "2", "--max-steps", "35", "--json"]
    model = ["--controller", f"model:{tmp_path / 'wm'}", "--planner", "mppi", "--num-samples", "8",
             "--iterations", "1"]
    assert evaluate_tool.main([*model, *common]) == 0
    out = json.loads(capsys.readouterr().out)
    protocol = out["details"]["protocol"]
    assert protocol["course_length"] == 3.0 and len(protocol["speeds"][0]["progress"]) == 2
    assert out["details"]["settings"]["planner"] == "mppi" and out["summary"]["trials"] == 2
    low, high = out["summary"]["ci95"]
    assert low <= out["summary"]["mean"] <= high
    assert evaluate_tool.main(["--agent", f"expert:{expert_dir}", *common]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all(0.0 <= p <= 3.0 for p in out["values"])
    with pytest.raises(ValueError, match="expert:PATH"):
        build_controller("expert:")
    with pytest.raises(FileNotFoundError):
        build_controller(str(tmp_path / "missing"))


def test_saved_results_load_and_pool(tmp_path: Path) -> None:
    course = make_course(terrain="flat", course_length=0.5)
    res = run_protocol(lambda obs: np.zeros((len(obs["proprio"]), 12), np.float32), course, speeds=(0.2, 0.4),
                       trials=2, max_steps=30)
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path in paths:
        path.write_text(json.dumps(res.to_dict()))
    loaded = ProtocolResult.load(paths[0])
    assert loaded.to_dict() == res.to_dict()
    pooled = pooled_trials(paths)
    assert pooled["progress"] == [p for s in res.speeds for p in s.progress] * 2
    assert len(pooled["terminated"]) == 8
    paths[1].write_text(json.dumps({"course": "flat", "course_length": 0.5, "speeds": [{"speed": 0.2}]}))
    with pytest.raises(ValueError, match="b.json: not a protocol result"):
        pooled_trials(paths)


def _tiny_go2_world_model() -> Any:
    from simdist.model.config import WorldModelConfig
    from simdist.model.world_model import WorldModel

    mlp = {"name": "mlp", "kwargs": {"hidden": [16]}}
    cfg = WorldModelConfig(obs_spec={"proprio": [35], "extero": [315]}, action_dim=12, command_dim=3,
                           history=4, horizon=3, latent_dim=8, encoder=mlp, dynamics=mlp, reward_head=mlp,
                           value_head=mlp)
    torch.manual_seed(0)
    return WorldModel(cfg)


@pytest.mark.parametrize("mode", ["keep", "pad"])
def test_walk_start_history(mode: str) -> None:
    """``pad`` hands the controller a trained episode start (copies of one frame) when walking begins;
    ``keep`` (official) the frames of the robot settling during the reset phase."""
    from simdist.components.tasks.go2.protocol import make_course, protocol_env, run_trials

    class Spy:
        world_model = _tiny_go2_world_model()

        def __init__(self) -> None:
            self.first = None

        def act(self, history: Any) -> torch.Tensor:
            if self.first is None:
                self.first = history.obs["proprio"].clone()
            return torch.zeros(history.num_envs, 12)

    spy = Spy()
    env = protocol_env(make_course(terrain="flat"), 2, 40)
    run_trials(env, spy, 0.3, 3.0, max_steps=12, reset_steps=6, walk_start_history=mode)
    env.close()
    frames_equal = bool(torch.allclose(spy.first, spy.first[:, -1:].expand_as(spy.first)))
    assert frames_equal == (mode == "pad")
    with pytest.raises(ValueError, match="walk_start_history"):
        run_trials(env, spy, 0.3, 3.0, max_steps=2, walk_start_history="zero")


def test_compare_walk_puts_the_head_beside_the_driver() -> None:
    """``Go2Task.compare_walk``: after the task's standing steps, the policy head and the expert act on the same
    state and the driver's action is applied; both drivers see the same first walking state."""
    from simdist import WorldModel, make_task

    task = make_task("go2", terrain="flat", course_length=10.0, reset_steps=3)
    assert task.standing_steps == 3 and make_task("go2", terrain="flat").standing_steps == 25
    wm = WorldModel.from_pretrained(Path(__file__).resolve().parents[1] / "hub" / "models" / "go2-slope")

    def still(obs: dict[str, np.ndarray]) -> np.ndarray:
        return np.zeros((len(obs["proprio"]), 12), np.float32)

    by_expert = task.compare_walk(wm, still, trials=2, walk_steps=4, driver="expert")
    by_head = task.compare_walk(wm, still, trials=2, walk_steps=4, driver="head")
    assert by_expert.errors.shape == by_expert.active.shape == (4, 2) and (by_expert.fell_at == -1).all()
    assert np.array_equal(by_expert.errors[0], by_head.errors[0]) and (by_expert.errors > 0).all()
    assert not np.array_equal(by_expert.errors[1:], by_head.errors[1:])
    with pytest.raises(ValueError, match="driver"):
        task.compare_walk(wm, still, trials=1, walk_steps=1, driver="both")


def test_profiles_carry_the_papers_protocol_speeds() -> None:
    from simdist.components.tasks.go2.protocol import make_course

    assert make_course(profile="foam").speeds == (0.2, 0.7, 1.2)
    assert make_course(profile="ptfe-slope-5.7deg").speeds == (0.1, 0.3, 0.5)


@pytest.mark.parametrize("length", [5.0, 10.0, 20.0])
def test_tiled_course_extends_past_its_end(length: float) -> None:
    """A rough/boxes course is one tile centred on the spawn point; its edge lies beyond the course end
    (an evaluation once walked the robot off a 15 m tile and counted the fall against the policy)."""
    from simdist.components.tasks.go2.protocol import TILE_MARGIN

    terrain = make_course(terrain="boxes", course_length=length).env_kwargs["terrain"]
    x_end = terrain.origin[0] + (terrain.heights.shape[1] - 1) * terrain.resolution
    cell = terrain.resolution  # the grid's last sample lies one cell short of the nominal size
    assert x_end >= length + TILE_MARGIN - cell - 1e-6


def test_generate_with_student_takeovers(expert_dir: Path, tmp_path: Path) -> None:
    """``--student MODEL``: a Go2 world model's policy head drives expert envs in windows, recorded unlabelled."""
    from simdist.model.world_model import WorldModel

    torch.manual_seed(0)
    student = WorldModel.from_preset("go2").save_pretrained(tmp_path / "student")
    out = tmp_path / "data"
    argv = ["--experts", str(expert_dir), "--out", str(out), "--envs", "4", "--transitions", "200",
            "--part-size", "0", "--episode-length-s", "1", "--no-progress", "--json", "--seed", "5",
            "--student", str(student), "--student-window", "3,8", "--expert-window", "3,8"]
    assert generate_tool.main(argv) == 0
    state = json.loads((out / "generate.json").read_text())
    part = state["parts"]["part-0000"]
    assert state["config"]["student"]["student_window"] == [3, 8]
    assert part["student_fraction"] > 0.05
    meta = read_dataset_info(out / "part-0000")["metadata"]["generator"]
    assert meta["student"]["name"] == f"student:{student}"
    expert_eps = [ep for ep in iter_episodes(out, shuffle_shards=False) if ep.meta["expert_policy"]]
    unlabelled = 0  # steps of expert episodes neither labelled nor noised: the student's
    for ep in expert_eps:
        noised = np.zeros(len(ep), bool)
        for a, b in ep.meta["noised_windows"]:
            noised[a:b] = True
        unlabelled += int((~ep.expert & ~noised).sum())
    assert unlabelled > 0
    assert generate_tool.main(argv) == 0  # the same command resumes the finished run
    assert json.loads((out / "generate.json").read_text())["summary"]["session"]["simulated_transitions"] == 0
    with pytest.raises(ValueError, match="LOW,HIGH"):  # a new folder: the window's own check, not the dataset's
        fresh = [tmp_path / "fresh" if a == str(out) else a for a in argv[:-4]]
        generate_tool.main([*map(str, fresh), "--student-window", "8"])


def test_a_diverged_trial_is_a_fall_not_progress() -> None:
    """Physics that blows up (the base 13 km away) must not be scored as the course's end."""
    from simdist.components.tasks.go2.protocol import protocol_env, run_trials

    course = make_course(terrain="flat", course_length=1.0)
    env = protocol_env(course, 2, 60)

    class Blowup:
        """The real env, whose physics diverges for env 0 at step 30 (as a negative friction did)."""

        def __init__(self, inner: object) -> None:
            self.inner, self.t = inner, 0

        def __getattr__(self, name: str) -> object:
            return getattr(self.inner, name)

        def step(self, actions: np.ndarray) -> object:
            res = self.inner.step(actions)
            self.t += 1
            if self.t == 30:
                self.inner.qpos[0, 0] += 13_000.0
                res.info["diverged"] = np.array([True, False])
            return res

    zero = lambda obs: np.zeros((len(obs["proprio"]), 12), np.float32)  # noqa: E731
    try:
        r = run_trials(Blowup(env), zero, 0.3, course.length, max_steps=60, reset_steps=25)
    finally:
        env.close()
    assert r.diverged == [True, False] and r.terminated[0] and not r.success[0]
    assert r.progress[0] < 0.1 and r.progress[1] < 0.1
    result = ProtocolResult("flat", 1.0, [r]).to_evaluation()
    assert result.diverged_count == 1 and "1 of 2 trials diverged" in result.table()
