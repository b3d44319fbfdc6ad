"""The Go2 demo (``simdist demo``) at smoke scale, its CLI dispatch, and the rollout videos."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import simdist.envs  # noqa: F401 - first, so that MUJOCO_GL defaults to egl before mujoco is imported

pytest.importorskip("mujoco.batch")

from simdist.components.tasks.go2 import Go2Task  # noqa: E402
from simdist.workflows import rollout  # noqa: E402
from tests.helpers import json_differences  # noqa: E402


def _demo(argv: list[str]) -> int:
    from simdist.cli import main

    return main(["demo", "--task", "go2", *argv])


SMOKE = ["--minutes", "0.05", "--trials", "1", "--envs", "2", "--num-samples", "4", "--iterations", "1",
         "--epochs", "1", "--windows-per-epoch", "64", "--batch-size", "8", "--max-steps", "60", "--no-video"]


@pytest.fixture(scope="module")
def go2_model(tmp_path_factory: pytest.TempPathFactory, single_thread: None) -> str:
    """A tiny untrained world model on the Go2 observation spec (proprio 35, extero 315, 12 actions, command 3)."""
    from simdist.model.config import WorldModelConfig
    from simdist.model.world_model import WorldModel

    mlp = {"name": "mlp", "kwargs": {"hidden": [16]}}
    cfg = WorldModelConfig(obs_spec={"proprio": [35], "extero": [315]}, action_dim=12, command_dim=3, history=4,
                           horizon=3, latent_dim=8, encoder=mlp, dynamics=mlp, reward_head=mlp, value_head=mlp,
                           policy_head={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 2}})
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("go2-demo-model") / "wm"
    WorldModel(cfg).save_pretrained(path)
    return str(path)


def _renderer_available() -> bool:
    from simdist.offscreen import offscreen_gl_error

    return offscreen_gl_error() is None


def test_demo_smoke_and_resume(go2_model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    assert _demo(["--model", go2_model, *SMOKE, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "[go2-demo]" in text and "ETA" in text and "| zero-shot |" in text
    results = json.loads((out / "results.json").read_text())
    assert set(results["rows"]) == {"zero_shot", "adapted"}
    for row in results["rows"].values():
        for key in ("forward_progress", "success_rate", "fall_rate", "heldout_consistency", "minutes"):
            assert math.isfinite(row[key]), (key, row)
        assert row["value_auc"] is None or 0.0 <= row["value_auc"] <= 1.0
    assert results["rows"]["zero_shot"]["minutes"] == 0.0 and results["rows"]["adapted"]["minutes"] >= 0.05
    assert results["course_length"] == pytest.approx(1.82)
    assert "| adapted (dynamics only) |" in (out / "results.md").read_text()
    assert (out / "curve.png").exists() and not (out / "rollout_zero_shot.gif").exists()

    def no_collection(*args: object, **kwargs: object) -> None:
        raise AssertionError("a finished demo must not collect again")

    monkeypatch.setattr(rollout, "collect_episodes", no_collection)
    assert _demo(["--model", go2_model, *SMOKE, "--out", str(out)]) == 0
    assert "resuming: 2 of 2 stages done" in capsys.readouterr().out
    assert json.loads((out / "results.json").read_text())["rows"] == results["rows"]


def test_demo_rerun_in_a_fresh_folder_writes_the_same_results_byte_for_byte(go2_model: str, tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]
                                                                           ) -> None:
    """Same command, same seed, same numbers: ``results.json`` and ``results.md`` hold no wall-clock time
    (that goes to ``timing.json``), so a second run of the same command rewrites them byte for byte."""
    out = tmp_path / "demo"
    argv = ["--model", go2_model, *SMOKE, "--out", str(out)]
    assert _demo(argv) == 0
    first = {name: (out / name).read_bytes() for name in ("results.json", "results.md")}
    timing = json.loads((out / "timing.json").read_text())
    assert timing["seconds"] > 0 and "eval-zero-shot" in timing["phases"]
    out.rename(tmp_path / "first")
    assert _demo(argv) == 0
    assert {name: (out / name).read_bytes() for name in first} == first
    results = json.loads(first["results.json"])
    assert "seconds" not in results and results["provenance"]["torch"] == torch.__version__
    text = capsys.readouterr().out
    assert ("No difference" in text) == results["intervals_overlap"]


def test_demo_through_the_pipeline_writes_the_numbers_of_before_the_move(go2_model: str, tmp_path: Path) -> None:
    """The smoke command's ``results.json`` as main's Go2 demo wrote it before the demo pipeline (commit e8d0851,
    the same tiny model): every number equal on the recording's CPU, and within 1 % on another one (AVX-512
    rounds otherwise, and the walk carries it on); the settings gained the options every task's demo takes and the
    provenance names the code, so both are left out, and the folders are those of the recording."""
    out = tmp_path / "demo"
    assert _demo(["--model", go2_model, *SMOKE, "--out", str(out)]) == 0
    recorded = "/work/data-demo/go2"
    text = (Path(__file__).parent / "data" / "go2_demo_golden.json").read_text()
    expected = json.loads(text.replace(f"{recorded}/wm", go2_model).replace(f"{recorded}/demo", str(out)))
    got = json.loads((out / "results.json").read_text())
    for key in ("settings", "provenance"):
        expected.pop(key), got.pop(key)
    assert json_differences(got, expected, rel=0.01) == []


def test_missing_model_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="simdist zoo list"):
        _demo(["--model", str(tmp_path / "nowhere"), *SMOKE, "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def test_demo_dispatch(monkeypatch: pytest.MonkeyPatch) -> None:
    from simdist import cli
    from simdist.workflows import demo_pipeline

    calls: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(demo_pipeline, "run_demo", lambda hook, args: calls.append((hook.task_name, args.real)))
    assert cli.main(["demo", "--task", "toy-reach", "--quick"]) == 0
    assert cli.main(["demo", "--real", "lag"]) == 0  # without --task: the task where the demo shows the effect
    assert cli.main(["demo", "--task=go2", "--trials", "2"]) == 0
    assert calls == [("toy-reach", "lag"), ("toy-reach", "lag"), ("go2", "ptfe-slope-5.7deg")]


def test_default_tasks() -> None:
    from simdist.tasks import default_task

    assert default_task("default_demo") == "toy-reach"  # simdist demo
    assert default_task() == "go2"  # simdist bench, train-expert and the task commands


def test_render_frames() -> None:
    if not _renderer_available():
        pytest.skip("MuJoCo offscreen rendering (EGL) is unavailable here")
    from simdist.components.tasks.go2.render import render_frames

    def wiggle(obs: dict[str, np.ndarray]) -> np.ndarray:
        return np.full((len(obs["proprio"]), 12), 0.5, np.float32)

    frames = render_frames(wiggle, "ptfe-slope-5.7deg", 0.3, 10, width=64, height=48, every=2)
    assert frames.shape == (6, 48, 64, 3) and frames.dtype == np.uint8
    assert any(not np.array_equal(frames[0], f) for f in frames[1:])


def test_write_gif_round_trip(tmp_path: Path) -> None:
    import imageio.v3 as iio

    from simdist.offscreen import label_frames, write_gif

    frames = np.zeros((4, 24, 32, 3), np.uint8)
    for i in range(4):
        frames[i, :, 8 * i: 8 * i + 8] = (255, 128, 0)
    path = write_gif(label_frames(frames, "hi"), tmp_path / "sub" / "clip.gif", fps=10, hold_s=0.5)
    back = iio.imread(path, index=None)
    assert back.shape[:3] == (4, 24, 32)
    assert not np.array_equal(back[0], back[-1])
    assert [p.name for p in path.parent.iterdir()] == ["clip.gif"]  # no temporary file left behind


def test_collection_logs_the_actions_of_the_acting_planner(go2_model: str, tmp_path: Path) -> None:
    """A tiny Go2 collection with the paper's planner (official warm start, small budget): every logged action
    is what that planner chose (zero in the standing phase), each episode names the planner, and the progress
    lines name it and give an ETA."""
    from dataclasses import dataclass, fields, replace

    from simdist.components.planners.mppi import MPPIPlanner
    from simdist.data import iter_episodes
    from simdist.workflows.adaptation import AdaptationLoop, AdaptConfig, default_parts
    from simdist.workflows.loop_parts import EvaluationConfig, ScheduleCollector

    task = Go2Task(profile="ptfe-slope-5.7deg", episode_length_s=0.7)  # 25 standing + 10 walking steps
    cfg = AdaptConfig(schedule=[0.0, 0.02], num_envs=2, planner_preset="paper",
                      planner_overrides={"warm_start": "official", "num_samples": 4, "iterations": 2},
                      heldout_episodes=2, evaluation=EvaluationConfig(trials=1))
    acted: list[np.ndarray] = []
    collectors: list[object] = []

    @dataclass(frozen=True)
    class RecordingCollector(ScheduleCollector):
        """The default collection, keeping every action its actor chose."""

        def actor(self, run: Any, agent: Any, seed: int) -> Any:
            collector = super().actor(run, agent, seed)
            act = collector.act

            def act_and_keep(history: object) -> torch.Tensor:
                action = act(history)
                acted.append(action.detach().cpu().numpy().copy())
                return action

            collector.act = act_and_keep
            collectors.append(collector)
            return collector

    parts = default_parts(cfg)
    default = parts.collector
    assert isinstance(default, ScheduleCollector)
    recording = RecordingCollector(**{f.name: getattr(default, f.name) for f in fields(default)})
    lines: list[str] = []
    loop = AdaptationLoop(go2_model, task, tmp_path / "run", cfg, log=lines.append,
                          parts=replace(parts, collector=recording))
    loop.collect_until(0.02, loop.base, 1)
    planner = collectors[0].planner
    assert isinstance(planner, MPPIPlanner) and planner.warm_start == "official"
    assert (planner.num_samples, planner.iterations, planner.init_std) == (4, 2, 2.0)
    steps = np.stack(acted)  # (ticks, envs, 12)
    episodes = sorted(iter_episodes(str(loop.data_dir), shuffle_shards=False, split_by_node=False,
                                    split_by_worker=False), key=lambda ep: ep.episode_id)
    assert [ep.episode_id for ep in episodes] == [0, 1] and len(collectors) == 1
    for env, ep in enumerate(episodes):
        want = steps[: len(ep), env].copy()
        want[: task.standing_steps] = 0.0
        np.testing.assert_array_equal(ep.actions, want)
        assert np.abs(ep.actions[task.standing_steps:]).max() > 0
        assert ep.meta["planner"]["warm_start"] == "official" and ep.meta["planner"]["num_samples"] == 4
        assert not ep.meta["planner"].get("temporal_ensemble")
    assert any("acting planner: mppi 4+2 samples x 2 iterations, std 2.0, warm start official, no ensembling" in line
               for line in lines)
    assert "ETA" in lines[-1] and "70 of 60 steps logged" in lines[-1]
