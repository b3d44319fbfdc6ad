"""Demonstrations (``simdist.workflows.demos.record_demos``, ``simdist demos``): the toy PD expert on the real
profile."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simdist import cli
from simdist.components.tasks.toy_reach import PDPolicy, ToyReachTask
from simdist.data import read_dataset_info
from simdist.workflows.demos import DEMO_SOURCE, record_demos
from tests.helpers import episodes_of

pytestmark = pytest.mark.usefixtures("single_thread")

EPISODES, ENVS = 3, 2


def same_episodes(a: list, b: list) -> bool:
    return [e.episode_id for e in a] == [e.episode_id for e in b] and all(
        np.array_equal(x.actions, y.actions) and np.array_equal(x.obs["state"], y.obs["state"]) for x, y in zip(a, b))


@pytest.fixture(scope="module")
def task() -> ToyReachTask:
    return ToyReachTask()  # the proxy-real profile


@pytest.fixture(scope="module")
def recorded(task: ToyReachTask, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("demos") / "toy"
    return out, record_demos(task, task.builtin_agent("expert"), EPISODES, out, seed=0, num_envs=ENVS)


def test_toy_task_provides_its_expert(task: ToyReachTask) -> None:
    assert isinstance(task.builtin_agent("expert"), PDPolicy)
    assert task.builtin_agent("scripted:retuned") is None and task.builtin_agent("some/model") is None


def test_records_successful_demos_with_their_meta(recorded: tuple[Path, dict]) -> None:
    out, summary = recorded
    eps = episodes_of(out)
    assert len(eps) == EPISODES == summary["episodes"] == summary["written"]
    assert all(ep.meta["success"] is True and ep.meta["source"] == DEMO_SOURCE for ep in eps)
    assert all(ep.expert.all() for ep in eps)  # the demonstrator's own actions: expert-flagged
    assert summary["steps"] == sum(len(ep) for ep in eps)
    info = read_dataset_info(out)
    assert summary["attempts"] == EPISODES + len(info["dropped_episode_ids"]) >= EPISODES  # failures are dropped
    assert summary["success_rate"] == pytest.approx(EPISODES / summary["attempts"])
    assert info["metadata"]["demos"] == {"task": "toy-reach:real", "seed": 0, "successful_only": True}


def test_rerun_of_a_complete_folder_does_nothing(recorded: tuple[Path, dict], task: ToyReachTask) -> None:
    out, summary = recorded
    before = (out / "dataset.json").read_text()
    again = record_demos(task, task.builtin_agent("expert"), EPISODES, out, seed=0, num_envs=ENVS)
    assert (out / "dataset.json").read_text() == before
    assert again["written"] == 0 and again["episodes"] == EPISODES and again["attempts"] == summary["attempts"]


def test_same_seed_same_demos_and_an_interrupted_run_resumes_to_them(recorded: tuple[Path, dict],
                                                                     task: ToyReachTask, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = recorded
    expert = task.builtin_agent("expert")
    import simdist.workflows.rollout as rollout

    collect, calls = rollout.collect_episodes, []

    def killed_after_one_chunk(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return collect(*args, **kwargs)

    monkeypatch.setattr(rollout, "collect_episodes", killed_after_one_chunk)
    with pytest.raises(KeyboardInterrupt):
        record_demos(task, expert, EPISODES, tmp_path / "b", seed=0, num_envs=ENVS)
    assert len(episodes_of(tmp_path / "b")) < EPISODES
    monkeypatch.undo()
    record_demos(task, expert, EPISODES, tmp_path / "b", seed=0, num_envs=ENVS)
    assert same_episodes(episodes_of(tmp_path / "b"), episodes_of(out))

    other = record_demos(task, expert, EPISODES, tmp_path / "c", seed=1, num_envs=ENVS)
    assert other["episodes"] == EPISODES and not same_episodes(episodes_of(tmp_path / "c"), episodes_of(out))


def test_all_attempts_keep_failures_labelled(task: ToyReachTask, tmp_path: Path) -> None:
    summary = record_demos(task, task.builtin_agent("expert"), 4, tmp_path / "all", seed=0, num_envs=4,
                           successful_only=False)
    eps = episodes_of(tmp_path / "all")
    assert len(eps) == summary["episodes"] == summary["attempts"] == 4
    assert summary["successes"] == sum(ep.meta["success"] for ep in eps)


@pytest.mark.parametrize(("kwargs", "option"), [
    ({"episodes": 0}, "episodes"), ({"num_envs": 0}, "num_envs"), ({"episodes": 2.5}, "episodes"),
    ({"max_attempts": 2}, "max_attempts"), ({"seed": "x"}, "seed"),
])
def test_bad_input_is_refused_naming_the_option(task: ToyReachTask, tmp_path: Path, kwargs: dict,
                                                option: str) -> None:
    args = {"episodes": 3, "num_envs": 2, **kwargs}
    with pytest.raises(ValueError, match=option):
        record_demos(task, task.builtin_agent("expert"), args.pop("episodes"), tmp_path / "d", **args)
    assert not (tmp_path / "d").exists()


def test_bad_out_folders_are_refused(recorded: tuple[Path, dict], task: ToyReachTask, tmp_path: Path) -> None:
    expert = task.builtin_agent("expert")
    (tmp_path / "file").write_text("x")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("x")
    for folder, why in ((tmp_path / "file", "is a file"), (tmp_path / "busy", "not empty")):
        with pytest.raises(ValueError, match=f"out .*{why}"):
            record_demos(task, expert, 1, folder)
    with pytest.raises(ValueError, match="seed=0, not 5"):
        record_demos(task, expert, EPISODES, recorded[0], seed=5, num_envs=ENVS)
    with pytest.raises(TypeError, match="agent"):
        record_demos(task, object(), 1, tmp_path / "e")


def test_gives_up_after_max_attempts(task: ToyReachTask, tmp_path: Path) -> None:
    def never_there(obs: dict) -> np.ndarray:
        return np.zeros((len(obs["state"]), 2), np.float32)

    with pytest.raises(RuntimeError, match="only 0 of 1 successful demos after max_attempts=2"):
        record_demos(task, never_there, 1, tmp_path / "f", num_envs=2, max_attempts=2)
    assert read_dataset_info(tmp_path / "f")["dropped_episodes"] == 2  # the attempts stay recorded


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    argv = ["demos", "--task", "toy-reach", "--agent", "expert", "--episodes", "2", "--out", str(out),
            "--num-envs", "2", "--json"]
    assert cli.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["episodes"] == 2 and read_dataset_info(out)["metadata"]["demos"]["task"] == "toy-reach:real"
    with pytest.raises(SystemExit):
        cli.main(["demos", "--task", "toy-reach", "--agent", "expert", "--episodes", "0", "--out", str(out)])
    assert "--episodes" in capsys.readouterr().err
