"""Same command, same seed, same numbers: evaluations, protocols and finetuning repeated bit for bit on CPU
(docs/reproducibility.md), and the intervals every evaluation table reports."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import simdist.envs  # noqa: F401 - first, so that MUJOCO_GL defaults to egl before mujoco is imported
from simdist import WorldModel
from simdist.components.agents.simdist.configuration import SimDistAgentConfig
from simdist.components.agents.simdist.modeling import SimDistAgent
from simdist.components.tasks.toy_reach import ToyReachTask
from simdist.evaluation import EvaluationResult, bootstrap_ci, compare
from simdist.model.presets import preset_config
from simdist.provenance import weights_fingerprint
from simdist.workflows.rollout import collect_episodes

ROOT = Path(__file__).resolve().parents[1]
ZOO_MODEL = ROOT / "hub" / "models" / "go2-slope"
ZOO_EXPERT = ROOT / "hub" / "experts" / "go2"
MPPI = {"planner": "mppi", "num_samples": 8, "num_policy_samples": 2, "iterations": 2, "num_elites": 3,
        "init_std": 0.5, "seed": 5}


def _agent(model: WorldModel, **settings: object) -> SimDistAgent:
    return SimDistAgent(model, SimDistAgentConfig.from_planner_dict({**MPPI, **settings}))


@pytest.fixture(scope="module")
def toy_model(single_thread: None) -> WorldModel:
    torch.manual_seed(0)
    return WorldModel(preset_config("toy")).eval()


@pytest.fixture(scope="module")
def go2_model(single_thread: None) -> WorldModel:
    """A tiny untrained world model on the Go2 observation spec, with a policy head (MPPI's policy samples)."""
    from simdist.model.config import WorldModelConfig

    mlp = {"name": "mlp", "kwargs": {"hidden": [16]}}
    cfg = WorldModelConfig(obs_spec={"proprio": [35], "extero": [315]}, action_dim=12, command_dim=3, history=4,
                           horizon=3, latent_dim=8, encoder=mlp, dynamics=mlp, reward_head=mlp, value_head=mlp,
                           policy_head={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 2}})
    torch.manual_seed(0)
    return WorldModel(cfg).eval()


# ------------------------------------------------------------------------------------------ evaluations
def test_toy_evaluation_repeats_bit_for_bit_with_the_same_agent(toy_model: WorldModel) -> None:
    """The same agent evaluated twice in one process (its planner's stream was used in between) gives the same
    trials as a fresh agent: an evaluation reseeds the controller."""
    task = ToyReachTask()
    agent = _agent(toy_model)
    first = task.evaluate(agent, trials=4, seed=3, num_envs=2)
    collect_episodes(task, agent, episodes=2, num_envs=2, seed=11)  # uses the planner's random stream
    again = task.evaluate(agent, trials=4, seed=3, num_envs=2)
    fresh = task.evaluate(_agent(toy_model), trials=4, seed=3, num_envs=2)
    assert first.values == again.values == fresh.values
    assert first.details == again.details
    other = task.evaluate(agent, trials=4, seed=4, num_envs=2)
    assert other.values != first.values  # the seed matters


def test_go2_protocol_repeats_bit_for_bit(go2_model: WorldModel) -> None:
    """A short Go2 protocol with an MPPI agent (temporal ensembling on) twice on one agent and once on a fresh
    one, on fresh envs each time: every per-trial value is identical."""
    from simdist.components.tasks.go2 import Go2Task

    task = Go2Task(profile="ptfe-slope-5.7deg", speeds=(0.3, 0.5), max_steps=40)
    agent = _agent(go2_model, temporal_ensemble=0.8, warm_start="policy")
    runs = [task.evaluate(agent, trials=2, seed=1), task.evaluate(agent, trials=2, seed=1),
            task.evaluate(_agent(go2_model, temporal_ensemble=0.8, warm_start="policy"), trials=2, seed=1)]
    protocols = [r.details["protocol"] for r in runs]
    assert protocols[0] == protocols[1] == protocols[2]
    assert runs[0].values == runs[1].values == runs[2].values


@pytest.mark.skipif(not ZOO_EXPERT.exists(), reason="the zoo expert is not bundled")
def test_go2_protocol_with_the_zoo_expert_repeats_and_ignores_thread_count() -> None:
    """A deterministic controller (the zoo expert) on the physics alone: same trials with 1 and 2 MuJoCo
    threads, in an env that ran another speed first (a reset leaves no warm start behind)."""
    from simdist.components.tasks.go2.protocol import make_course, protocol_env, run_trials
    from simdist.experts import load_policy

    expert, course = load_policy(ZOO_EXPERT), make_course(profile="ptfe-slope-5.7deg")
    progress = []
    for nthread, warm_up in ((2, False), (1, False), (2, True)):
        env = protocol_env(course, 2, 80, env_kwargs={"nthread": nthread})
        if warm_up:
            run_trials(env, expert, 0.5, course.length, seed=7, max_steps=60)
        progress.append(run_trials(env, expert, 0.3, course.length, seed=1, max_steps=80).progress)
        env.close()
    assert progress[0] == progress[1] == progress[2]


# ------------------------------------------------------------------------------------------ finetuning
def test_finetuning_twice_with_the_same_seed_gives_identical_weights(tmp_path: Path, toy_model: WorldModel) -> None:
    from simdist.components.tasks.toy_reach import generate_toy_dataset
    from simdist.data import TrajectoryDataModule

    warnings.filterwarnings("ignore", ".*(eval mode|does not have many workers|__len__).*")
    generate_toy_dataset(str(tmp_path / "data"), transitions=600, seed=0, num_envs=2, critic_epochs=1,
                         progress=False)
    model = WorldModel(preset_config("toy"))
    model.load_state_dict(toy_model.state_dict())
    model.normalizer.set_stats(TrajectoryDataModule(str(tmp_path / "data")).stats.to_dict())
    agent = SimDistAgent(model)
    noise = {"state": [0.05, 0.05, 0.05, 0.05]}  # exercises the training-noise draws too

    def finetune(seed: int) -> str:
        torch.rand(3)  # whatever ran before must not matter
        tuned = agent.finetune(tmp_path / "data", seed=seed, epochs=2, windows_per_epoch=128, batch_size=16,
                               out=tmp_path / "lightning", obs_noise=noise, lr=1e-3, warmup_steps=2)
        return weights_fingerprint(tuned.world_model)

    first = finetune(3)
    assert finetune(3) == first
    assert finetune(4) != first
    assert weights_fingerprint(model) != first  # the base model is untouched


# ------------------------------------------------------------------------------------------ tables
def test_bootstrap_interval_is_deterministic_and_tables_give_mean_ci_and_trials() -> None:
    values = [0.0, 0.1, 0.5, 0.2, 0.9]
    a, b = bootstrap_ci(values), bootstrap_ci(values)
    assert a == b and a.low <= a.mean <= a.high and a.n == 5
    assert bootstrap_ci([0.3]).low == bootstrap_ci([0.3]).high == 0.3
    wide, far = bootstrap_ci([0.0, 0.5, 1.0, 0.2]), bootstrap_ci([5.0, 5.1, 5.2])
    assert compare(wide, bootstrap_ci([0.1, 0.6, 0.8])).split(":")[1].strip().startswith("no difference")
    assert "higher" in compare(wide, far) and "do not overlap" in compare(wide, far)
    result = EvaluationResult(task="go2", metric="forward_progress", values=values, success=[False] * 5,
                              groups=["0.1 m/s"] * 2 + ["0.3 m/s"] * 3, profile="ptfe-slope-5.7deg")
    table = result.table()
    assert "| go2 on ptfe-slope-5.7deg | forward_progress: mean [95 % CI] | trials |" in table
    assert f"| all | {bootstrap_ci(values).interval('.3f')} | 5 |" in table
    assert "| 0.1 m/s |" in table and "| 2 |" in table and "| 3 |" in table


def test_provenance_records_versions_threads_and_weights(toy_model: WorldModel) -> None:
    from simdist.provenance import provenance
    from simdist.workflows.adaptation import weights_fingerprint

    info = provenance(_agent(toy_model))
    assert info["torch"] == torch.__version__ and info["torch_threads"] == torch.get_num_threads()
    assert info["model_weights"] == weights_fingerprint(toy_model) and info["mujoco"]
    commit = info["source_commit"]
    assert commit is None or len(commit.removesuffix("+dirty")) == 40
    assert "model_weights" not in provenance()
    json.dumps(info)  # goes into results.json as it is


# ------------------------------------------------------------------------------------------ the CLI, slow
@pytest.mark.slow
@pytest.mark.skipif(not ZOO_MODEL.exists(), reason="the zoo model is not bundled")
def test_simdist_evaluate_in_two_processes_gives_the_same_json(tmp_path: Path) -> None:
    """``simdist evaluate`` on the zoo model with the real-time preset, run twice in separate processes:
    the JSON (every per-trial value, the intervals) is identical."""
    cmd = [sys.executable, "-m", "simdist.cli", "evaluate", "--task", "go2", "--agent", str(ZOO_MODEL),
           "--profile", "ptfe-slope-5.7deg", "--trials", "2", "--speeds", "0.3,0.5", "--max-steps", "150",
           "--num-samples", "16", "--iterations", "1", "--init-std", "0.1", "--warm-start", "policy",
           "--temporal-ensemble", "0.8", "--json"]
    outputs = [subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout for _ in range(2)]
    first, second = (json.loads(out) for out in outputs)
    assert first == second
    assert outputs[0] == outputs[1]
    assert len(first["values"]) == 4 and np.isfinite(first["values"]).all()


def test_a_killed_finetuning_resumes_to_the_weights_of_an_uninterrupted_one(tmp_path: Path,
                                                                            toy_model: WorldModel) -> None:
    """``resumable_fit`` checkpoints (here after every batch) and a rerun with the same signature continues
    mid-epoch from the last checkpoint: the weights equal those of one uninterrupted fit, bit for bit; a
    checkpoint of another signature is not resumed."""
    import lightning as L

    from simdist.components.tasks.toy_reach import generate_toy_dataset
    from simdist.data import TrajectoryDataModule
    from simdist.training import FinetuneModule
    from simdist.training.module import resumable_fit

    warnings.filterwarnings("ignore", ".*(eval mode|does not have many workers|__len__|max_epochs).*")
    generate_toy_dataset(str(tmp_path / "data"), transitions=400, seed=0, num_envs=2, critic_epochs=1,
                         progress=False)
    cfg = toy_model.config

    class Killed(Exception):
        pass

    class KillAt(L.Callback):
        def on_train_batch_end(self, trainer: L.Trainer, *args: object) -> None:
            if trainer.global_step == 5:
                raise Killed

    def fit(root: Path, signature: dict[str, object], kill: bool = False, lr: float = 1e-3) -> str:
        torch.manual_seed(0)
        module = FinetuneModule(model=cfg.to_dict(), freeze="dynamics_only", lr=lr, warmup_steps=2,
                                decay_steps=20)
        module.world_model.load_state_dict(toy_model.state_dict())
        dm = TrajectoryDataModule(str(tmp_path / "data"), history=cfg.history, horizon=cfg.horizon, batch_size=16,
                                  windows_per_epoch=48, heldout_fraction=0.0, front_pad=cfg.history, seed=0)
        resumable_fit(module, dm, root, 3, signature, every_minutes=1e-9, callbacks=[KillAt()] if kill else None)
        return weights_fingerprint(module.world_model)

    whole = fit(tmp_path / "whole", {"run": 1})
    with pytest.raises(Killed):
        fit(tmp_path / "killed", {"run": 1}, kill=True)
    assert (tmp_path / "killed" / "resume" / "last.ckpt").is_file()
    assert fit(tmp_path / "killed", {"run": 1}) == whole
    assert not (tmp_path / "killed" / "resume").exists()  # removed once the fit ended
    with pytest.raises(Killed):  # a fit of other settings killed in the same folder
        fit(tmp_path / "other", {"run": 1, "lr": 1e-2}, kill=True, lr=1e-2)
    assert fit(tmp_path / "other", {"run": 1}) == whole  # its checkpoint is not resumed: a fresh fit
