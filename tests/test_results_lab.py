"""The lab of results/: every experiment spec names a doc section that exists, every step's command parses (its
dry run prints what it would run, or its module and shell stage exist), ``--list`` shows every experiment, and
results/README.md is the one the specs generate."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from results.__main__ import main
from results.lab import EXPERIMENTS, Experiment, Step
from results.lab.readme import PATH, render
from results.lab.run import execute, missing, resolve, run_module

REPO = Path(__file__).resolve().parents[1]


def _headings(doc: str) -> set[str]:
    text = (REPO / doc).read_text(encoding="utf-8")
    return {m.group(1).strip() for m in re.finditer(r"^#+ (.+)$", text, flags=re.MULTILINE)}


def _program(step: Step) -> list[str]:
    """The command without a leading ``env VAR=VALUE ...``."""
    argv = list(step.command)
    if argv[0] == "env":
        argv = argv[1:]
        while "=" in argv[0]:
            argv = argv[1:]
    return argv


@functools.cache
def _simdist_commands() -> str:
    """``simdist --help``: its commands, one a line, indented by two spaces."""
    return subprocess.run(resolve(["simdist", "--help"]), capture_output=True, text=True, check=True).stdout


def test_names_are_unique() -> None:
    names = [e.name for e in EXPERIMENTS]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    for e in EXPERIMENTS:
        steps = [s.name for s in e.steps]
        assert steps and len(steps) == len(set(steps)), e.name
        assert all(s.outputs for s in e.steps), f"{e.name}: a step without outputs"
        assert all(s.dry is None or s.command[:2] == ("python", "-m") for s in e.steps), f"{e.name}: dry, not -m"


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.name)
def test_doc_section_exists(experiment: Experiment) -> None:
    assert (REPO / experiment.doc).is_file(), experiment.doc
    assert experiment.section in _headings(experiment.doc), f"{experiment.doc} has no heading {experiment.section!r}"


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.name)
def test_every_step_parses(experiment: Experiment, capsys: pytest.CaptureFixture[str]) -> None:
    """Every step's dry run succeeds (a step with a dry run of its own parses its options there, else the dry run
    prints its command), and it names a module that exists (``python -m``) or a shell script's stage (``bash``)."""
    for s in experiment.steps:
        argv = _program(s)
        if argv[:2] == ["python", "-m"]:
            assert importlib.util.find_spec(argv[2]) is not None, f"{experiment.name} {s.name}: no module {argv[2]}"
        elif argv[0] == "bash":
            script = REPO / argv[1]
            assert subprocess.run(["bash", "-n", str(script)]).returncode == 0, script
            assert re.search(rf"(^|[\s|(]){re.escape(argv[2])}[|)]", script.read_text(encoding="utf-8"),
                             flags=re.MULTILINE), f"{experiment.name} {s.name}: {argv[1]} has no stage {argv[2]}"
        elif argv[0] == "simdist":
            assert f"\n  {argv[1]}" in _simdist_commands(), f"{experiment.name} {s.name}: no simdist {argv[1]}"
            configs = [argv[i + 1] for i, a in enumerate(argv) if a == "--config"]
            assert all((REPO / c).is_file() for c in configs), f"{experiment.name} {s.name}: {configs}"
        else:
            pytest.fail(f"{experiment.name} {s.name}: a step runs `python -m`, `simdist` or `bash`: {s.line}")
        capsys.readouterr()
        assert main(["run", experiment.name, s.name, "--dry-run"]) == 0, f"{experiment.name} {s.name}"
        if s.dry is None or missing(s):
            assert capsys.readouterr().out == s.line + "\n"


def test_list_shows_every_experiment(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--list"]) == 0
    out = capsys.readouterr().out
    for e in EXPERIMENTS:
        assert f"{e.name}\n" in out and f"{e.doc} § {e.section}" in out, e.name


def test_readme_is_generated_from_the_specs() -> None:
    assert PATH.read_text(encoding="utf-8") == render(EXPERIMENTS), "run: python -m results readme"
    text = PATH.read_text(encoding="utf-8")
    assert all(f"python -m results run {e.name}" in text for e in EXPERIMENTS)


def test_dry_run_prints_what_the_runner_prints(tmp_path: Path) -> None:
    """A step's dry run is its runner's own dry run, byte for byte, as a separate process prints it."""
    lab = subprocess.run([sys.executable, "-m", "results", "run", "go2-demo", "demo", "--dry-run"], cwd=REPO,
                         capture_output=True, text=True, check=True)
    old = subprocess.run([sys.executable, "-m", "results.go2.run", "demo", "--dry-run"], cwd=REPO,
                         capture_output=True, text=True, check=True)
    assert lab.stdout == old.stdout and "simdist" in lab.stdout
    assert lab.stderr.startswith("# go2-demo demo: python -m results.go2.run demo")


def test_bad_names_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "no-such-experiment"]) == 2
    assert "no experiment 'no-such-experiment'" in capsys.readouterr().err
    assert main(["run", "go2-demo", "no-such-step"]) == 2
    assert "go2-demo has no step 'no-such-step'; its steps: demo" in capsys.readouterr().err
    assert main(["run", "go2-demo", "--", "--model", "m"]) == 2
    assert "name the STEP" in capsys.readouterr().err
    assert main(["run"]) == 2


def test_a_step_runs_from_the_repository_root_with_its_options(tmp_path: Path) -> None:
    out = tmp_path / "cwd.txt"
    write = "import os, sys; open(sys.argv[1], 'w').write(os.getcwd() + ' ' + sys.argv[2])"
    step = Step("write", ("python", "-c", write, str(out)), (str(out),))
    assert execute(step, ["extra"]) == 0
    assert out.read_text() == f"{REPO} extra"
    assert execute(Step("fail", ("python", "-c", "raise SystemExit(3)"), ("-",))) == 3


def test_analysis_modules_run_as_modules() -> None:
    """An analysis module that imports a module beside it runs with ``python -m`` from the repository root."""
    done = subprocess.run([sys.executable, "-m", "results.go2.analysis.summarize_walks", "--help"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0 and "usage" in done.stdout, done.stderr
    assert all((p.parent / "__init__.py").is_file() for p in (REPO / "results").glob("*/analysis/*.py"))


def _stages(script: str) -> set[str]:
    """The stages a shell runner's ``case`` takes (``a|b)`` labels), without the ones that run several."""
    text = (REPO / script).read_text(encoding="utf-8")
    labels = re.findall(r"^  ([a-z][a-z|-]*)\)", text, flags=re.MULTILINE)  # the outer case, indented by two
    return {stage for label in labels for stage in label.split("|")} - {"all", "expert"}


def test_every_runner_subcommand_is_a_step(capsys: pytest.CaptureFixture[str]) -> None:
    """Each subcommand of the Go2 and UR5e runners and each stage of the shell runners is some experiment's step."""
    go2 = set(importlib.import_module("results.go2.run").EXPERIMENTS)
    used: dict[str, set[str]] = {}
    for e in EXPERIMENTS:
        for s in e.steps:
            argv = _program(s)
            runner, sub = (argv[2], argv[3:4]) if argv[0] == "python" else (argv[1], argv[2:3])
            used.setdefault(runner, set()).update(sub)
    assert go2 <= used["results.go2.run"], go2 - used["results.go2.run"]
    capsys.readouterr()
    assert run_module("results.ur5e.run", ["--help"]) == 0
    ur5e = set(re.search(r"\{([a-z,]+)\}", capsys.readouterr().out).group(1).split(","))  # type: ignore[union-attr]
    assert len(ur5e) > 20 and ur5e <= used["results.ur5e.run"], ur5e - used["results.ur5e.run"]
    for script in ("results/gym/run.sh", "results/toy/lag/run.sh"):
        assert _stages(script) <= used[script], _stages(script) - used[script]


def test_a_real_step_runs_through_its_runner_and_analysis_module() -> None:
    """``go2-zoo-model table``: the lab runs the Go2 runner's ``readme-table``, which runs the ``walk_ci`` analysis
    module on the committed result files (it writes nothing)."""
    done = subprocess.run([sys.executable, "-m", "results", "run", "go2-zoo-model", "table"], cwd=REPO,
                          capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    assert "python -m results.go2.analysis.walk_ci" in done.stdout
    assert "| run | forward progress (m), mean [95 % CI] | course (m) | trials | falls |" in done.stdout
    assert "| expert, flat | 10.00 [10.00, 10.00] | 10 | 10 | 0 |" in done.stdout
