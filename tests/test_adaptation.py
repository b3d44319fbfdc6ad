"""Adaptation loop at toy scale: curve, stage models, consistency, resume, freeze ablations, value AUC."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from simdist import FreezePolicy, WorldModel
from simdist.components.tasks.go2 import Go2Task
from simdist.components.tasks.toy_reach import ToyReachTask as ToyTask
from simdist.model.freeze import FinetuneConfig
from simdist.tasks import make_task
from simdist.workflows import rollout
from simdist.workflows.adaptation import AdaptationLoop, AdaptConfig, roc_auc
from simdist.workflows.loop_parts import EvaluationConfig
from simdist.workflows.rollout import RolloutResult, collect_episodes

SCHEDULE = [0.0, 0.15]  # minutes at 10 Hz: 90 steps, two 60-step episodes


#: the tests' finetuning budget
BUDGET = FinetuneConfig(epochs=1, windows_per_epoch=128, batch_size=32, lr=1e-3, warmup_steps=5)


def _config(**overrides: object) -> AdaptConfig:
    base = dict(schedule=SCHEDULE, evaluation=EvaluationConfig(trials=2), num_envs=2, heldout_episodes=2,
                planner_overrides={"num_samples": 16, "iterations": 1}, finetune=BUDGET)
    return AdaptConfig(**{**base, **overrides})  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def toy_model(tmp_path_factory: pytest.TempPathFactory, single_thread: None) -> str:
    """A toy world model pretrained for one short epoch on a few thousand simulated transitions."""
    from simdist.components.tasks.toy_reach import generate_toy_dataset
    from simdist.data import TrajectoryDataModule
    from simdist.training import PretrainModule
    from simdist.training.module import epoch_trainer

    warnings.filterwarnings("ignore", ".*(eval mode|does not have many workers|__len__).*")
    root = tmp_path_factory.mktemp("toy-pretrain")
    generate_toy_dataset(str(root / "sim"), transitions=2_000, seed=0, num_envs=4, critic_epochs=5)
    torch.manual_seed(0)
    module = PretrainModule(preset="toy", lr=1e-3, end_lr=3e-4, warmup_steps=20, decay_steps=1_000)
    cfg = module.world_model.config
    dm = TrajectoryDataModule(str(root / "sim"), history=cfg.history, horizon=cfg.horizon, batch_size=128,
                              windows_per_epoch=1_000, heldout_fraction=0.0, seed=0)
    epoch_trainer(root / "lightning", 1, False).fit(module, dm)
    return str(module.world_model.save_pretrained(root / "toy-sim"))


def test_roc_auc_hand_made() -> None:
    assert roc_auc([0.9, 0.8, 0.1, 0.2], [True, True, False, False]) == 1.0
    assert roc_auc([0.1, 0.2, 0.9, 0.8], [True, True, False, False]) == 0.0
    assert roc_auc([0.5, 0.5], [True, False]) == 0.5  # ties count one half
    assert roc_auc([0.9, 0.3, 0.6, 0.1], [True, False, False, True]) == pytest.approx(0.5)
    assert roc_auc([3.0, 1.0, 2.0], [True, False, True]) == 1.0
    assert roc_auc([1.0, 2.0], [True, True]) is None
    with pytest.raises(ValueError):
        roc_auc([1.0], [True, False])


def test_adaptation_curve_and_resume(toy_model: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    curve = AdaptationLoop(toy_model, ToyTask(), out, _config(), log=lambda m: None).run()
    for name in ("curve.json", "curve.png", "state.json", "stages/stage-1/model.safetensors",
                 "real-data/dataset.json", "heldout-data/dataset.json"):
        assert (out / name).exists(), name
    assert json.loads((out / "curve.json").read_text()) == json.loads(json.dumps(curve))
    assert curve["freeze"] == "dynamics_only" and curve["metric"] == "return"
    assert curve["minutes"][0] == 0.0 and curve["minutes"][1] >= SCHEDULE[1]
    assert all(np.isfinite(curve["value"]))
    assert curve["consistency_before"][0] == curve["consistency_after"][0]
    assert curve["consistency_before"][1] == pytest.approx(curve["consistency_after"][0])
    assert np.isfinite(curve["consistency_after"][1])
    state = json.loads((out / "state.json").read_text())
    assert set(state["labels"]) == {"heldout", "real"}
    card = (out / "stages" / "stage-1" / "README.md").read_text()
    assert "toy-sim" in card

    # resume: drop the last stage's entry; only that stage runs again (no new data, no stage-0 work)
    state["stages"].pop()
    (out / "state.json").write_text(json.dumps(state))
    steps = json.loads((out / "real-data" / "dataset.json").read_text())["num_steps"]
    lines: list[str] = []
    again = AdaptationLoop(toy_model, ToyTask(), out, _config(), log=lines.append).run()
    assert len(lines) == 1 and lines[0].startswith("[stage 2/2]") and "ETA" in lines[0]
    assert json.loads((out / "real-data" / "dataset.json").read_text())["num_steps"] == steps
    assert again["minutes"] == curve["minutes"] and again["value"] == curve["value"]  # the rerun stage: bit for bit
    assert again["consistency_after"] == curve["consistency_after"]


def test_a_loop_without_evaluation_logs_finetunes_and_records_consistency(toy_model: str, tmp_path: Path) -> None:
    """``evaluation.trials=0``: no closed loop inside the loop (the stage models are judged apart); every stage
    still logs its data, finetunes (one pass per epoch with ``finetune.windows_per_epoch=None``, the official
    decay) and records its held-out consistency, and the saved model differs from the base."""
    from simdist.agents import load_agent
    from simdist.provenance import weights_fingerprint

    out = tmp_path / "run"
    lines: list[str] = []
    cfg = _config(evaluation=EvaluationConfig(trials=0),
                  finetune=replace(BUDGET, windows_per_epoch=None, decay_steps=400_000))
    curve = AdaptationLoop(toy_model, ToyTask(), out, cfg, log=lines.append).run()
    assert curve["value"] == [None, None] and curve["trials"] == [0, 0] and curve["ci95"] == [None, None]
    assert "not evaluated here" in lines[-1] and (out / "curve.png").is_file()
    assert np.isfinite(curve["consistency_after"][1]) and curve["minutes"][1] >= SCHEDULE[1]
    tuned = load_agent(str(out / "stages" / "stage-1"))
    assert weights_fingerprint(tuned.world_model) != weights_fingerprint(load_agent(toy_model).world_model)
    config = json.loads((out / "state.json").read_text())["stages"][1]["settings"]["config"]
    assert config["episodes_per_eval"] == 0 and config["decay_steps"] == 400_000
    assert config["windows_per_epoch"] is None
    assert not (out / "lightning" / "stage-1" / "resume").exists()


def test_resume_with_other_settings_reruns_the_stages_on_the_logged_data(toy_model: str, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder never reports numbers of another command: stages recorded with other settings (here more
    evaluation trials) run again, on the data already logged; the same command keeps them."""
    out = tmp_path / "run"
    AdaptationLoop(toy_model, ToyTask(), out, _config(), log=lambda m: None).run()
    task = ToyTask()
    monkeypatch.setattr(rollout, "collect_episodes", lambda *a, **k: pytest.fail("the data is logged already"))
    same = AdaptationLoop(toy_model, task, out, _config(), log=lambda m: None)
    assert same.stages_done() == 2
    lines: list[str] = []
    curve = AdaptationLoop(toy_model, task, out, _config(evaluation=EvaluationConfig(trials=3)), log=lines.append).run()
    assert len(lines) == 2 and curve["trials"] == [3, 3]
    state = json.loads((out / "state.json").read_text())
    assert all(s["settings"]["config"]["episodes_per_eval"] == 3 for s in state["stages"])
    assert state["stages"][1]["provenance"]["torch"] == torch.__version__


@pytest.mark.parametrize("freeze", ["dynamics_only", "dynamics,encoder", "dynamics,value"])
def test_freeze_policy_switch(toy_model: str, tmp_path: Path, freeze: str) -> None:
    loop = AdaptationLoop(toy_model, ToyTask(), tmp_path, _config(freeze=freeze), log=lambda m: None)
    weights = FreezePolicy.parse(freeze).loss_weights(loop.base.world_model)  # the loss the run's policy means
    assert weights["value"] == float(freeze == "dynamics,value")  # TD targets from real rewards
    loop.collect_until(SCHEDULE[1], loop.base, stage=1)
    tuned = loop.finetune(toy_model, stage=1)
    base = WorldModel.from_pretrained(toy_model)

    def unchanged(prefix: str) -> bool:
        return all(torch.equal(v, tuned.world_model.state_dict()[k]) for k, v in base.state_dict().items()
                   if k.startswith(prefix))

    assert unchanged("encoder.") == (freeze != "dynamics,encoder")
    assert unchanged("value.") == (freeze != "dynamics,value")
    assert not unchanged("dynamics.")
    assert json.loads((tmp_path / "state.json").read_text())["freeze"] == freeze


def test_freeze_policy_is_parsed_once(toy_model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's freeze text becomes a policy once, in AdaptConfig; the loop hands that object to the agent's check
    and its finetuning, and the agent to its Lightning module, which train under it."""
    texts: list[object] = []
    parse = FreezePolicy.parse.__func__  # type: ignore[attr-defined]

    def counting(cls: type[FreezePolicy], value: object) -> FreezePolicy:
        if not isinstance(value, FreezePolicy):
            texts.append(value)
        return parse(cls, value)

    monkeypatch.setattr(FreezePolicy, "parse", classmethod(counting))
    config = _config(freeze="dynamics,encoder")
    loop = AdaptationLoop(toy_model, ToyTask(), tmp_path, config, log=lambda m: None)
    loop.collect_until(SCHEDULE[1], loop.base, stage=1)
    tuned = loop.finetune(toy_model, stage=1)
    assert texts == ["dynamics,encoder"] and config.freeze_policy.trainable == {"dynamics", "encoder"}
    base = WorldModel.from_pretrained(toy_model).state_dict()
    changed = {k.split(".")[0] for k, v in tuned.world_model.state_dict().items() if not torch.equal(v, base[k])}
    assert changed == {"dynamics", "encoder"}


def test_ablation_reuses_another_runs_data(toy_model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    """``data_from``: an ablation finetunes on the main run's logged data without collecting any."""
    main = tmp_path / "main"
    AdaptationLoop(toy_model, ToyTask(), main, _config(), log=lambda m: None).run()
    task = ToyTask()
    monkeypatch.setattr(rollout, "collect_episodes", lambda *a, **k: pytest.fail("the ablation collected new data"))
    out = tmp_path / "all"
    curve = AdaptationLoop(toy_model, task, out, _config(freeze="all"), log=lambda m: None, data_from=main).run()
    main_state = json.loads((main / "state.json").read_text())
    state = json.loads((out / "state.json").read_text())
    assert state["labels"] == main_state["labels"] and state["freeze"] == "all"
    assert curve["minutes"] == json.loads((main / "curve.json").read_text())["minutes"]
    with pytest.raises(FileNotFoundError, match="state.json"):
        AdaptationLoop(toy_model, ToyTask(), tmp_path / "x", _config(), data_from=tmp_path / "nowhere")


def test_task_factory_and_go2_construction() -> None:
    assert isinstance(make_task("toy-reach", profile="real"), ToyTask)
    task = make_task("go2", profile="ptfe-slope-3deg", max_steps=30)
    assert isinstance(task, Go2Task) and task.metric == "forward_progress" and task.dt == 0.02
    assert task.describe()["profile"] == "ptfe-slope-3deg" and task.name == "go2:ptfe-slope-3deg"
    assert task.collect_speed == (min(task.speeds), max(task.speeds))  # logged data covers every protocol speed
    env = task.make_env(2, seed=0)
    try:
        assert env.num_envs == 2 and "command" in env.observation_spec
        assert env.commands.speed_range == task.collect_speed
    finally:
        env.close()
    assert make_task("go2", profile="foam", collect_speed=0.7).collect_speed == 0.7
    import argparse

    parser = argparse.ArgumentParser()
    Go2Task.add_arguments(parser, "adapt")
    assert parser.parse_args([]).collect_speed is None
    assert parser.parse_args(["--collect-speed", "0.7"]).collect_speed == 0.7
    assert parser.parse_args(["--collect-speed", "0.2,1.2"]).collect_speed == (0.2, 1.2)
    with pytest.raises(SystemExit):
        parser.parse_args(["--collect-speed", "0.2,0.7,1.2"])
    with pytest.raises(ValueError, match="collect_speed"):
        make_task("go2", profile="foam", collect_speed=(1.0, 0.5))
    with pytest.raises(ValueError, match="unknown task"):
        make_task("no-such-task")
    task = Go2Task(profile="foam", speeds=(0.3,), max_steps=30, episode_length_s=0.3)
    zero = lambda obs: np.zeros((len(obs["proprio"]), 12), np.float32)  # noqa: E731
    result = task.evaluate(zero, trials=1, seed=0)
    assert np.isfinite(result.mean) and result.trials == 1 and len(result.details["protocol"]["speeds"]) == 1
    episodes, ok = collect_episodes(task, zero, episodes=1, num_envs=1, seed=0)
    assert len(episodes) == 1 and len(ok) == 1 and episodes[0].meta["task"] == task.name
    fell = Go2Task().success(RolloutResult(returns=np.zeros(2), lengths=np.ones(2, int),
                                           terminated=np.array([True, False]), final_info=[{}, {}]))
    assert fell.tolist() == [False, True]
    blown = RolloutResult(returns=np.zeros(2), lengths=np.ones(2, int), terminated=np.array([False, False]),
                          final_info=[{"diverged": True, "best_progress": 1e4}, {}])
    assert Go2Task(profile="foam").success(blown).tolist() == [False, True]  # diverged: never a success
    with pytest.raises(ValueError):
        AdaptConfig(schedule=[1.0, 2.0])
    with pytest.raises(ValueError, match="num_envs"):
        AdaptConfig(num_envs=0)
    with pytest.raises(ValueError, match="schedule_unit"):
        AdaptConfig(schedule_unit="hours")
    with pytest.raises(ValueError, match="whole numbers"):
        AdaptConfig(schedule=[0, 2.5], schedule_unit="episodes")


def test_episode_schedule_collects_whole_episodes(toy_model: str, tmp_path: Path) -> None:
    """The arm's protocol: stages by real episodes (retrain every N), the curve over episodes."""
    out = tmp_path / "episodes"
    curve = AdaptationLoop(toy_model, ToyTask(), out, _config(schedule=[0, 3], schedule_unit="episodes"),
                           log=lambda m: None).run()
    assert curve["schedule_unit"] == "episodes" and curve["episodes"] == [0, 3]
    assert json.loads((out / "real-data" / "dataset.json").read_text())["num_episodes"] == 3
    state = json.loads((out / "state.json").read_text())
    assert state["stages"][1]["target_episodes"] == 3 and state["stages"][1]["target_minutes"] is None
    assert (out / "curve.png").stat().st_size > 0


def test_collect_perturbation_noises_the_logged_episodes_and_not_the_heldout_ones(toy_model: str, tmp_path: Path
                                                                                   ) -> None:
    """Exploration beyond the paper: the stage's real episodes carry the noise windows, the held-out set stays
    on-policy (the same episodes as a run without them), and an unknown name is refused naming the key."""
    from simdist.data import iter_episodes

    def actions(out: Path, folder: str) -> np.ndarray:
        return np.concatenate([ep.actions for ep in iter_episodes(str(out / folder), shuffle_shards=False,
                                                                 split_by_node=False, split_by_worker=False)])

    runs = {}
    for name, explore in (("plain", None), ("explore", "manipulation")):
        cfg = _config(schedule=[0, 2], schedule_unit="episodes", collect_perturbation=explore)
        loop = AdaptationLoop(toy_model, ToyTask(), tmp_path / name, cfg, log=lambda m: None)
        loop.heldout()
        loop.collect_until(2, loop.base, 1)
        runs[name] = tmp_path / name
    np.testing.assert_array_equal(actions(runs["plain"], "heldout-data"), actions(runs["explore"], "heldout-data"))
    plain, explored = actions(runs["plain"], "real-data"), actions(runs["explore"], "real-data")
    assert not np.array_equal(plain[: len(explored)], explored[: len(plain)])
    with pytest.raises(ValueError, match="collect_perturbation"):
        AdaptConfig(collect_perturbation="loud")


def test_resume_refuses_other_weights_behind_the_same_model_id(toy_model: str, tmp_path: Path) -> None:
    """A zoo folder rebuilt in place keeps its id; resuming on it must not mix two models' stages."""
    folder = tmp_path / "model"
    model = WorldModel.from_pretrained(toy_model)
    model.save_pretrained(folder)
    AdaptationLoop(str(folder), ToyTask(), tmp_path / "run", _config(), log=lambda m: None).heldout()  # saves state
    AdaptationLoop(str(folder), ToyTask(), tmp_path / "run", _config(), log=lambda m: None)  # same weights: fine
    with torch.no_grad():
        next(model.dynamics.parameters()).add_(0.01)
    model.save_pretrained(folder)
    with pytest.raises(ValueError, match="weights behind the same model id changed"):
        AdaptationLoop(str(folder), ToyTask(), tmp_path / "run", _config(), log=lambda m: None)


def test_episode_value_score_reads_the_value_of_the_episodes_end(toy_model: str, tmp_path: Path) -> None:
    """The loop's score is the horizon-end (bootstrap) value of the last window, the one reaching the end."""
    from simdist.components.tasks.toy_reach import generate_toy_dataset
    from simdist.data import Episode, iter_episodes
    from simdist.data.windows import gather_windows, window_starts
    from simdist.training.evaluate import tensors_to_device
    from simdist.workflows.adaptation import episode_value_score, value_trace

    generate_toy_dataset(str(tmp_path / "d"), transitions=300, seed=3, num_envs=2, critic_epochs=1)
    ep = next(iter(iter_episodes(str(tmp_path / "d"), shuffle_shards=False, split_by_node=False,
                                 split_by_worker=False)))
    model = WorldModel.from_pretrained(toy_model).eval()
    cfg = model.config
    last = window_starts(len(ep), cfg.history, cfg.horizon)[-1:]
    batch = tensors_to_device(gather_windows(ep, last, cfg.history, cfg.horizon, value_offset=cfg.value_offset),
                       model.device)
    with torch.no_grad():
        expected = model.normalizer.denormalize("values", model.predict(batch, heads=True).values)[0, -1]
    assert episode_value_score(model, ep) == pytest.approx(float(expected), rel=1e-5, abs=1e-6)
    first, end = value_trace(model, ep, horizon_step=0), value_trace(model, ep, horizon_step=-1)
    assert first.shape == end.shape == (len(window_starts(len(ep), cfg.history, cfg.horizon)),)
    assert not np.allclose(first, end)
    n = cfg.history
    short = Episode(obs={k: v[:n] for k, v in ep.obs.items()}, actions=ep.actions[:n], commands=ep.commands[:n],
                    rewards=ep.rewards[:n], values=ep.values[:n], expert=ep.expert[:n])
    assert np.isnan(episode_value_score(model, short))


def test_temporal_ensemble_planner_collects_and_evaluates(toy_model: str, tmp_path: Path) -> None:
    from simdist.planning.ensemble import TemporalEnsemble

    cfg = _config(planner_overrides={"num_samples": 16, "iterations": 1, "temporal_ensemble": 0.5})
    loop = AdaptationLoop(toy_model, ToyTask(), tmp_path, cfg, log=lambda m: None)
    planner = loop.planner(loop.base, seed=0).planner
    assert isinstance(planner, TemporalEnsemble) and planner.decay == 0.5
    assert not isinstance(AdaptationLoop(toy_model, ToyTask(), tmp_path / "off", _config(), log=lambda m: None)
                          .planner(loop.base, seed=0).planner, TemporalEnsemble)
    loop.collect_until(SCHEDULE[1], loop.base, stage=1)  # rollouts reset finished envs one by one
    assert loop.minutes(sum(e.length for e in loop.episodes(loop.data_dir))) >= SCHEDULE[1]
    assert json.loads((tmp_path / "state.json").read_text())["config"]["planner_overrides"]["temporal_ensemble"] == 0.5


#: what a run of the default settings recorded before the loop's parts had their own configs (a run recorded so
#: must resume: the record of the same settings may not change)
RECORDED_DEFAULTS = {"freeze": "dynamics_only", "init": "base", "episodes_per_eval": 8, "num_envs": 8,
                     "heldout_episodes": 4, "planner_preset": None, "epochs": 3, "windows_per_epoch": 6000,
                     "batch_size": 32, "lr": 0.0002, "warmup_steps": 50, "seed": 0, "collect_perturbation": None,
                     "num_samples": None, "iterations": None, "init_std": None, "warm_start": None,
                     "temporal_ensemble": None}


def test_the_parts_settings_are_their_own_and_recorded_as_before() -> None:
    """AdaptConfig nests the finetuner's settings (a FinetuneConfig) and the evaluator's (an EvaluationConfig); the
    flat fields still set them (deprecated, with a warning; ``freeze`` without), and a run records the same settings
    as it did before, so runs recorded then resume."""
    from simdist.workflows.adaptation import default_parts
    from simdist.workflows.loop_parts import NoEvaluation, ProtocolEvaluator

    task = make_task("toy-reach")

    def recorded(cfg: AdaptConfig) -> dict[str, object]:
        return AdaptationLoop.stage_settings(SimpleNamespace(cfg=cfg, task=task), 0)["config"]

    assert recorded(AdaptConfig()) == RECORDED_DEFAULTS
    budget = {"freeze": "dynamics,encoder", "epochs": 1, "windows_per_epoch": None, "batch_size": 16, "lr": 1e-3,
              "warmup_steps": 0, "decay_steps": 400_000}
    nested = AdaptConfig(finetune=FinetuneConfig(**budget), evaluation=EvaluationConfig(trials=0, workers=2))
    with pytest.warns(FutureWarning, match="AdaptConfig: epochs is deprecated; use finetune.epochs"):
        flat = AdaptConfig(**budget, episodes_per_eval=0, eval_workers=2)  # type: ignore[arg-type]
    assert flat == nested == AdaptConfig(finetune=budget, evaluation={"trials": 0, "workers": 2})  # type: ignore[arg-type]
    assert recorded(nested) == {**RECORDED_DEFAULTS, **budget, "episodes_per_eval": 0}
    assert nested.freeze == "dynamics,encoder" and nested.finetuning.freeze is nested.freeze_policy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert AdaptConfig(freeze="all").finetune == FinetuneConfig(freeze="all")  # the short form: no warning
    assert isinstance(default_parts(nested).evaluator, NoEvaluation)
    assert default_parts(AdaptConfig(evaluation=EvaluationConfig(trials=3, workers=2), seed=4)).evaluator == \
        ProtocolEvaluator(3, 8, 5, 2)
    for bad, message in (({"finetune": {"epochs": 0}}, r"finetune.epochs must be an integer in \[1, "),
                         ({"finetune": {"lr": float("nan")}}, "finetune.lr must be a positive finite number"),
                         ({"finetune": {"end_lr": 1e-5}}, "finetune.end_lr is not a setting of the loop's finetuning"),
                         ({"finetune": FinetuneConfig(value_target="label")}, "finetune.value_target is not"),
                         ({"evaluation": {"trials": -1}}, r"evaluation.trials must be an integer in \[0, 100000\]"),
                         ({"evaluation": {"passes": 2}}, "evaluation.passes is not a setting of the evaluation")):
        with pytest.raises(ValueError, match=message):
            AdaptConfig(**bad)  # type: ignore[arg-type]


def test_adapt_command_line_nested_and_flat_options_are_one_run(toy_model: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``simdist adapt``: ``--finetune.KEY`` and ``--evaluation.KEY`` set the parts' settings; the flat options of
    before (``--epochs``, ``--episodes_per_eval``, ...) still do, with a warning, so a run started with them resumes
    under the nested ones with nothing run again; a bad value is refused naming the nested option."""
    from simdist.cli import main

    common = ["adapt", "--task", "toy-reach", "--agent", toy_model, "--real", "real", "--schedule", "0",
              "--out", str(tmp_path / "run"), "--num_envs", "2", "--heldout_episodes", "1",
              "--planner.num_samples", "8", "--planner.iterations", "1"]
    with pytest.warns(FutureWarning, match="--episodes_per_eval is deprecated; use --evaluation.trials"):
        assert main([*common, "--episodes-per-eval", "1", "--epochs", "1", "--lr", "1e-3"]) == 0
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["stages"][0]["settings"]["config"]["episodes_per_eval"] == 1 and state["stages"][0]["trials"] == 1
    assert main([*common, "--evaluation.trials", "1", "--finetune.epochs", "1", "--finetune.lr", "1e-3"]) == 0
    assert json.loads((tmp_path / "run" / "state.json").read_text())["stages"] == state["stages"]  # kept, not rerun
    capsys.readouterr()
    for option in ("--epochs", "--finetune.epochs", "--episodes_per_eval", "--evaluation.trials"):
        with pytest.raises(SystemExit) as exit_info, warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            main([*common, option, "0" if "epochs" in option else "-1"])
        assert exit_info.value.code == 2
        low = 1 if "epochs" in option else 0
        assert f"error: {option[2:]} must be an integer in [{low}, " in capsys.readouterr().err
