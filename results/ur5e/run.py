"""UR5e experiment runners: one subcommand per table of docs/ur5e.md.

    python -m results.ur5e.run --help
    python -m results.ur5e.run experts  [--task ur5e-peg] [--dry-run]  # expert and variants, nominal simulation
    python -m results.ur5e.run profiles [--task ur5e-peg] [--dry-run]  # expert vs retuned expert per profile
    python -m results.ur5e.run speed    [--task ur5e-peg] [--dry-run]  # env throughput vs bare stepping
    python -m results.ur5e.run data     [--task ur5e-peg] [--dry-run]  # the cpu-preset dataset
    python -m results.ur5e.run export   [--task ur5e-peg] [--dry-run]  # the pretrained model's folder
    python -m results.ur5e.run planner  [--task ur5e-peg] [--dry-run]  # the pretrained model's MPPI, both grids
    python -m results.ur5e.run bench    [--task ur5e-peg] [--dry-run]  # the MPPI tick at 5 Hz (median, p99)
    python -m results.ur5e.run rate     [--task ur5e-peg] [--dry-run]  # generation rate on 20k transitions
    python -m results.ur5e.run critic   [--task ur5e-peg] [--dry-run]  # the expert critic at its default size
    python -m results.ur5e.run labels   [--task ur5e-peg] [--dry-run]  # the value-label gate, sigma 0.3 and 1.0
    python -m results.ur5e.run gate     [--task ur5e-peg] [--dry-run]  # the policy-head gate at small data
    python -m results.ur5e.run headplan [--task ur5e-peg] [--dry-run]  # MPPI on the imitating head's model
    python -m results.ur5e.run valueplan [--task ur5e-peg] [--dry-run] # its value head on continuation labels
    python -m results.ur5e.run rankplan [--task ur5e-peg] [--dry-run]  # its value head on its candidates' ranking
    python -m results.ur5e.run priorplan [--task ur5e-peg] [--dry-run]  # MPPI with the policy as its prior
    python -m results.ur5e.run adaptplan [--task T] [--explore W] [--dry-run]  # adaptation on proxy-real, zoo planner
    python -m results.ur5e.run leggate  [--dry-run]                  # the table leg's head and MPPI at small data
    python -m results.ur5e.run legvalue --task ur5e-table-leg [--dry-run]  # its value head on continuation labels
    python -m results.ur5e.run adaptrepeat [--dry-run]                # a second 40 trials of each peg-real stage
    python -m results.ur5e.run intentplan [--dry-run]                 # the intent term on peg-real
    python -m results.ur5e.run priorreal [--dry-run]                  # weaker priors, zero-shot and adapted
    python -m results.ur5e.run legsize  [--dry-run]                  # the table leg's success against data size
    python -m results.ur5e.run creep                                     # joint stiction under each contact recipe
    python -m results.ur5e.run contacts                                  # the calibration table of every recipe

``--contacts fast`` runs ``experts``, ``profiles``, ``data``, ``rate`` and ``critic`` under the cheaper contact recipe
(``simdist ... --contacts fast``); their files then go to ``<experiment>/<task>-fast/`` (``-fast`` suffixes).

Each evaluation is a ``simdist evaluate --json`` command whose output is kept in
``results/ur5e/<experiment>/<task>/<name>.json`` (written atomically; an existing file is not rerun); the
experiment then prints and writes its table (``table.md`` next to them). Run from the repository root with
the README's environment (``.venv/bin/python -m results.ur5e.run ...``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from results.runner import simdist_command, write_json, write_text

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "results" / "ur5e"
VARIANTS = ("slow", "aim_bias_2mm", "aim_bias_5mm", "no_spiral", "small_spiral", "clumsy",
            "yaw_offset_4deg", "hesitant", "sluggish_yaw", "late_close")
LEG_VARIANTS = (*VARIANTS[:-1], "under_twist")


def evaluate(out: Path, args: list[str], dry: bool, own_planner: bool = False) -> dict | None:
    """Run ``simdist evaluate ARGS --json`` into ``out`` unless it exists; returns the parsed result. The agent
    plans with planner preset ``manipulation`` (as these numbers were measured) unless ARGS name a preset or
    ``own_planner`` keeps the agent's ``planner.json``."""
    preset = [] if "--planner-preset" in args or own_planner else ["--planner-preset", "manipulation"]
    cmd = [*simdist_command(), "evaluate", *preset, *args, "--json"]
    print(("[dry-run] " if dry else "") + shlex.join(cmd) + f" > {out.relative_to(ROOT)}", flush=True)
    if dry:
        return None
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise SystemExit(f"failed ({res.returncode}): {shlex.join(cmd)}\n{res.stderr[-2000:]}")
        tmp = out.with_suffix(".json.tmp")
        tmp.write_text(res.stdout, encoding="utf-8")
        os.replace(tmp, out)
    return json.loads(out.read_text(encoding="utf-8"))


def _run(cmd: list[str], dry: bool, done: bool) -> None:
    """Print ``cmd`` and run it from the repository root unless ``dry`` or its output is ``done``."""
    print(("[dry-run] " if dry else "") + shlex.join(cmd), flush=True)
    if not dry and not done:
        subprocess.run(cmd, cwd=ROOT, check=True)


def _success_cell(success: list) -> str:
    """``k/n = mean [low, high]``: successes (per-trial flags) with the 95 % bootstrap interval."""
    from simdist import bootstrap_ci

    e = bootstrap_ci([float(s) for s in success])
    return f"{int(sum(success))}/{e.n} = {e.mean:.2f} [{e.low:.2f}, {e.high:.2f}]"


def _cell(result: dict) -> str:
    """:func:`_success_cell` of an evaluation result (``simdist evaluate --json``)."""
    return _success_cell(result["success"])


def _times(result: dict) -> str:
    t = [v for v in result["details"].get("time_to_success_s", []) if v is not None]
    return f"{sorted(t)[len(t) // 2]:.1f} s" if t else "-"


def write_table(folder: Path, header: str, rows: list[str], name: str = "table.md") -> None:
    text = "\n".join([header, *rows]) + "\n"
    print(text)
    (folder / name).write_text(text, encoding="utf-8")


def _contacts(contacts: str) -> tuple[str, list[str]]:
    """The folder suffix and the ``simdist`` options of a contact recipe (none for the ``noslip`` default)."""
    return ("", []) if contacts == "noslip" else (f"-{contacts}", ["--contacts", contacts])


def experts(task: str, dry: bool, contacts: str = "noslip", variants: bool = True) -> None:
    """The expert on both lattices over 3 seeds, each degraded variant on the Wide lattice (nominal simulation)."""
    suffix, opts = _contacts(contacts)
    folder = OUT / "experts" / f"{task}{suffix}"
    rows = []
    for grid in ("narrow", "wide"):
        r = evaluate(folder / f"expert-{grid}.json", ["--task", task, "--agent", "expert", "--profile", "sim",
                                                      "--grid", grid, "--trials", "3", "--envs", "20", *opts], dry)
        if r:
            rows.append(f"| expert | {grid} | {_cell(r)} | {_times(r)} |")
    for v in (LEG_VARIANTS if "leg" in task else VARIANTS) if variants else ():
        r = evaluate(folder / f"{v}-wide.json", ["--task", task, "--agent", f"scripted:{v}", "--profile", "sim",
                                                 "--grid", "wide", "--trials", "1", "--envs", "20", *opts], dry)
        if r:
            rows.append(f"| {v} | wide | {_cell(r)} | {_times(r)} |")
    if not dry:
        write_table(folder, "| policy | grid | success (trials) [95 % CI] | median time to success |\n"
                            "|---|---|---|---|", rows)


def profiles(task: str, dry: bool, contacts: str = "noslip") -> None:
    """Zero-shot expert and the expert retuned for the profile, on every built-in proxy-real profile (Wide)."""
    from simdist import get

    suffix, opts = _contacts(contacts)
    folder = OUT / "profiles" / f"{task}{suffix}"
    rows = []
    for prof in [p for p in get("task", task).profiles() if p != "sim"]:
        cells = []
        for agent in ("expert", "scripted:retuned"):
            name = agent.split(":")[-1]
            r = evaluate(folder / f"{prof}-{name}.json", ["--task", task, "--agent", agent, "--profile", prof,
                                                          "--grid", "wide", "--trials", "3", "--envs", "20", *opts],
                         dry)
            cells.append(_cell(r) if r else "")
        if not dry:
            rows.append(f"| {prof} | {cells[0]} | {cells[1]} |")
    if not dry:
        write_table(folder, "| profile (Wide lattice, 3 passes) | expert, zero-shot | expert retuned for it |\n"
                            "|---|---|---|", rows)


def model_path(task: str) -> str:
    """The task's pretrained model: the zoo's folder once bundled, else the cpu recipe's export."""
    return f"hub/models/{task}" if (ROOT / "hub" / "models" / task / "config.json").is_file() \
        else f"outputs/{task}/model"


def export(task: str, dry: bool) -> None:
    """The cpu recipe's last checkpoint as a Hub-ready folder (``outputs/<task>/model``) that plans with the
    paper's manipulation MPPI (``planner.json`` from planner preset ``manipulation`` with the task's planner
    defaults)."""
    from simdist.planning import planner_preset

    run = ROOT / "outputs" / task
    plan = run / "planner.json"
    configs = sorted((run / "logs").rglob("config.yaml"), key=lambda f: f.stat().st_mtime)
    if not configs and not dry:
        sys.exit(f"export: no {run.relative_to(ROOT)}/logs/*/config.yaml: run `data`, then `simdist fit` "
                 "(python -m results run ur5e-pretrain)")
    config = configs[-1] if configs else run / "logs" / "VERSION" / "config.yaml"  # a dry run before pretraining
    cmd = [*simdist_command(), "export", "--ckpt", str(run / "pretrain" / "checkpoints" / "last.ckpt"), "--out",
           str(run / "model"), "--overwrite", "--planner", str(plan), "--repo-id", f"simdist/{task}",
           "--train-config", str(config)]
    print(("[dry-run] " if dry else "") + shlex.join(cmd), flush=True)
    if not dry:
        from simdist import get

        # the task's planner defaults: the gripper held with hysteresis (binary_mode "mean" is the official one)
        settings = planner_preset("manipulation", **get("task", task).planner_defaults)
        plan.write_text(json.dumps(settings, indent=1), encoding="utf-8")
        subprocess.run(cmd, cwd=ROOT, check=True)


def planner(task: str, dry: bool) -> None:
    """The pretrained model's MPPI (planner preset ``manipulation``) on both lattices in nominal simulation,
    beside the scripted expert (the bar: 90 % of the expert's success)."""
    folder = OUT / "planner" / task
    rows = []
    for grid in ("narrow", "wide"):
        r = evaluate(folder / f"mppi-{grid}.json", ["--task", task, "--agent", model_path(task), "--profile", "sim",
                                                    "--grid", grid, "--trials", "2", "--envs", "20"], dry)
        e = evaluate(OUT / "experts" / task / f"expert-{grid}.json", [
            "--task", task, "--agent", "expert", "--profile", "sim", "--grid", grid, "--trials", "3", "--envs", "20"],
            dry)
        if r and e:
            rows.append(f"| {grid} | {_cell(r)} | {_times(r)} | {_cell(e)} |")
    if not dry:
        write_table(folder, "| grid | MPPI (256 + 12 x 3), success [95 % CI] | median time | scripted expert |\n"
                            "|---|---|---|---|", rows)


def bench(task: str, dry: bool) -> None:
    """The manipulation MPPI tick for one env (``simdist bench --sections mppi``): median and p99, 1 and 2
    threads, against the 200 ms period of 5 Hz."""
    out = OUT / "bench" / f"{task}.json"
    cmd = [*simdist_command(), "bench", "--task", task, "--sections", "mppi", "--threads", "1,2", "--repeats", "200",
           "--json"]
    print(("[dry-run] " if dry else "") + shlex.join(cmd) + f" > {out.relative_to(ROOT)}", flush=True)
    if not dry:
        out.parent.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True)
        out.write_text(res.stdout, encoding="utf-8")


def speed(task: str, dry: bool) -> None:
    out = OUT / "speed" / f"{task}.json"
    cmd = [sys.executable, "benchmarks/bench_ur5e_env.py", "--task", task, "--envs", "16,32", "--hz", "10,5",
           "--steps", "200", "--json", str(out.relative_to(ROOT))]
    print(("[dry-run] " if dry else "") + shlex.join(cmd), flush=True)
    if not dry:
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(cmd, cwd=ROOT, check=True)


def data(task: str, dry: bool, contacts: str = "noslip") -> None:
    """The ``cpu``-preset pretraining dataset (progress with an ETA in ``outputs/ur5e/<task>-cpu.log``)."""
    suffix, opts = _contacts(contacts)
    out = f"outputs/ur5e/{task}-cpu{suffix}"
    summary = OUT / "data" / f"{task}-cpu{suffix}.json"
    cmd = [*simdist_command(), "generate", "--task", task, "--preset", "cpu", "--out", out, "--seed", "0", "--json",
           *opts]
    print(("[dry-run] " if dry else "") + shlex.join(cmd) + f" > {summary.relative_to(ROOT)} 2> {out}.log",
          flush=True)
    if not dry:
        summary.parent.mkdir(parents=True, exist_ok=True)
        (ROOT / out).parent.mkdir(parents=True, exist_ok=True)
        with open(ROOT / f"{out}.log", "w", encoding="utf-8") as log:
            res = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True, check=True)
        summary.write_text(res.stdout, encoding="utf-8")


def rate(task: str, dry: bool, contacts: str = "noslip") -> None:
    """Generation rate of the data engine (expert mixture, noise, critic labels) on 20k transitions at the
    ``cpu`` preset's 32 envs, as one part (``--parts 1``, which times it): wall and process CPU seconds of the
    generation (the critic, fitted first at a test size, is not timed), simulated transitions per second (the
    engine's measure: discarded unfinished episodes count), the load average around it, and the ``cpu`` preset's
    projected generation time."""
    from simdist import get

    suffix, opts = _contacts(contacts)
    out = OUT / "rate" / f"{task}{suffix}.json"
    folder = f"outputs/ur5e/rate/{task}{suffix}"
    cmd = [*simdist_command(), "generate", "--task", task, "--envs", "32", "--transitions", "20000", "--seed", "0",
           "--critic-envs", "4", "--critic-steps", "20", "--parts", "1", "--out", folder, "--json", "--no-progress",
           *opts]
    print(("[dry-run] " if dry else "") + shlex.join(cmd) + f" > {out.relative_to(ROOT)}", flush=True)
    if dry or out.is_file():
        return
    import shutil

    shutil.rmtree(ROOT / folder, ignore_errors=True)  # a fresh run: the engine would skip episodes on disk
    load_before = os.getloadavg()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"failed ({res.returncode}): {shlex.join(cmd)}\n{res.stderr[-2000:]}")
    s = json.loads(res.stdout)
    preset = get("task", task).data_defaults["presets"]["cpu"]["transitions"]
    n, wall, cpu = s["session"]["simulated_transitions"], s["session"]["wall_s"], s["session"]["cpu_s"]
    row = {"task": task, "contacts": contacts, "simulated_transitions": n, "written_transitions": s["transitions"],
           "episodes": s["episodes"], "wall_seconds": wall, "cpu_seconds": cpu,
           "transitions_per_wall_s": n / wall, "transitions_per_cpu_s": n / cpu,
           "loadavg_before": load_before, "loadavg_after": os.getloadavg(), "cpu_preset_transitions": preset,
           "cpu_preset_projected_wall_min": preset / (n / wall) / 60,
           "cpu_preset_projected_cpu_min": preset / (n / cpu) / 60, "command": shlex.join(cmd)}
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(out, row)
    print(json.dumps(row, indent=1))


def critic(task: str, dry: bool, contacts: str = "noslip", size: str = "32x300") -> None:
    """The expert critic (default size 32 envs x 300 steps, 200 epochs; ``--size ENVSxSTEPS`` a smaller one),
    fitted by a ``simdist generate`` of 3,200 transitions into a fresh folder; the summary (with the critic's
    report) is kept."""
    suffix, opts = _contacts(contacts)
    envs, steps = size.split("x")
    tag = "" if size == "32x300" else f"-{size}"
    out = OUT / "critic" / f"{task}{suffix}{tag}.json"
    folder = f"outputs/ur5e/critic/{task}{suffix}{tag}"
    cmd = [*simdist_command(), "generate", "--task", task, "--envs", "32", "--transitions", "3200", "--seed", "0",
           "--critic-envs", envs, "--critic-steps", steps, "--out", folder, "--json", "--no-progress", *opts]
    print(("[dry-run] " if dry else "") + shlex.join(cmd) + f" > {out.relative_to(ROOT)}", flush=True)
    if dry or out.is_file():
        return
    import shutil

    shutil.rmtree(ROOT / folder, ignore_errors=True)
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"failed ({res.returncode}): {shlex.join(cmd)}\n{res.stderr[-2000:]}")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, res.stdout)
    print(json.dumps(json.loads(res.stdout)["critic"], indent=1))


#: the value-label gate's sizes: critics of 320 and 640 continuation states, TD(λ) on 3,200 expert transitions
GATE_SIZES = ["--critic-envs", "16", "--critic-steps", "200", "--larger", "2", "--td-envs", "16", "--td-steps", "200"]


def labels(task: str, dry: bool) -> None:
    """The value-label gate (``python -m results.ur5e.label_gate``): 16 expert-visited Narrow states x
    16 candidates (the expert's action held plus noise σ 0.3 and 1.0), the ranking of every value-label method
    beside the ceiling; the critic states are cached in ``outputs/ur5e/labels`` (a rerun resumes)."""
    for sigma in ("0.3", "1.0"):
        out = OUT / "labels" / f"{task}-sigma{sigma}.json"
        cmd = [sys.executable, "-m", "results.ur5e.label_gate", "--task", task, "--grid", "narrow",
               "--sigma", sigma, *GATE_SIZES, "--out", str(out.relative_to(ROOT))]
        print(("[dry-run] " if dry else "") + shlex.join(cmd), flush=True)
        if dry or (out.is_file() and "partial" not in json.loads(out.read_text(encoding="utf-8"))):
            continue
        subprocess.run(cmd, cwd=ROOT, check=True)


#: the policy-head gate's models: (name, recipe, run folder); each trained on the small dataset's finished
#: parts that the recipe names (docs/ur5e-simdist.md 7.2)
GATE_MODELS = [("whole context (paper default)", "small", "ur5e-peg-small"),
               ("current observation only", "small-current", "ur5e-peg-small-now"),
               ("history without past actions", "small-no-actions", "ur5e-peg-small-noact"),
               ("history dropout 0.5", "small-history-dropout", "ur5e-peg-small-hd"),
               # the same recipe with the overlay recipes/ur5e-peg/small-matched.yaml: the BC row's 4.1 M samples
               ("history without past actions, matched optimisation", "small-no-actions", "ur5e-peg-small-matched")]


#: the state-MLP BC rows of the gate: (first parts of the small dataset, training steps, file name)
GATE_BC = [(10, 2000, "state-bc-narrow"), (10, 8000, "state-bc-8k-narrow"), (16, 8000, "state-bc-16parts-8k-narrow")]


def _unseen_part(parts: list[str]) -> str:
    """The finished parts of the small dataset that are not among ``parts``, comma-separated (the copycat
    replay's data: episodes the models never trained on)."""
    data = ROOT / "outputs" / "ur5e" / "ur5e-peg-small"
    info = json.loads((data / "dataset.json").read_text(encoding="utf-8")) if (data / "dataset.json").is_file() \
        else {"shards": []}
    done = sorted({f"outputs/ur5e/ur5e-peg-small/{s['name'].split('/')[0]}" for s in info["shards"]})
    unseen = [p for p in done if p not in parts]
    return ",".join(unseen) if unseen else "NO-UNSEEN-PART-YET"


def gate(task: str, dry: bool) -> None:
    """The policy-head gate at small data: every trained model of :data:`GATE_MODELS` exported (its last
    checkpoint) and its policy head alone (``--planner policy``) on the Narrow lattice (2 passes, 40 trials),
    its copying measured (``analysis/copycat.py`` on 30 free-start expert episodes of the parts it did not
    train on), beside the state-MLP BC trained on the same parts; models not trained yet are skipped."""
    import yaml

    if task != "ur5e-peg":
        raise SystemExit("gate: only ur5e-peg has the small-data recipes")
    folder = OUT / "gate" / task
    rows = []
    for name, recipe, run in GATE_MODELS:
        ckpt = ROOT / "outputs" / run / "pretrain" / "checkpoints" / "last.ckpt"
        model = ROOT / "outputs" / run / "model"
        measured = all((folder / f"{run}-{kind}.json").is_file() for kind in ("policy-narrow", "copycat"))
        if not ckpt.is_file() and not dry and not measured:  # a committed row needs no checkpoint
            print(f"{name}: no checkpoint yet ({ckpt.relative_to(ROOT)}), skipped", flush=True)
            continue
        parts = yaml.safe_load((ROOT / "recipes" / "ur5e-peg" / f"{recipe}.yaml").read_text())["data"]["train"]
        if not measured:
            cmd = [*simdist_command(), "export", "--ckpt", str(ckpt), "--out", str(model), "--repo-id",
                   f"simdist/{run}", "--train-config",
                   str(max((ROOT / "outputs" / run / "logs").rglob("config.yaml"), key=lambda f: f.stat().st_mtime))
                   if not dry else "CONFIG"]
            _run(cmd, dry, (model / "config.json").is_file())
        r = evaluate(folder / f"{run}-policy-narrow.json", [
            "--task", task, "--agent", str(model.relative_to(ROOT)), "--planner", "policy", "--profile", "sim",
            "--grid", "narrow", "--trials", "2", "--envs", "20"], dry)
        copy = folder / f"{run}-copycat.json"
        cmd = [sys.executable, "-m", "results.ur5e.analysis.copycat", "--model", str(model.relative_to(ROOT)),
               "--data", _unseen_part(parts), "--episodes", "30", "--out", str(copy.relative_to(ROOT))]
        _run(cmd, dry, copy.is_file())
        if r:
            c = json.loads(copy.read_text(encoding="utf-8"))
            cells = " | ".join(f"{e['mean']:.2f} [{e['low']:.2f}, {e['high']:.2f}]" for e in (
                c["xy_error_step0_ci"], c["xy_error_step5_ci"], c["phase_change_to_expert"],
                c["phase_change_to_previous"]))
            rows.append(f"| {name} | {_cell(r)} | {cells} |")
    parts = yaml.safe_load((ROOT / "recipes" / "ur5e-peg" / "small.yaml").read_text())["data"]["train"]
    for n_parts, steps, name in GATE_BC:
        bc = folder / f"{name}.json"
        data = parts if n_parts == len(parts) else [f"outputs/ur5e/ur5e-peg-small/part-{k:04d}" for k in range(n_parts)]
        cmd = [sys.executable, "-m", "results.ur5e.analysis.state_bc", "--task", task, "--data", ",".join(data),
               "--episodes", "100000", "--steps", str(steps), "--grids", "narrow",
               "--save", f"outputs/ur5e-peg-small/{name}.pt", "--out", str(bc.relative_to(ROOT))]
        print(("[dry-run] " if dry else "") + shlex.join(cmd), flush=True)
        if not dry and not bc.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            (ROOT / "outputs" / "ur5e-peg-small").mkdir(parents=True, exist_ok=True)
            subprocess.run(cmd, cwd=ROOT, check=True)
        if not dry:
            res = json.loads(bc.read_text(encoding="utf-8"))
            b = res["narrow"]
            rows.append(f"| state MLP, behaviour cloning, {n_parts} parts ({res['flagged_steps']:,} expert steps), "
                        f"{steps:,} steps of 512 | {b['mean']:.2f} [{b['ci95'][0]:.2f}, {b['ci95'][1]:.2f}] "
                        f"({b['trials']} trials) | | | | |")
    if not dry:
        write_table(folder, "| controller (policy head alone unless named) | Narrow success [95 % CI] | "
                            "xy error, step 0 | xy error, step 5 | phase changes: distance to the expert | "
                            "to the previous action |\n|---|---|---|---|---|---|", rows)


#: the gate model of :func:`gate` whose policy head imitates (its value head is untrained: value loss weight 0)
HEAD_MODEL = "results/ur5e/gate/ur5e-peg/ur5e-peg-small-matched-model"
#: the plan-ranking measurement of :func:`headplan` and :func:`valueplan`: 24 Narrow states x 16 candidates
MECHANISM = ["--states", "24", "--candidates", "16", "--envs", "8", "--seed", "0", "--grid", "narrow"]
#: :func:`headplan`'s rows: (label, result file stem, value_weight or None for the preset's planner, options)
HEAD_PLANNERS = [
    ("manipulation MPPI (value weight 1)", "small-matched-mppi-narrow", None, []),
    ("manipulation MPPI, warm start from the policy", "small-matched-mppi-policywarm-narrow", None,
     ["--warm-start", "policy"]),
    ("rewards only (value weight 0)", "small-matched-w0-mppi-narrow", 0.0, []),
    ("rewards only, warm start from the policy", "small-matched-w0-policywarm-mppi-narrow", 0.0,
     ["--warm-start", "policy"]),
    ("rewards only, policy warm start, init std 0.1", "small-matched-w0-narrow-mppi-narrow", 0.0,
     ["--warm-start", "policy", "--init-std", "0.1"]),
    ("value weight 1, policy warm start, init std 0.1", "small-matched-w1-narrow-mppi-narrow", 1.0,
     ["--warm-start", "policy", "--init-std", "0.1"]),
]


def planner_folder(task: str, value_weight: float, dry: bool, src: str = HEAD_MODEL, name: str | None = None,
                   extra: dict | None = None) -> str:
    """Model ``src`` (default the head-gate model) with a ``planner.json`` of planner preset ``manipulation`` (the
    task's planner defaults), MPPI ``value_weight`` and the ``extra`` settings: ``outputs/<name>-w<weight>``
    (weights symlinked; ``name`` defaults to the run folder's)."""
    from simdist import get
    from simdist.planning import planner_preset

    name = name or ("ur5e-peg-small-matched" if src == HEAD_MODEL else (ROOT / src).parent.name)
    return agent_folder(ROOT / "outputs" / f"{name}-w{value_weight:g}", src, dry, lambda: {
        **planner_preset("manipulation", **get("task", task).planner_defaults), "value_weight": value_weight,
        **(extra or {})})


def agent_folder(out: Path, src: str, dry: bool, settings: Callable[[], dict]) -> str:
    """``out``: model ``src``'s files symlinked and the ``planner.json`` of ``settings()``, made once (skipped
    when ``out`` has its planner.json, or ``dry``); its path from the repository root."""
    if not dry and not (out / "planner.json").is_file():
        out.mkdir(parents=True, exist_ok=True)
        for f in (ROOT / src).iterdir():
            if f.name != "planner.json" and not (out / f.name).exists():
                (out / f.name).symlink_to(f.resolve())
        write_text(out / "planner.json", json.dumps(settings(), indent=1))
    return str(out.relative_to(ROOT))


def headplan(task: str, dry: bool) -> None:
    """The planner on the imitating head (docs/ur5e-simdist.md 7.5): the head-gate model's MPPI on the Narrow
    lattice (40 trials) with the value term (its untrained head) or the horizon's rewards alone
    (``value_weight`` 0), sampled around its policy or not, beside the head alone; then the plan ranking
    (``simdist mechanism``, 24 states x 16 candidates) of both scores on the rewards-only planner's states."""
    if task != "ur5e-peg":
        raise SystemExit("headplan: only ur5e-peg has the head-gate model")
    folder = OUT / "planner" / task
    rows = []
    for label, stem, weight, extra in HEAD_PLANNERS:
        agent = HEAD_MODEL if weight is None else planner_folder(task, weight, dry)
        r = evaluate(folder / f"{stem}.json", ["--task", task, "--agent", agent, "--profile", "sim", "--grid", "narrow",
                                     "--trials", "2", "--envs", "20", *extra], dry, own_planner=weight is not None)
        if r:
            rows.append(f"| {label} | {_cell(r)} | {_times(r)} |")
    for stem, models in (("small-matched-mechanism-narrow", ["--model", f"matched={HEAD_MODEL}",
                                                               "--planner-preset", "manipulation"]),
                         ("small-matched-w0-mechanism-narrow", [
                             "--model", f"rewards-only={planner_folder(task, 0.0, dry)}",
                             "--model", f"with-value={planner_folder(task, 1.0, dry)}"])):
        ranking = folder / f"{stem}.json"
        cmd = [*simdist_command(), "mechanism", "--task", task, "--real", "sim", *models, *MECHANISM,
               "--out", str(ranking.relative_to(ROOT))]
        _run(cmd, dry, ranking.is_file())
    if not dry:
        write_table(folder, "| MPPI on the head-gate model (256 + 12 x 3) | Narrow success [95 % CI] | median time "
                            "|\n|---|---|---|", rows, name="headplan.md")


#: the value head trained on the expert-continuation labels (recipes/ur5e-peg/small-value-mc.yaml, all its parts)
VALUE_RUN = "outputs/ur5e-peg-small-value-mc"
#: the labelled dataset (``--parts 40`` of 100,000 transitions: 2,500 each), the part counts of the ranking's
#: data-size curve, and the one whose model plans (its MPPI visits the ranked states and runs the closed loop;
#: the recipe reads its parts)
VALUE_DATA = "outputs/ur5e/ur5e-peg-mc"
VALUE_SIZES = (4, 8, 12, 20)
PLAN_SIZE = 12
#: (parts, steps): the largest size trained longer, ranked too: is the plateau the schedule's?
VALUE_LONG = (20, 8000)
#: smaller value weights of the planning model, ranked too: does shrinking the value term help?
VALUE_SHRINK = (0.3, 0.1)
#: :func:`valueplan`'s closed-loop rows: (label, result file stem, MPPI options)
VALUE_PLANNERS = [
    ("manipulation MPPI (value weight 1)", "value-mc-mppi-narrow", []),
    ("the same, policy warm start, init std 0.1", "value-mc-narrow-mppi-narrow",
     ["--warm-start", "policy", "--init-std", "0.1"]),
    ("the same, policy warm start, init std 0.03", "value-mc-narrower-mppi-narrow",
     ["--warm-start", "policy", "--init-std", "0.03"]),
]


def _finished_parts(folder: Path) -> set[str]:
    """The parts a parted generation run has finished (``generate.json``; a part in progress has its own
    ``dataset.json`` already)."""
    state = folder / "generate.json"
    return set(json.loads(state.read_text(encoding="utf-8"))["parts"]) if state.is_file() else set()


def value_model(parts: int, dry: bool, steps: int | None = None) -> str:
    """The head-gate model with its value head trained on the first ``parts`` labelled parts (the recipe, with
    its run folder and data overridden for every size but :data:`PLAN_SIZE`; ``steps``: a longer schedule than
    the recipe's 3,000); returns the exported folder."""
    run = VALUE_RUN if parts == PLAN_SIZE and steps is None else f"{VALUE_RUN}-p{parts}" + (
        "-long" if steps else "")
    model = f"{run}/model"
    done = (ROOT / model / "model.safetensors").is_file()
    override = [] if run == VALUE_RUN else [
        "--trainer.default_root_dir", f"{run}/pretrain", "--trainer.logger.init_args.save_dir", f"{run}/logs",
        "--trainer.callbacks", json.dumps([{"class_path": "lightning.pytorch.callbacks.ModelCheckpoint", "init_args": {
            "dirpath": f"{run}/pretrain/checkpoints", "save_last": True, "every_n_train_steps": 500}}]),
        "--data.train", json.dumps([f"{VALUE_DATA}/part-{k:04d}" for k in range(parts)])]
    if steps:
        override += ["--trainer.max_steps", str(steps), "--model.init_args.decay_steps", str(steps)]
    fit_export(run, ["recipes/ur5e-peg/base.yaml", "recipes/ur5e-peg/small-value-mc.yaml"], dry, done, override)
    return model


def fit_export(run: str, configs: list[str], dry: bool, done: bool, override: list[str] | None = None,
               model: str | None = None) -> None:
    """``simdist fit`` of the recipes ``configs`` (plus ``override``), resumed from ``run``'s last checkpoint when
    there is one, then its export into ``model`` (default ``run``/model); both skipped when ``done``."""
    ckpt = ROOT / run / "pretrain" / "checkpoints" / "last.ckpt"
    _run([*simdist_command(), "fit", *(a for c in configs for a in ("--config", c)), *(override or []),
          *(["--ckpt_path", str(ckpt.relative_to(ROOT))] if ckpt.is_file() else [])], dry, done)
    _run([*simdist_command(), "export", "--ckpt", str(ckpt.relative_to(ROOT)), "--out", model or f"{run}/model",
          "--overwrite", "--train-config", f"{run}/logs/lightning_logs/version_0/config.yaml"], dry, done)


def continuation_parts(task: str, parts: int, out: str, dry: bool) -> None:
    """The first ``parts`` of 40 parts of 2,500 transitions labelled with the expert's continuation (``simdist
    generate --values continuation``) into ``out``, one part per call, finished parts skipped."""
    for k in range(parts):
        _run([*simdist_command(), "generate", "--task", task, "--envs", "16", "--transitions", "100000", "--parts",
              "40", "--rank", str(k), "--world-size", "40", "--seed", "0", "--critic-envs", "4", "--critic-steps",
              "20", "--values", "continuation", "--torch-threads", "1", "--no-progress", "--out", out], dry,
             f"part-{k:04d}" in _finished_parts(ROOT / out))


def valueplan(task: str, dry: bool) -> None:
    """The planner once the value head learns the expert-continuation labels (docs/ur5e-simdist.md 7.6): the
    labelled parts (``simdist generate --values continuation``, one part per call, resumable), the head-gate
    model's value head trained on the first 4, 8, 12 and 20 of them (everything else frozen), their plan ranking
    beside the untrained value head and the rewards alone on the same states (``simdist mechanism``, 24 states
    x 16 candidates, visited by the 12-part model's MPPI), then that MPPI's closed loop on the Narrow lattice
    (40 trials per row)."""
    if task != "ur5e-peg":
        raise SystemExit("valueplan: only ur5e-peg has the head-gate model")
    continuation_parts(task, max(VALUE_SIZES), VALUE_DATA, dry)
    order = [PLAN_SIZE, *sorted(set(VALUE_SIZES) - {PLAN_SIZE}, reverse=True)]  # the first model's MPPI visits
    sources = {n: value_model(n, dry) for n in order}
    models = {n: planner_folder(task, 1.0, dry, src=src) for n, src in sources.items()}
    large = sources[PLAN_SIZE]
    longer = planner_folder(task, 1.0, dry, src=value_model(VALUE_LONG[0], dry, steps=VALUE_LONG[1]))
    folder = OUT / "planner" / task
    ranking = folder / "value-mc-mechanism-narrow.json"
    _run([*simdist_command(), "mechanism", "--task", task, "--real", "sim",
          *[a for n, m in models.items() for a in ("--model", f"mc-value-{n}-parts={m}")],
          "--model", f"mc-value-{VALUE_LONG[0]}-parts-{VALUE_LONG[1]}-steps={longer}",
          *[a for w in VALUE_SHRINK for a in (
              "--model", f"mc-value-{PLAN_SIZE}-parts-weight-{w:g}={planner_folder(task, w, dry, src=large)}")],
          "--model", f"untrained-value={planner_folder(task, 1.0, dry)}",
          "--model", f"rewards-only={planner_folder(task, 0.0, dry)}",
          *MECHANISM, "--out", str(ranking.relative_to(ROOT))], dry, ranking.is_file())
    rows = []
    for label, stem, extra in VALUE_PLANNERS:
        r = evaluate(folder / f"{stem}.json", ["--task", task, "--agent", models[PLAN_SIZE], "--profile",
                                               "sim", "--grid", "narrow", "--trials", "2", "--envs", "20", *extra],
                     dry, own_planner=True)
        if r:
            rows.append(f"| {label} | {_cell(r)} | {_times(r)} |")
    if not dry:
        write_table(folder, "| MPPI, value head on the continuation labels (256 + 12 x 3) | Narrow success [95 % CI] "
                            "| median time |\n|---|---|---|", rows, name="valueplan.md")


#: :func:`rankplan`'s candidate sets: driver → the seeds whose states it visits (72 states x 16 candidates each,
#: one whole Narrow episode per env); the paper's sampling, and sampled tightly around the policy head. The first
#: :data:`RANK_TRAIN` seeds of each driver train, the rest are held out
RANK_SEEDS = {"paper": tuple(range(1, 13)), "tight": tuple(range(101, 113))}
RANK_DRIVERS = {"paper": [], "tight": ["--init-std", "0.1", "--warm-start", "policy"]}
RANK_TRAIN = 9
#: the probes' data-size curve: seeds per driver that train; the largest also with as many passes over its states
#: as 1,500 steps give the smallest (is its dip the schedule's?)
RANK_SIZES = (3, 6, 9)
RANK_LONG_STEPS = 4500
RANK_SETS = "outputs/ur5e/value-rank"
#: the committed 12-part continuation-label model (:data:`PLAN_SIZE`), whose MPPI drives the collection
VALUE_MODEL = "results/ur5e/planner/ur5e-peg/value-mc-model"
#: the value head trained on the candidates' ranking (value-rank fit), committed beside its results
RANK_MODEL = "results/ur5e/planner/ur5e-peg/value-rank-model"
#: :func:`rankplan`'s closed-loop rows: (label, result file stem, MPPI options)
RANK_PLANNERS = [("manipulation MPPI (value weight 1)", "value-rank-mppi-narrow", []),
                 ("the same, policy warm start, init std 0.1", "value-rank-narrow-mppi-narrow", RANK_DRIVERS["tight"])]


def _rank_sets(per_driver: slice) -> str:
    """The candidate-set files of the seeds ``per_driver`` of every driver, comma-separated."""
    return ",".join(f"{RANK_SETS}/{driver}-seed{seed}.safetensors" for driver, seeds in RANK_SEEDS.items()
                    for seed in seeds[per_driver])


def rankplan(task: str, dry: bool) -> None:
    """The value head trained on the planner's own candidates (docs/ur5e-simdist.md 7.8, ``simdist value-rank``):
    the 12-part model's MPPI drives whole Narrow episodes (both samplings, 12 seeds each) and every 25 steps keeps
    16 of its candidates with their true returns; the value head (all else frozen) learns the within-state order
    of the first 9 seeds of each; MLP probes on the model's latents and on the actions, trained on 3, 6 and 9 seeds
    each, and the fitted head, ranked on the held-out seeds; the fitted head on the published 24 states; then its
    MPPI's closed loop on the Narrow lattice."""
    if task != "ur5e-peg":
        raise SystemExit("rankplan: only ur5e-peg has the head-gate model")
    start = planner_folder(task, 1.0, dry, src=VALUE_MODEL, name="value-mc-model")
    for driver, seeds in RANK_SEEDS.items():
        for seed in seeds:
            out = f"{RANK_SETS}/{driver}-seed{seed}.safetensors"
            _run([*simdist_command(), "value-rank", "collect", "--task", task, "--agent", VALUE_MODEL,
                  "--planner-preset", "manipulation", "--profile", "sim", "--grid", "narrow", *RANK_DRIVERS[driver],
                  "--states", "72", "--candidates", "16", "--every", "25", "--envs", "8", "--seed", str(seed),
                  "--out", out], dry, (ROOT / out).is_file())
    _run([*simdist_command(), "value-rank", "fit", "--agent", start, "--data", _rank_sets(slice(RANK_TRAIN)),
          "--out", RANK_MODEL, "--steps", "1500", "--lr", "1e-3"], dry,
         (ROOT / RANK_MODEL / "model.safetensors").is_file())
    for n, steps in [(n, None) for n in RANK_SIZES] + [(max(RANK_SIZES), RANK_LONG_STEPS)]:
        probe = OUT / "analysis" / (f"rank-probe-{n}-seeds.json" if steps is None else
                                    f"rank-probe-{n}-seeds-{steps}-steps.json")
        extra = ["--score", f"value-rank={RANK_MODEL}"] if n == RANK_TRAIN and steps is None else []
        extra += ["--steps", str(steps)] if steps else []
        _run([sys.executable, "-m", "results.ur5e.analysis.rank_probe", "--model", VALUE_MODEL, "--train",
              _rank_sets(slice(n)), "--heldout", _rank_sets(slice(RANK_TRAIN, None)), *extra, "--json",
              str(probe.relative_to(ROOT))], dry, probe.is_file())
    folder = OUT / "planner" / task
    ranking = folder / "value-rank-mechanism-narrow.json"
    _run([*simdist_command(), "mechanism", "--task", task, "--real", "sim", "--model", f"mc-value-12-parts={start}",
          "--model", f"value-rank={RANK_MODEL}", *MECHANISM, "--out", str(ranking.relative_to(ROOT))], dry,
         ranking.is_file())
    rows = []
    for label, stem, extra in RANK_PLANNERS:
        r = evaluate(folder / f"{stem}.json", ["--task", task, "--agent", RANK_MODEL, "--profile", "sim", "--grid",
                                               "narrow", "--trials", "2", "--envs", "20", *extra], dry,
                     own_planner=True)
        if r:
            rows.append(f"| {label} | {_cell(r)} | {_times(r)} |")
    if not dry:
        write_table(folder, "| MPPI, value head trained on its candidates' ranking (256 + 12 x 3) | Narrow success "
                            "[95 % CI] | median time |\n|---|---|---|", rows, name="rankplan.md")


#: the policy prior's weights β of :func:`priorplan` (MPPI ``prior_weight``, beyond the paper; 0 is 7.8's row)
PRIOR_WEIGHTS = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
#: the chosen β (the sweep's best): :func:`priorplan` also measures it on the Wide lattice, with the official
#: gripper output and against the value labels' data size (7.6's models); the zoo's ur5e-peg planner.json carries it
PRIOR_CHOSEN = 10.0
#: the value-label sizes (labelled parts, 7.6) at which :func:`priorplan` plans with the chosen β
PRIOR_SIZES = (4, 12, 20)
#: further evaluation seeds of the head alone and the chosen β on Narrow (seed 0 is every other row's)
PRIOR_SEEDS = (1,)
#: the β whose executed actions' gap to the head :func:`priorplan` measures, with their gripper outputs
PRIOR_GAPS = ((PRIOR_CHOSEN, "hysteresis,mean"), (3.0, "hysteresis"))


def priorplan(task: str, dry: bool) -> None:
    """MPPI with the policy as its prior (docs/ur5e-simdist.md 7.9): the value head trained on its candidates'
    ranking (7.8), sampled around the head (policy warm start, init std 0.1), each candidate scored R + β log
    N(a; π, σ²): β :data:`PRIOR_CHOSEN` on the Wide lattice, every β of :data:`PRIOR_WEIGHTS` on Narrow, the
    chosen β with the official gripper output (``binary_mode`` mean), then the value head trained on
    :data:`PRIOR_SIZES` expert-continuation-labelled parts (7.6) at the chosen β: success against the value data's
    size (40 trials each); the head alone and the chosen β on Narrow again with the evaluation seeds of
    :data:`PRIOR_SEEDS`, each controller pooled; the gap of the executed action to the head's at the β of
    :data:`PRIOR_GAPS` (results/ur5e/analysis/prior_gap.py, 8 whole Narrow episodes)."""
    if task != "ur5e-peg":
        raise SystemExit("priorplan: only ur5e-peg has the head-gate model")
    folder = OUT / "planner" / task
    tight = ["--profile", "sim", "--trials", "2", "--envs", "20", *RANK_DRIVERS["tight"]]
    ranked = "value head trained on its candidates' ranking"
    # (row label, β, model folder or labelled parts, result stem, lattice, other planner.json settings)
    runs: list[tuple[str, float, str | int, str, str, dict]] = [(ranked, PRIOR_CHOSEN, RANK_MODEL, "value-rank", "wide",
                                                                 {})]
    runs += [(ranked, b, RANK_MODEL, "value-rank", "narrow", {})
             for b in sorted(PRIOR_WEIGHTS, reverse=True)]  # from the prior's control to the score's
    runs += [(f"{ranked}, the official gripper output (binary_mode mean)", PRIOR_CHOSEN, RANK_MODEL,
              "value-rank-mean", "narrow", {"binary_mode": "mean"})]
    runs += [(f"value head on {n} continuation-labelled parts", PRIOR_CHOSEN, n, f"value-mc-p{n}", "narrow", {})
             for n in PRIOR_SIZES]  # 7.6's models at the chosen β
    rows = []
    for label, beta, src, stem, grid, extra in runs:
        source = src if isinstance(src, str) else VALUE_MODEL if src == PLAN_SIZE else value_model(src, dry)
        agent = planner_folder(task, 1.0, dry, src=source, name=f"{stem}-prior{beta:g}",
                               extra={"prior_weight": beta, **extra})
        r = evaluate(folder / f"{stem}-prior{beta:g}-mppi-{grid}.json",
                     ["--task", task, "--agent", agent, "--grid", grid, *tight], dry, own_planner=True)
        if r:
            rows.append(f"| {label} | {beta:g} | {grid} | {_cell(r)} | {_times(r)} |")
    head = OUT / "gate" / task / "ur5e-peg-small-matched-policy"  # the head alone's result files (7.2), + -{grid}
    chosen = folder / f"value-rank-prior{PRIOR_CHOSEN:g}-mppi"
    for seed in PRIOR_SEEDS:  # replicates of the Narrow comparison with other evaluation seeds
        evaluate(Path(f"{head}-narrow-seed{seed}.json"), [
            "--task", task, "--agent", HEAD_MODEL, "--planner", "policy", "--profile", "sim", "--grid", "narrow",
            "--trials", "2", "--envs", "20", "--seed", str(seed)], dry)
        evaluate(Path(f"{chosen}-narrow-seed{seed}.json"), [
            "--task", task, "--agent", f"outputs/value-rank-prior{PRIOR_CHOSEN:g}-w1", "--grid", "narrow", *tight,
            "--seed", str(seed)], dry, own_planner=True)
    seeds = ["", *[f"-seed{seed}" for seed in PRIOR_SEEDS]]
    pooled = {(name, what): [Path(f"{stem}-{g}{sd}.json") for g, sd in files]
              for name, stem in (("the head alone", head), (f"MPPI, β {PRIOR_CHOSEN:g}", chosen))
              for what, files in (("Narrow, evaluation seeds " + ", ".join(str(k) for k in (0, *PRIOR_SEEDS)),
                                   [("narrow", sd) for sd in seeds]),
                                  ("Narrow + Wide, seed 0", [("narrow", ""), ("wide", "")]))}
    for (name, what), files in pooled.items():  # 80 trials a controller
        if all(f.is_file() for f in files):
            hits = [s for f in files for s in json.loads(f.read_text(encoding="utf-8"))["success"]]
            rows.append(f"| {name} | {PRIOR_CHOSEN:g} | {what} | {_success_cell(hits)} | |")
    for beta, modes in PRIOR_GAPS:  # the executed action's gap to the head's, tick by tick (7.7's measurement)
        gap = OUT / "analysis" / f"prior-gap-value-rank-prior{beta:g}.json"
        _run([sys.executable, "-m", "results.ur5e.analysis.prior_gap", "--model",
              f"outputs/value-rank-prior{beta:g}-w1", "--binary-modes", modes, "--steps", "225", "--json",
              str(gap.relative_to(ROOT))], dry, gap.is_file())
    if not dry:
        write_table(folder, "| MPPI's value head (policy warm start, init std 0.1) | policy prior weight β | lattice | "
                            "success [95 % CI] | median time |\n|---|---|---|---|---|", rows, name="priorplan.md")


#: each task's adaptation: (the zoo folder whose planner.json acts, the proxy-real profile), and the stages' real
#: episodes (zero-shot and the paper's 80)
ADAPT_AGENTS = {"ur5e-peg": ("hub/models/ur5e-peg", "peg-real"),
                "ur5e-table-leg": ("hub/models/ur5e-table-leg", "table-leg-real")}
ADAPT_SCHEDULE = "[0,80]"


def adapt_run(task: str, explore: str | None = None) -> str:
    """The run folder of the task's adaptation with the zoo's planner (:func:`adaptplan`), ``explore`` its noise
    windows (None: on-policy)."""
    return f"outputs/{task}/adapt-zoo-{ADAPT_AGENTS[task][1]}{'' if explore is None else f'-explore-{explore}'}"


def adaptplan(task: str, dry: bool, explore: str | None = None) -> None:
    """Adaptation with the zoo's planner (docs/ur5e-simdist.md 5, 7.9): the paper's protocol
    (recipes/<task>/adapt.yaml: dynamics only, retrained from the base on all real episodes so far) on the task's
    proxy-real profile, acting with the zoo folder's own planner.json (MPPI sampled around the policy under its
    prior, β :data:`PRIOR_CHOSEN`), at 0 and 80 on-policy episodes, each stage evaluated on 40 Wide trials; the
    run's state, curve and plot copied to results/ur5e/adapt/; then the plan ranking of the zero-shot and the
    adapted model on the same proxy-real states (``simdist mechanism``). ``explore`` W (beyond the paper) collects
    the 80 episodes with the data engine's noise windows W added to the planner's actions
    (``--collect_perturbation``) in its own run folder, and measures the ranking and the dynamics' response of the
    zero-shot, the on-policy adapted (its run first, skipped once done) and the explored adapted model
    (``--response``)."""
    agent, real = ADAPT_AGENTS[task]
    if not (ROOT / agent / "planner.json").is_file():
        raise SystemExit(f"adaptplan: {agent}/planner.json is missing; build it: python hub/build_ur5e_models.py")
    if explore is not None:
        adaptplan(task, dry)  # the on-policy run, whose adapted model the explored one is measured against
    suffix = "" if explore is None else f"-explore-{explore}"
    run = adapt_run(task, explore)
    curve = ROOT / run / "curve.json"
    _run([*simdist_command(), "adapt", "--config", f"recipes/{task}/adapt.yaml", "--task", task, "--agent", agent,
          "--real", real, "--out", run, "--schedule", ADAPT_SCHEDULE, "--planner_preset", "null",
          "--num_samples", "null", "--iterations", "null", "--episodes_per_eval", "2", "--num_envs", "20",
          *([] if explore is None else ["--collect_perturbation", explore])], dry, curve.is_file())
    kept = OUT / "adapt" / task / f"zoo-{real}{suffix}"
    if not dry:
        kept.mkdir(parents=True, exist_ok=True)
        for name in ("state.json", "curve.json", "curve.png"):
            shutil.copyfile(ROOT / run / name, kept / name)
    ranking = OUT / "mechanism" / task / f"{real}-wide-zoo{suffix}.json"
    models = ["--model", f"zero-shot={agent}", "--model", f"adapted={adapt_run(task)}/stages/stage-1"]
    if explore is not None:
        models += ["--model", f"adapted-explore={run}/stages/stage-1", "--skip", "5", "--response"]
    _run([*simdist_command(), "mechanism", "--task", task, "--real", real, "--grid", "wide", *models, "--states",
          "24", "--candidates", "16", "--every", "10", "--envs", "8", "--out", str(ranking.relative_to(ROOT))], dry,
         ranking.is_file())


#: the evaluation seed of an adaptation run's stages (the run's seed 0 + 1) and of the repeat
STAGE_EVAL_SEED, REPEAT_EVAL_SEED = 1, 2
#: the explored adaptation runs the repeat evaluates: noise windows → the model's name in its table
EXPLORED = {"manipulation": "adapted-explore", "push": "adapted-push"}


def adaptrepeat(task: str, dry: bool) -> None:
    """A second, independent 40-trial Wide evaluation (evaluation seed :data:`REPEAT_EVAL_SEED`) on `peg-real` of the
    zero-shot, the on-policy adapted and the explored adapted models (:data:`EXPLORED`; the ``adaptplan`` runs, each
    made first if missing), each acting with the zoo's planner.json; the table pools it with each stage's own 40
    trials (80 a model)."""
    if task != "ur5e-peg":
        raise SystemExit("adaptrepeat: measured on ur5e-peg")
    agent, real = ADAPT_AGENTS[task]
    for explore in EXPLORED:
        adaptplan(task, dry, explore=explore)
    folder = OUT / "adapt" / task / "repeat"
    runs = {"adapted": adapt_run(task), **{name: adapt_run(task, w) for w, name in EXPLORED.items()}}
    rows = []
    for name, model in (("zero-shot", agent), *((n, f"{r}/stages/stage-1") for n, r in runs.items())):
        r = evaluate(folder / f"{name}-{real}-wide-seed{REPEAT_EVAL_SEED}.json",
                     ["--task", task, "--agent", model, "--profile", real, "--grid", "wide", "--trials", "2", "--envs",
                      "20", "--seed", str(REPEAT_EVAL_SEED)], dry, own_planner=True)
        if r is None:
            continue
        state = json.loads((ROOT / runs.get(name, runs["adapted"]) / "state.json").read_text())
        stage = state["stages"][0 if name == "zero-shot" else -1]["eval"]["success"]
        rows.append(f"| {name} | {_success_cell(stage)} | {_cell(r)} | {_success_cell([*stage, *r['success']])} |")
    if not dry:
        write_table(folder, f"| model | the run's stage evaluation (seed {STAGE_EVAL_SEED}) | repeat (seed "
                            f"{REPEAT_EVAL_SEED}) | pooled |\n|---|---|---|---|", rows, name="adaptrepeat.md")


#: the intent term's weight λ (MPPI ``intent_weight``): its spread across one state's candidates (std 0.1 around the
#: policy) about the prior's at β 10 (docs/ur5e-simdist.md 7.12)
INTENT_WEIGHT = 3000.0


def zoo_planner_folder(src: str, name: str, dry: bool, **settings: Any) -> str:
    """Model ``src`` with the zoo peg's planner.json updated by ``settings``: ``outputs/ur5e-peg/<name>`` (weights
    symlinked)."""
    zoo = ROOT / ADAPT_AGENTS["ur5e-peg"][0] / "planner.json"
    return agent_folder(ROOT / "outputs" / "ur5e-peg" / name, src, dry, lambda: {**json.loads(zoo.read_text()),
                                                                                  **settings})


def intent_folder(src: str, name: str, reference: str | None, dry: bool) -> str:
    """Model ``src`` with the zoo peg's planner plus the intent term (λ :data:`INTENT_WEIGHT`, its reference
    ``reference``: None for the model's own dynamics): ``outputs/ur5e-peg/intent-<name>``."""
    return zoo_planner_folder(src, f"intent-{name}", dry, intent_weight=INTENT_WEIGHT, intent_model=reference)


def intentplan(task: str, dry: bool) -> None:
    """The intent term on `peg-real` (docs/ur5e-simdist.md 7.12): the zoo's planner plus λ times the distance of each
    candidate's imagined latents to the policy chunk's latents under the base model's dynamics, for the zero-shot
    model (its own dynamics as the reference), the on-policy adapted and the explored adapted model (the
    ``adaptplan`` runs, the explored one first if missing); 40 Wide trials each on `peg-real`."""
    if task != "ur5e-peg":
        raise SystemExit("intentplan: measured on ur5e-peg")
    agent, real = ADAPT_AGENTS[task]
    adaptplan(task, dry, explore="manipulation")
    folder = OUT / "adapt" / task / "intent"
    rows = []
    for name, src, reference in (("zero-shot", agent, None),
                                 ("adapted", f"{adapt_run(task)}/stages/stage-1", agent),
                                 ("adapted-explore", f"{adapt_run(task, 'manipulation')}/stages/stage-1", agent)):
        r = evaluate(folder / f"{name}-{real}-wide.json",
                     ["--task", task, "--agent", intent_folder(src, name, reference, dry), "--profile", real, "--grid",
                      "wide", "--trials", "2", "--envs", "20"], dry, own_planner=True)
        if r:
            rows.append(f"| {name} | {INTENT_WEIGHT:g} | {reference or 'its own'} | {_cell(r)} |")
    if not dry:
        write_table(folder, "| model | intent weight λ | intent reference | success on `peg-real`, Wide [95 % CI] |\n"
                            "|---|---|---|---|", rows, name="intentplan.md")


#: :func:`priorreal`'s policy prior weights, below the zoo's :data:`PRIOR_CHOSEN` (in nominal simulation β 3 picks
#: the peg on 3/40 Narrow, β 10 on 35/40: docs/ur5e-simdist.md 7.9)
PRIOR_REAL = (5.0, 3.0)


def priorreal(task: str, dry: bool) -> None:
    """Does a weaker prior let adaptation matter on `peg-real` (docs/ur5e-simdist.md 7.13)? The zero-shot and the
    on-policy adapted model (the ``adaptplan`` run) act with the zoo's planner at each prior weight β of
    :data:`PRIOR_REAL` (the score decides more as β falls), 40 Wide trials each, evaluation seed 0."""
    if task != "ur5e-peg":
        raise SystemExit("priorreal: measured on ur5e-peg")
    agent, real = ADAPT_AGENTS[task]
    adaptplan(task, dry)
    folder = OUT / "adapt" / task / "prior"
    rows = []
    for beta in PRIOR_REAL:
        for name, src in (("zero-shot", agent), ("adapted", f"{adapt_run(task)}/stages/stage-1")):
            r = evaluate(folder / f"{name}-prior{beta:g}-{real}-wide.json",
                         ["--task", task, "--agent", zoo_planner_folder(src, f"prior{beta:g}-{name}", dry,
                                                                        prior_weight=beta),
                          "--profile", real, "--grid", "wide", "--trials", "2", "--envs", "20"], dry, own_planner=True)
            if r:
                rows.append(f"| {name} | {beta:g} | {_cell(r)} |")
    if not dry:
        write_table(folder, "| model | policy prior β | success on `peg-real`, Wide [95 % CI] |\n|---|---|---|", rows,
                    name="priorreal.md")


#: the table leg's small dataset, the parts its gate model trains on, and that model's run folder
LEG_DATA = "outputs/ur5e/ur5e-table-leg-small"
LEG_PARTS = 10
LEG_RUN = "outputs/ur5e-table-leg-small-matched"
#: the trained model, committed (the runner evaluates it instead of training when it is there)
LEG_MODEL = "results/ur5e/gate/ur5e-table-leg/ur5e-table-leg-small-matched-model"


def leg_data(parts: int, dry: bool) -> None:
    """The first ``parts`` of the table leg's small dataset (:data:`LEG_DATA`, 40 parts planned), one
    ``simdist generate`` call per part, skipping finished parts."""
    for k in range(parts):
        _run([*simdist_command(), "generate", "--task", "ur5e-table-leg", "--envs", "32", "--transitions", "400000",
              "--parts", "40", "--rank", str(k), "--world-size", "40", "--seed", "0", "--critic-envs", "4",
              "--critic-steps", "20", "--torch-threads", "1", "--no-progress", "--out", LEG_DATA], dry,
             f"part-{k:04d}" in _finished_parts(ROOT / LEG_DATA))


#: the table leg's data sizes (parts of its small dataset; 10 is :func:`leggate`'s model) and their recipes' runs
LEG_SIZES = (3, 10, 30)


def _size_run(parts: int) -> str:
    return LEG_RUN if parts == LEG_PARTS else f"{LEG_RUN}-{parts}parts"


def leg_model(parts: int, dry: bool) -> str:
    """The table leg's gate model on the first ``parts`` parts (recipes/ur5e-table-leg/small-matched.yaml, with
    size-<parts>parts.yaml unless :data:`LEG_PARTS`): the committed :data:`LEG_MODEL` for :data:`LEG_PARTS` when it
    is there, else trained (resumed from its last checkpoint) and exported into its run folder."""
    run = _size_run(parts)
    committed = parts == LEG_PARTS and (ROOT / LEG_MODEL / "model.safetensors").is_file()
    model = LEG_MODEL if committed else f"{run}/model"
    done = committed or (ROOT / model / "model.safetensors").is_file()
    size = [] if parts == LEG_PARTS else [f"recipes/ur5e-table-leg/size-{parts}parts.yaml"]
    fit_export(run, ["recipes/ur5e-table-leg/base.yaml", "recipes/ur5e-table-leg/small-matched.yaml", *size], dry,
               done, model=model)
    return model


def leg_prior(parts: int, model: str, beta: float, dry: bool) -> str:
    """The table-leg ``model`` with a planner.json ranking by the horizon's rewards alone (its value head is
    untrained) under the policy prior β (:func:`planner_folder`)."""
    return planner_folder("ur5e-table-leg", 0.0, dry, src=model, name=f"{Path(_size_run(parts)).name}-prior{beta:g}",
                          extra={"prior_weight": beta})


def leg_evaluate(parts: int, model: str, beta: float | None, dry: bool) -> dict | None:
    """40 Narrow trials in nominal simulation of the table leg's ``parts``-part ``model``: its head alone
    (``beta`` None) or MPPI sampled around the policy (init std 0.1) under :func:`leg_prior` β."""
    stem, agent, extra = (("policy", model, ["--planner", "policy"]) if beta is None else
                          (f"mppi-prior{beta:g}", leg_prior(parts, model, beta, dry), RANK_DRIVERS["tight"]))
    return evaluate(OUT / "gate" / "ur5e-table-leg" / f"{Path(_size_run(parts)).name}-{stem}-narrow.json",
                    ["--task", "ur5e-table-leg", "--agent", agent, "--profile", "sim", "--grid", "narrow", "--trials",
                     "2", "--envs", "20", *extra], dry, own_planner=beta is not None)


def leggate(task: str, dry: bool) -> None:
    """The table leg at small data (docs/ur5e-simdist.md 7.9): the peg's gate recipe at matched optimisation
    (recipes/ur5e-table-leg/small-matched.yaml) on the first 10 parts of the table leg's small dataset (one part
    per call, resumable), trained (resumed from its last checkpoint) and exported, unless the trained model is
    committed (:data:`LEG_MODEL`); its policy head alone and MPPI sampled around the policy, ranking by the
    horizon's rewards alone (the value head is untrained) under the policy prior (β :data:`PRIOR_CHOSEN`) and
    without it (β 0: the table leg's score ranks its candidates, 7.10), on the Narrow lattice, 40 trials each."""
    leg_data(LEG_PARTS, dry)
    model = leg_model(LEG_PARTS, dry)
    folder = OUT / "gate" / "ur5e-table-leg"
    rows = []
    for label, beta in (("the head alone", None),
                        *((f"MPPI, rewards only, policy prior β {b:g}", b) for b in (PRIOR_CHOSEN, 0.0))):
        r = leg_evaluate(LEG_PARTS, model, beta, dry)
        if r:
            rows.append(f"| {label} | {_cell(r)} | {_times(r)} |")
    if not dry:
        write_table(folder, "| table leg, gate model (past actions dropped, matched optimisation) | Narrow success "
                            "[95 % CI] | median time |\n|---|---|---|", rows, name="leggate.md")


#: the table leg's continuation-labelled parts (``--values continuation``), how many its value head trains on, its run
LEG_MC_DATA = "outputs/ur5e/ur5e-table-leg-mc"
LEG_MC_PARTS = 4
LEG_VALUE_RUN = "outputs/ur5e-table-leg-small-value-mc"
#: :func:`legvalue`'s rows, in the order they run: (value weight: 0 the rewards alone, 1 with the value head; the
#: policy prior β); leggate measured the rewards alone at β 10 and 0
LEG_VALUE_PLANNERS = [(1.0, 0.0), (1.0, 3.0), (0.0, 3.0), (1.0, PRIOR_CHOSEN), (1.0, 1.0), (0.0, 1.0),
                      (0.0, PRIOR_CHOSEN), (0.0, 0.0)]


def legvalue(task: str, dry: bool) -> None:
    """The table leg's score with a value head on the expert's continuation (docs/ur5e-simdist.md 7.13): the first
    :data:`LEG_MC_PARTS` parts labelled ``--values continuation`` (one per call, resumable), the gate model's value
    head trained on them (recipes/ur5e-table-leg/small-value-mc.yaml, everything else frozen), the plan ranking of
    the rewards alone and of rewards + value head on the same nominal states (``simdist mechanism``; the
    rewards-only planner under the prior visits), then MPPI sampled around the policy under smaller priors β
    (:data:`LEG_VALUE_PLANNERS`), 40 Narrow trials each."""
    if task != "ur5e-table-leg":
        raise SystemExit("legvalue: measured on ur5e-table-leg")
    continuation_parts(task, LEG_MC_PARTS, LEG_MC_DATA, dry)
    model = f"{LEG_VALUE_RUN}/model"
    fit_export(LEG_VALUE_RUN, ["recipes/ur5e-table-leg/base.yaml", "recipes/ur5e-table-leg/small-value-mc.yaml"], dry,
               (ROOT / model / "model.safetensors").is_file())
    folder = OUT / "gate" / task
    name = Path(LEG_VALUE_RUN).name

    def valued(beta: float) -> str:
        return planner_folder(task, 1.0, dry, src=model, name=f"{name}-prior{beta:g}", extra={"prior_weight": beta})

    ranking = folder / "legvalue-mechanism-narrow.json"
    _run([*simdist_command(), "mechanism", "--task", task, "--real", "sim", "--model",
          f"rewards-only={leg_prior(LEG_PARTS, LEG_MODEL, PRIOR_CHOSEN, dry)}", "--model",
          f"value-head={valued(PRIOR_CHOSEN)}", *MECHANISM, "--out", str(ranking.relative_to(ROOT))], dry,
         ranking.is_file())
    rows = []
    for weight, beta in LEG_VALUE_PLANNERS:
        r = (leg_evaluate(LEG_PARTS, LEG_MODEL, beta, dry) if not weight else evaluate(
            folder / f"{name}-mppi-prior{beta:g}-narrow.json",
            ["--task", task, "--agent", valued(beta), "--profile", "sim", "--grid", "narrow", "--trials", "2",
             "--envs", "20", *RANK_DRIVERS["tight"]], dry, own_planner=True))
        if r:
            score = "rewards + value head (continuation labels)" if weight else "rewards only"
            rows.append((-beta, weight, f"| {score} | {beta:g} | {_cell(r)} | {_times(r)} |"))
    if dry:
        return
    rho = json.loads(ranking.read_text(encoding="utf-8"))["models"] if ranking.is_file() else {}
    notes = [f"Plan ranking ρ on {LEG_PARTS}-part states, {m}: " + "{mean:.3f} [{low:.3f}, {high:.3f}]".format(
        **v["spearman"]) for m, v in rho.items()]
    write_table(folder, "| MPPI's score (policy warm start, init std 0.1) | policy prior β | Narrow success [95 % CI] "
                        "| median time |\n|---|---|---|---|", [r for *_, r in sorted(rows)] + ["", *notes],
                name="legvalue.md")


def _trajectories(parts: int) -> int:
    """Episodes in the first ``parts`` parts of :data:`LEG_DATA` (their dataset.json)."""
    return sum(shard["episodes"] for k in range(parts) for shard in json.loads(
        (ROOT / LEG_DATA / f"part-{k:04d}" / "dataset.json").read_text(encoding="utf-8"))["shards"])


def legsize(task: str, dry: bool, parts: str | None = None) -> None:
    """Success against the world model's data size on the table leg (docs/ur5e-simdist.md 7.10): the gate recipe
    (16,000 steps of 256) on 3, 10 and 30 parts of the table leg's small data
    (recipes/ur5e-table-leg/size-<n>parts.yaml; 10 parts is :func:`leggate`'s committed model), data made one part
    per call and fits resumed from their last checkpoint; each model's head alone and MPPI under the policy prior
    (the zoo's table-leg planner) on 40 Narrow trials, and how each model's score ranks the same planner
    candidates (``simdist mechanism``, 24 Narrow states x 16 candidates that the 10-part zoo model's planner
    visits and samples). ``parts`` (comma-separated sizes) runs only those sizes' fits and evaluations, without
    the ranking and the table."""
    task = "ur5e-table-leg"
    sizes = LEG_SIZES if parts is None else tuple(int(n) if n.strip().isdigit() else -1 for n in parts.split(","))
    if not set(sizes) <= set(LEG_SIZES):
        raise SystemExit(f"legsize: --parts takes sizes of {LEG_SIZES}, got {parts!r}")
    leg_data(max(sizes), dry)
    folder, rows, planners = OUT / "gate" / task, [], []
    for size in sizes:
        model = leg_model(size, dry)
        planners += ["--model", f"{size}-parts={leg_prior(size, model, PRIOR_CHOSEN, dry)}"]
        results = (leg_evaluate(size, model, beta, dry) for beta in (None, PRIOR_CHOSEN))  # head, MPPI under prior
        cells = [_cell(r) if r else "-" for r in results]
        if not dry:
            rows.append(f"| {size} | {_trajectories(size):,} | " + " | ".join(cells) + " |")
    if sizes != LEG_SIZES:
        return
    ranking = folder / "legsize-mechanism-narrow.json"
    _run([*simdist_command(), "mechanism", "--task", task, "--real", "sim", *planners, "--reference",
          f"{LEG_PARTS}-parts", *MECHANISM, "--out", str(ranking.relative_to(ROOT))], dry, ranking.is_file())
    if not dry:
        rho = json.loads(ranking.read_text(encoding="utf-8"))["models"]
        rows = [row + " {mean:.3f} [{low:.3f}, {high:.3f}] |".format(**rho[f"{size}-parts"]["spearman"])
                for size, row in zip(LEG_SIZES, rows, strict=True)]
        write_table(folder, "| parts | trajectories | head alone, Narrow [95 % CI] | MPPI under the prior, Narrow | "
                            "plan ranking ρ [95 % CI] |\n|---|---|---|---|---|", rows, name="legsize.md")


def creep(task: str, dry: bool) -> None:
    """How far a hinge with the profiles' 0.24 N m of dry friction (armature 0.1) turns in 1 s under a torque
    below it, with each contact recipe's solver options: the no-slip pass also makes joint friction exact, and
    ``fast-stiff``'s friction impedance nearly so."""
    from simdist import get

    out = OUT / "contacts" / "creep.json"
    print(("[dry-run] " if dry else "") + f"creep -> {out.relative_to(ROOT)}", flush=True)
    if dry:
        return
    task_class = get("task", task)
    rows = [{"contacts": contacts, "joint_friction_nm": 0.24, "torque_nm": torque,
             "turn_in_1s_mrad": task_class.stiction_creep(contacts, 0.24, torque, 1.0) * 1e3}
            for contacts in task_class.contact_recipes() for torque in (0.1, 0.2, 0.23)]
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(out, rows)
    for r in rows:
        print(f"{r['contacts']}: {r['torque_nm']} N m against 0.24 N m of stiction -> "
              f"{r['turn_in_1s_mrad']:.2f} mrad in 1 s")


#: (task, row label, file under experts/ or profiles/, band): the calibration checks of a contact recipe
CHECKS = [(task, label, where, band) for task, profs in (("ur5e-peg", ("peg-real", "peg-sticky-arm")),
                                                          ("ur5e-table-leg", ("table-leg-real", "table-leg-sticky")))
          for label, where, band in (
              ("expert, nominal, narrow", "experts/{t}/expert-narrow.json", (0.95, 1.0)),
              ("expert, nominal, wide", "experts/{t}/expert-wide.json", (0.95, 1.0)),
              *[(f"{p} {a}", f"profiles/{{t}}/{p}-{a}.json", (0.10, 0.40) if a == "expert" else (0.80, 1.0))
                for p in profs for a in ("expert", "retuned")])]


def contacts(task: str, dry: bool) -> None:
    """The calibration checks (expert on the nominal lattices, zero-shot and retuned expert per profile) of every
    contact recipe measured (``experts``/``profiles`` with ``--contacts``), against their bands: a table."""
    from simdist import get

    recipes = [r for r in get("task", task).contact_recipes()
               if any((OUT / w.format(t=f"{t}{_contacts(r)[0]}")).is_file() for t, _, w, _ in CHECKS)]
    rows = []
    for t, label, where, (low, high) in CHECKS:
        cells = []
        for r in recipes:
            f = OUT / where.format(t=f"{t}{_contacts(r)[0]}")
            if not f.is_file():
                cells.append("-")
                continue
            res = json.loads(f.read_text(encoding="utf-8"))
            mean = sum(res["success"]) / len(res["success"])
            cells.append(_cell(res) + ("" if low <= mean <= high else " **out**"))
        rows.append(f"| {t} | {label} | {low:.0%}-{high:.0%} | " + " | ".join(cells) + " |")
    if not dry:
        folder = OUT / "contacts"
        folder.mkdir(parents=True, exist_ok=True)
        write_table(folder, "| task | check (Wide unless narrow; 3 passes) | band | " + " | ".join(recipes) + " |\n"
                    + "|---|---|---|" + "---|" * len(recipes), rows)


def main() -> None:
    from simdist import get

    recipes = get("task", "ur5e-peg").contact_recipes()  # both UR5e tasks take the same recipes
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="experiment", required=True)
    for name in ("experts", "profiles", "speed", "data", "export", "planner", "bench", "rate", "critic", "labels",
                 "gate", "headplan", "valueplan", "rankplan", "priorplan", "adaptplan", "adaptrepeat", "intentplan",
                 "priorreal", "leggate", "legvalue", "legsize", "creep", "contacts"):
        s = sub.add_parser(name, help=(globals()[name].__doc__ or "").replace("%", "%%"))
        s.add_argument("--task", default="ur5e-peg", choices=("ur5e-peg", "ur5e-table-leg"))
        s.add_argument("--dry-run", action="store_true")
        if name in ("experts", "profiles", "data", "rate", "critic"):
            s.add_argument("--contacts", choices=recipes, default="noslip",
                           help="the contact recipe (simdist --contacts)")
        if name == "experts":
            s.add_argument("--expert-only", action="store_true", help="the expert's two lattices, no variants")
        if name == "critic":
            s.add_argument("--size", default="32x300", help="critic envs x control steps (default 32x300)")
        if name == "adaptplan":
            s.add_argument("--explore", choices=("manipulation", "push", "official"),
                           help="collect the real episodes with these noise windows (beyond the paper)")
        if name == "legsize":
            s.add_argument("--parts", help=f"comma-separated sizes of {LEG_SIZES} to fit and evaluate (default: all, "
                                            "then the ranking and the table)")
    args = p.parse_args()
    kw = {k: getattr(args, k) for k in ("contacts", "size", "parts", "explore") if hasattr(args, k)}
    if getattr(args, "expert_only", False):
        kw["variants"] = False
    globals()[args.experiment](args.task, args.dry_run, **kw)


if __name__ == "__main__":
    main()
