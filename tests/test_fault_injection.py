"""Fault injection (slow): SIGKILL each long-running command at seeded points in different phases, rerun it,
and require the result of an uninterrupted run: the same episodes bit for bit (ids and arrays), the same
index, statistics and state files, the same weights, no temporaries left and no id lost or duplicated.

Each kill is triggered by the command's progress on disk (a file appearing) plus a seeded random delay, so
the points land in the intended phases on a loaded machine too. Before each rerun, half-written
temporaries are planted where a kill inside an atomic write would leave them; the rerun must remove them.
Two further tests rebuild, file by file, the disk state of a kill between two writes that random kills
rarely hit (a committed shard not yet indexed; a committed part not yet in ``generate.json``; logged
episodes whose labels are not yet in ``state.json``).

Run with ``pytest -m slow tests/test_fault_injection.py -s`` (about 9 minutes on two cores); the reports
are printed, and written as JSON to ``$SIMDIST_FAULT_REPORT`` when set.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest
from fault_harness import (
    FaultReport,
    Scenario,
    duplicate_or_missing_ids,
    exists,
    go2_demo,
    go2_generate,
    inject,
    leftover_temporaries,
    resume_lines,
    run,
    simdist_command,
    tiny_checkpoint,
    toy_adapt,
    toy_demos,
    toy_export,
    toy_fit,
    toy_generate,
    ur5e_generate,
)

pytestmark = pytest.mark.slow

TOY_TRANSITIONS = 20_000
_REPORTS: list[dict] = []


def _record(reports: list[FaultReport]) -> None:
    for r in reports:
        print(r.summary(), "|", r.extra)
        _REPORTS.append(asdict(r))
    target = os.environ.get("SIMDIST_FAULT_REPORT")
    if target:
        Path(target).write_text(json.dumps(_REPORTS, indent=1, default=str))


def _kill_each_point(scn: Scenario, ref: Path, root: Path, seed: int) -> list[FaultReport]:
    reports = [inject(scn, ref, root / f"kill-{k}", point, seed + k, root / "runs.log")
               for k, point in enumerate(scn.points)]
    _record(reports)
    for r in reports:
        assert r.killed, f"{r.phase}: the command finished before the kill at {r.delay:.2f} s"
        assert r.ok, r.summary()
    return reports


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("faults")


@pytest.fixture(scope="module")
def toy_ref(root: Path) -> Path:
    """An uninterrupted ``simdist generate --task toy-reach``: the reference, and the data of the fit."""
    out = root / "toy-generate" / "ref"
    run(toy_generate(TOY_TRANSITIONS).command(out, False), root / "toy-generate" / "runs.log").check()
    return out


@pytest.fixture(scope="module")
def fit_ref(root: Path, toy_ref: Path) -> Path:
    out = root / "fit" / "ref"
    run(toy_fit(toy_ref).command(out, False), root / "fit" / "runs.log").check()
    return out


@pytest.fixture(scope="module")
def toy_model(root: Path, fit_ref: Path) -> Path:
    """The world model of the reference fit's last epoch, as a Hub folder."""
    last = sorted((fit_ref / "epochs").glob("end-*.ckpt"))[-1]
    out = root / "toy-model"
    run(simdist_command("export", "--ckpt", str(last), "--out", str(out)), root / "export.log").check()
    return out


@pytest.fixture(scope="module")
def adapt_ref(root: Path, toy_model: Path) -> Path:
    out = root / "adapt" / "ref"
    run(toy_adapt(toy_model).command(out, False), root / "adapt" / "runs.log").check()
    return out


def test_generate_toy_reach_killed(root: Path, toy_ref: Path) -> None:
    _kill_each_point(toy_generate(TOY_TRANSITIONS), toy_ref, root / "toy-generate", seed=10)


def _rebuilt_state(scn: Scenario, ref: Path, out: Path, phase: str, on_disk: str, log: Path) -> FaultReport:
    """Rerun ``scn`` on the disk state rebuilt in ``out`` and compare it with ``ref``."""
    rerun = run(scn.command(out, True), log).check()
    report = FaultReport(scn.name, 0.0, True, phase, rerun.seconds, differences=scn.compare(ref, out),
                         leftovers=leftover_temporaries(out), id_problems=duplicate_or_missing_ids(out),
                         extra={"on_disk_at_kill": on_disk, "rerun_said": resume_lines(rerun.log, out)})
    _record([report])
    assert report.ok, report.summary()
    return report


def test_generate_toy_reach_shard_renamed_not_indexed(root: Path, toy_ref: Path) -> None:
    """The kill between a shard's rename and the rewrite of ``dataset.json``: the reopened writer indexes the
    shard from its contents, with the same statistics."""
    scn = toy_generate(TOY_TRANSITIONS)
    out = root / "toy-generate" / "unindexed"
    killed = run(scn.command(out, False), root / "toy-generate" / "runs.log", kill_after=0.2,
                 kill_when=lambda: exists("dataset.json")(out))
    assert killed.killed and not (out / "episodes-000000.tar").exists()
    for tmp in out.glob("*.tar.tmp"):
        tmp.unlink()
    shutil.copy(toy_ref / "episodes-000000.tar", out / "episodes-000000.tar")  # the shard as committed
    _rebuilt_state(scn, toy_ref, out, "between a shard's rename and the rewrite of dataset.json (disk state "
                   "rebuilt)", "episodes-000000.tar complete, dataset.json listing no shard",
                   root / "toy-generate" / "runs.log")


def test_generate_go2_killed(root: Path) -> None:
    scn = go2_generate()
    ref = root / "go2-generate" / "ref"
    run(scn.command(ref, False), root / "go2-generate" / "runs.log").check()
    _kill_each_point(scn, ref, root / "go2-generate", seed=20)

    # the kill between a part's last shard and generate.json: the part is replayed, nothing rewritten,
    # and its entry (episodes, transitions, fractions) is what the uninterrupted run recorded
    out = root / "go2-generate" / "part-not-recorded"
    shutil.copytree(ref, out)
    state = json.loads((out / "generate.json").read_text())
    del state["parts"]["part-0002"], state["summary"]
    (out / "generate.json").write_text(json.dumps(state))
    _rebuilt_state(scn, ref, out, "between part 3's last shard and generate.json (disk state rebuilt)",
                   "all shards complete, generate.json lacking part 3", root / "go2-generate" / "runs.log")


def test_fit_killed(root: Path, toy_ref: Path, fit_ref: Path) -> None:
    _kill_each_point(toy_fit(toy_ref), fit_ref, root / "fit", seed=30)


def test_fit_killed_with_loader_workers(root: Path, toy_ref: Path) -> None:
    """The same with two loader worker processes and validation every 10 steps (as the Go2 recipes run)."""
    scn = toy_fit(toy_ref, workers=2)
    ref = root / "fit-workers" / "ref"
    run(scn.command(ref, False), root / "fit-workers" / "runs.log").check()
    _kill_each_point(scn, ref, root / "fit-workers", seed=35)


def test_adapt_killed(root: Path, toy_model: Path, adapt_ref: Path) -> None:
    _kill_each_point(toy_adapt(toy_model), adapt_ref, root / "adapt", seed=40)


def test_adapt_labels_committed_with_the_episodes(root: Path, toy_model: Path, adapt_ref: Path) -> None:
    """Kills after a shard of logged episodes was committed but before ``state.json`` had their labels:
    (i) the held-out set written, no state yet; (ii) stage 1's last chunk written, its labels missing."""
    scn = toy_adapt(toy_model)
    first = root / "adapt" / "heldout-only"
    first.mkdir(parents=True)
    shutil.copytree(adapt_ref / "heldout-data", first / "heldout-data")
    second = root / "adapt" / "chunk-unlabelled"
    second.mkdir(parents=True)
    for name in ("heldout-data", "real-data"):
        shutil.copytree(adapt_ref / name, second / name)
    state = json.loads((adapt_ref / "state.json").read_text())
    state["stages"] = state["stages"][:1]
    last = set(json.loads((second / "real-data" / "dataset.json").read_text())["shards"][-1]["episode_ids"])
    state["labels"]["real"] = {k: v for k, v in state["labels"]["real"].items() if int(k) not in last}
    (second / "state.json").write_text(json.dumps(state))
    _rebuilt_state(scn, adapt_ref, first, "after the held-out set was committed, before state.json (disk state "
                   "rebuilt)", "heldout-data complete, no state.json", root / "adapt" / "runs.log")
    _rebuilt_state(scn, adapt_ref, second, "after stage 1's last chunk was committed, before its labels reached "
                   "state.json (disk state rebuilt)", f"real-data complete, labels of episodes {sorted(last)} "
                   "missing from state.json", root / "adapt" / "runs.log")


def test_demo_killed(root: Path) -> None:
    """The Go2 demo (its adaptation loop on the zoo model, small scale), killed in each phase and rerun."""
    scn = go2_demo()
    ref = root / "demo" / "ref"
    run(scn.command(ref, False), root / "demo" / "runs.log").check()
    _kill_each_point(scn, ref, root / "demo", seed=50)


def test_generate_ur5e_with_its_critic_killed(root: Path) -> None:
    """UR5e peg data: killed while the expert critic is fitted, once it is saved, and between the two parts."""
    scn = ur5e_generate()
    ref = root / "ur5e-generate" / "ref"
    run(scn.command(ref, False), root / "ur5e-generate" / "runs.log").check()
    _kill_each_point(scn, ref, root / "ur5e-generate", seed=60)


@pytest.fixture(scope="module")
def baseline_folders(root: Path, toy_ref: Path) -> Path:
    """An untrained folder of each baseline agent on the toy world model (the reference data's statistics)."""
    from tests.helpers import toy_world_model, untrained_agents

    out = root / "baselines"
    for name, agent in untrained_agents(toy_world_model(toy_ref)).items():
        if name in ("iql", "rlpd", "diffusion_policy"):
            agent.save_pretrained(out / name)
    return out


@pytest.mark.parametrize("agent", ["iql", "rlpd", "diffusion_policy"])
def test_adapt_baseline_killed(agent: str, root: Path, baseline_folders: Path) -> None:
    """The adaptation loop of a baseline agent (its encoder frozen: ``--freeze heads_only``), killed in each phase."""
    scn = toy_adapt(baseline_folders / agent, agent.upper(), freeze="heads_only")
    ref = root / f"adapt-{agent}" / "ref"
    run(scn.command(ref, False), root / f"adapt-{agent}" / "runs.log").check()
    _kill_each_point(scn, ref, root / f"adapt-{agent}", seed=70 + len(agent))


def test_demos_killed(root: Path) -> None:
    """``simdist demos`` with the toy expert, killed before, between and near the end of its committed chunks."""
    scn = toy_demos()
    ref = root / "demos" / "ref"
    run(scn.command(ref, False), root / "demos" / "runs.log").check()
    _kill_each_point(scn, ref, root / "demos", seed=80)


def test_export_killed(root: Path) -> None:
    """``simdist export`` over an earlier export holding a user's file, killed while reading the checkpoint and
    while writing the new folder: the rerun gives the uninterrupted export, the user's file is kept and no
    temporary is left beside the folder."""
    scn = toy_export(tiny_checkpoint(root / "export" / "toy.ckpt"))
    ref = root / "export" / "ref"
    run(scn.command(ref, False), root / "export" / "runs.log").check()
    assert (ref / "model" / "NOTES.md").read_text() == "the user's notes\n"
    _kill_each_point(scn, ref, root / "export", seed=60)
