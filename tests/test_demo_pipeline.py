"""One demo pipeline (:mod:`simdist.workflows.demo_pipeline`): the toy's demo through it writes, for the same seed and
settings, the very ``results.json`` the toy's hand-built pipeline wrote before the move; every task takes the same
options; the plot draws each bar's 95 % interval.

``tests/data/toy_demo_golden/`` holds what the toy demo of main wrote before the move (commit e8d0851, one torch
thread): ``a``, ``b`` and ``c`` by ``run_toy_pipeline`` at the ``TEST`` scale, ``a`` the whole loop on ``lag`` with
the default settings (seed 0), ``b`` from ``a``'s pretrained model on ``real`` with exploration noise, an anchor
and half simulation data in finetuning (seed 1), ``c`` every model and data lever, an ensemble with the
disagreement penalty and both diagnostics (seed 2); ``quick-cli`` by ``simdist demo --task toy-reach --quick
--seed 3``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from simdist.components.tasks.toy_reach.demo import TEST, ToyOptions, run_toy_pipeline

GOLDEN = Path(__file__).parent / "data" / "toy_demo_golden"
LEVERS = ToyOptions(dynamics_context=2, dynamics_hidden=(32, 32), history=6, perturb_sigma=1.5, perturb_steps=8,
                    perturbed_repeat=2, history_dropout=0.2, consistency_decay=0.8, ensemble=2, disagreement=0.5,
                    ranking=True, ranking_states=4)


#: where the recording ran (``b`` names the folder of ``a``'s pretrained model)
RECORDED_IN = "/work/data-demo/golden"


def _same(out: Path, name: str) -> None:
    expected = (GOLDEN / f"{name}.json").read_text().replace(RECORDED_IN, str(out.parent))
    assert (out / "results.json").read_text() == expected


@pytest.mark.slow
@pytest.mark.usefixtures("single_thread")
def test_toy_demo_writes_the_results_of_before_the_move(tmp_path: Path) -> None:
    run_toy_pipeline(tmp_path / "a", TEST, seed=0, progress=False, real="lag")
    _same(tmp_path / "a", "a")
    run_toy_pipeline(tmp_path / "b", TEST, seed=1, progress=False, real="real", pretrained=tmp_path / "a" / "toy-sim",
                     options=ToyOptions(explore=0.5, anchor=0.1, sim_mix=0.5))
    _same(tmp_path / "b", "b")
    # the loop's own files beside the demo's; the adapted model where the toy's scripts read it
    for name in ("state.json", "curve.json", "progress.png", "results.md", "toy-real/config.json"):
        assert (tmp_path / "b" / name).is_file(), name


@pytest.mark.slow
@pytest.mark.usefixtures("single_thread")
def test_a_task_without_a_hook_runs_the_generic_demo(tmp_path: Path) -> None:
    """The generic hook: the task's ``--model`` adapted by the plain loop (here the toy's model and task)."""
    import json

    from simdist.components.tasks.toy_reach.task import ToyReachTask
    from simdist.tools.demo import demo
    from simdist.workflows.demo_pipeline import DemoHook

    run_toy_pipeline(tmp_path / "a", TEST, seed=0, progress=False, pretrain_only=True)
    argv = ["--model", str(tmp_path / "a" / "toy-sim"), "--real", "lag", "--real-episodes", "2", "--trials", "2",
            "--envs", "2", "--num-samples", "16", "--iterations", "1", "--epochs", "1", "--windows-per-epoch", "64",
            "--heldout-episodes", "2", "--no-progress", "--out", str(tmp_path / "run")]
    assert demo(ToyReachTask, argv, DemoHook(ToyReachTask)) == 0
    r = json.loads((tmp_path / "run" / "results.json").read_text())
    assert r["metric"] == "return" and set(r["rows"]) == {"zero_shot", "adapted"}
    for row in r["rows"].values():
        assert row["trials"] == 2 and row["ci95"][0] <= row["value"] <= row["ci95"][1]
    assert r["rows"]["adapted"]["episodes"] == 2 and "| adapted (dynamics only) |" in (tmp_path / "run" /
                                                                                       "results.md").read_text()
    assert (tmp_path / "run" / "progress.png").is_file() and (tmp_path / "run" / "stages" / "stage-1").is_dir()


@pytest.mark.slow
@pytest.mark.usefixtures("single_thread")
def test_toy_demo_with_every_lever_writes_the_results_of_before_the_move(tmp_path: Path) -> None:
    run_toy_pipeline(tmp_path / "c", TEST, seed=2, progress=False, real="lag", options=LEVERS)
    _same(tmp_path / "c", "c")


def _common_options(task: str) -> set[str]:
    from simdist.tasks import task_class
    from simdist.workflows.demo_pipeline import DemoHook, demo_parser

    class Bare(DemoHook):
        def add_arguments(self, parser: object) -> None:  # the options every task's demo takes, none of its own
            return None

    parser = demo_parser(task_class(task), Bare(task_class(task)))
    return {s for a in parser._actions for s in a.option_strings}


def test_every_task_takes_the_same_options() -> None:
    from simdist.components.tasks.go2.demo import Go2Demo
    from simdist.workflows.demo_pipeline import demo_parser

    common = _common_options("toy-reach")
    assert common == _common_options("go2")
    for flag in ("--model", "--pretrained", "--real", "--out", "--seed", "--quick", "--pretrain-only", "--trials",
                 "--envs", "--planner", "--planner.KEY", "--num-samples", "--iterations", "--minutes",
                 "--real-episodes", "--epochs",
                 "--finetune-epochs", "--video", "--no-video", "--progress", "--no-progress", "--option",
                 "--freeze", "--overwrite"):
        assert flag in common, flag
    go2 = {s for a in demo_parser(Go2Demo().task_cls, Go2Demo())._actions for s in a.option_strings}
    assert common <= go2 and go2 - common == {"--collect-speed", "--max-steps"}  # the Go2's own


@pytest.mark.parametrize(("argv", "message"), [
    (["--video"], "--video: the toy-reach demo renders no video"),
    (["--option", "wings=2"], "--option wings: not a setting of the toy-reach demo"),
    (["--option", "ensemble=0"], "ensemble must be an integer >= 1"),
    (["--option", "dynamics_hidden=64,x"], "dynamics_hidden must be positive integer widths"),
    (["--minutes", "2", "--option", "explore=1"], "--minutes: the toy demo logs --minutes of real data"),
    (["--planner.temporal_ensemble", "0.5"], "--planner.temporal_ensemble: the toy demo's planner replans every step"),
    (["--pretrain-only", "--pretrained", "nowhere"], "--pretrain-only pretrains a model"),
    (["--freeze", "dynamics,wings"],
     "--freeze dynamics,wings: freeze='dynamics,wings' is not a freeze policy: 'wings' is not a component"),
    (["--freeze", "nothing_at_all"], "--freeze nothing_at_all:"),
])
def test_bad_demo_options_are_refused_in_one_line_before_any_work(argv: list[str], message: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from simdist.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--task", "toy-reach", *argv, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_no_video_is_an_option_of_the_toy_demo_too() -> None:
    from simdist.components.tasks.toy_reach.demo import ToyDemo
    from simdist.workflows.demo_pipeline import demo_parser, resolve

    hook = ToyDemo()
    args = demo_parser(hook.task_cls, hook).parse_args(["--no-video", "--quick", "--option", "ensemble=2",
                                                        "--option", "dynamics_hidden=[64,64]"])
    resolve(hook, args)
    assert args.video is False and args.options == ToyOptions(ensemble=2, dynamics_hidden=(64, 64))
    assert (args.trials, args.real_episodes, args.planner_overrides["num_samples"]) == (8, 8, 48)  # QUICK's


def test_the_lever_flags_become_the_demos_options() -> None:
    from results.toy.levers import command

    cmd, dry = command(["--real", "lag", "--dynamics-context", "4", "--ranking", "--ensemble", "4",
                        "--disagreement", "1.0", "--dynamics-hidden", "256,256", "--pretrained", "m", "--dry"])
    assert dry and cmd[1:] == ["demo", "--task", "toy-reach", "--real", "lag", "--pretrained", "m",
                               "--option", "dynamics_context=4", "--option", "dynamics_hidden=[256,256]",
                               "--option", "ensemble=4", "--option", "disagreement=1.0",
                               "--option", "ranking=true"]


def test_the_plot_draws_each_bars_95_percent_interval(tmp_path: Path) -> None:
    import json

    from PIL import Image

    from simdist.components.tasks.toy_reach.demo import ToyDemo
    from simdist.workflows.demo_pipeline import plot_panels

    results = json.loads((GOLDEN / "c.json").read_text())
    hook = ToyDemo()
    panels = hook.panels(results)
    assert [p.ylabel for p in panels] == ["mean episode return", "final distance to goal (m)"]
    for panel, key in zip(panels, ("return", "final_distance")):
        assert [(b.mean, [b.low, b.high]) for b in panel.bars] == [
            (results[key][k], results[f"{key}_ci95"][k]) for k in ("sim", "real_zero_shot", "real_adapted")]
    plot_panels(panels, tmp_path / "progress.png", hook.title(results))
    assert Image.open(tmp_path / "progress.png").size[0] > 500


@pytest.mark.slow
@pytest.mark.usefixtures("single_thread")
def test_the_quick_command_writes_the_results_of_before_the_move(tmp_path: Path) -> None:
    """``simdist demo --task toy-reach --quick --seed 3`` as main's toy demo wrote it (commit e8d0851, one thread)."""
    from simdist.cli import main

    assert main(["demo", "--task", "toy-reach", "--quick", "--seed", "3", "--no-progress", "--out",
                 str(tmp_path / "quick")]) == 0
    assert (tmp_path / "quick" / "results.json").read_text() == (GOLDEN / "quick-cli.json").read_text()


@pytest.mark.usefixtures("single_thread")
def test_a_rerun_needs_overwrite_which_keeps_the_users_files_and_the_freeze_ablation_trains_the_value_head(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A toy demo folder holding an earlier run is refused without ``--overwrite`` before any work; with it the
    demo replaces only its own files. ``--freeze dynamics,value`` (the ablation) trains the value head too."""
    import json

    from safetensors.torch import load_file

    from simdist.cli import main

    run_toy_pipeline(tmp_path / "a", TEST, seed=0, progress=False, pretrain_only=True)
    out = tmp_path / "run"
    argv = ["demo", "--task", "toy-reach", "--pretrained", str(tmp_path / "a" / "toy-sim"), "--real-episodes", "2",
            "--trials", "2", "--envs", "2", "--num-samples", "16", "--iterations", "1", "--epochs", "1",
            "--windows-per-epoch", "64", "--heldout-episodes", "2", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    assert "freeze" not in json.loads((out / "results.json").read_text())  # the paper's policy: not recorded
    (out / "notes.txt").write_text("mine")
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--overwrite" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before  # nothing touched
    assert main([*argv, "--overwrite", "--freeze", "dynamics,value"]) == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert json.loads((out / "results.json").read_text())["freeze"] == "dynamics,value"
    pre, post = (load_file(tmp_path / "a" / "toy-sim" / "model.safetensors"),
                 load_file(out / "toy-real" / "model.safetensors"))
    changed = {k.split(".")[0] for k in pre if pre[k].numel() and not (pre[k] == post[k]).all()}
    assert changed == {"dynamics", "value"}
