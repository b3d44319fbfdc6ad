"""UR5e experiment runners: one subcommand per table of docs/ur5e.md.

    python -m results.ur5e.run --help
    python -m results.ur5e.run experts  [--task ur5e-peg] [--dry-run]  # expert and variants, nominal simulation
    python -m results.ur5e.run profiles [--task ur5e-peg] [--dry-run]  # expert vs retuned expert per profile
    python -m results.ur5e.run speed    [--task ur5e-peg] [--dry-run]  # env throughput vs bare stepping
    python -m results.ur5e.run data     [--task ur5e-peg] [--dry-run]  # the cpu-preset dataset
    python -m results.ur5e.run export   [--task ur5e-peg] [--dry-run]  # the pretrained model's folder
    python -m results.ur5e.run planner  [--task ur5e-peg] [--dry-run]  # the pretrained model's MPPI, both grids
    python -m results.ur5e.run bench    [--task ur5e-peg] [--dry-run]  # the MPPI tick at 5 Hz (median, p99)

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
import subprocess
import sys
from pathlib import Path

from results.runner import simdist_command

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "results" / "ur5e"
VARIANTS = ("slow", "aim_bias_2mm", "aim_bias_5mm", "no_spiral", "small_spiral", "clumsy",
            "yaw_offset_4deg", "hesitant", "sluggish_yaw", "late_close")
LEG_VARIANTS = (*VARIANTS[:-1], "under_twist")


def evaluate(out: Path, args: list[str], dry: bool) -> dict | None:
    """Run ``simdist evaluate ARGS --json`` into ``out`` unless it exists; returns the parsed result."""
    cmd = [*simdist_command(), "evaluate", *args, "--json"]
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


def _cell(result: dict) -> str:
    """``k/n = mean [low, high]``: successes with the 95 % bootstrap interval."""
    from simdist import EvaluationResult

    e = EvaluationResult.from_dict(result).success_estimate()
    return f"{int(sum(result['success']))}/{e.n} = {e.mean:.2f} [{e.low:.2f}, {e.high:.2f}]"


def _times(result: dict) -> str:
    t = [v for v in result["details"].get("time_to_success_s", []) if v is not None]
    return f"{sorted(t)[len(t) // 2]:.1f} s" if t else "-"


def write_table(folder: Path, header: str, rows: list[str]) -> None:
    text = "\n".join([header, *rows]) + "\n"
    print(text)
    (folder / "table.md").write_text(text, encoding="utf-8")


def experts(task: str, dry: bool) -> None:
    """The expert on both lattices over 3 seeds, each degraded variant on the Wide lattice (nominal simulation)."""
    folder = OUT / "experts" / task
    rows = []
    for grid in ("narrow", "wide"):
        r = evaluate(folder / f"expert-{grid}.json", ["--task", task, "--agent", "expert", "--profile", "sim",
                                                      "--grid", grid, "--trials", "3", "--envs", "20"], dry)
        if r:
            rows.append(f"| expert | {grid} | {_cell(r)} | {_times(r)} |")
    for v in LEG_VARIANTS if "leg" in task else VARIANTS:
        r = evaluate(folder / f"{v}-wide.json", ["--task", task, "--agent", f"scripted:{v}", "--profile", "sim",
                                                 "--grid", "wide", "--trials", "1", "--envs", "20"], dry)
        if r:
            rows.append(f"| {v} | wide | {_cell(r)} | {_times(r)} |")
    if not dry:
        write_table(folder, "| policy | grid | success (trials) [95 % CI] | median time to success |\n"
                            "|---|---|---|---|", rows)


def profiles(task: str, dry: bool) -> None:
    """Zero-shot expert and the expert retuned for the profile, on every built-in proxy-real profile (Wide)."""
    from simdist import get

    folder = OUT / "profiles" / task
    rows = []
    for prof in [p for p in get("task", task).profiles() if p != "sim"]:
        cells = []
        for agent in ("expert", "scripted:retuned"):
            name = agent.split(":")[-1]
            r = evaluate(folder / f"{prof}-{name}.json", ["--task", task, "--agent", agent, "--profile", prof,
                                                          "--grid", "wide", "--trials", "3", "--envs", "20"], dry)
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
    paper's manipulation MPPI (``planner.json`` from planner preset ``manipulation``)."""
    from simdist.planning import planner_preset

    run = ROOT / "outputs" / task
    plan = run / "planner.json"
    cmd = [*simdist_command(), "export", "--ckpt", str(run / "pretrain" / "checkpoints" / "last.ckpt"), "--out",
           str(run / "model"), "--planner", str(plan), "--repo-id", f"simdist/{task}",
           "--train-config", str(max((run / "logs").rglob("config.yaml"), key=lambda f: f.stat().st_mtime))]
    print(("[dry-run] " if dry else "") + shlex.join(cmd), flush=True)
    if not dry:
        plan.write_text(json.dumps(planner_preset("manipulation"), indent=1), encoding="utf-8")
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


def data(task: str, dry: bool) -> None:
    """The ``cpu``-preset pretraining dataset (progress with an ETA in ``outputs/ur5e/<task>-cpu.log``)."""
    out = f"outputs/ur5e/{task}-cpu"
    summary = OUT / "data" / f"{task}-cpu.json"
    cmd = [*simdist_command(), "generate", "--task", task, "--preset", "cpu", "--out", out, "--seed", "0", "--json"]
    print(("[dry-run] " if dry else "") + shlex.join(cmd) + f" > {summary.relative_to(ROOT)} 2> {out}.log",
          flush=True)
    if not dry:
        summary.parent.mkdir(parents=True, exist_ok=True)
        (ROOT / out).parent.mkdir(parents=True, exist_ok=True)
        with open(ROOT / f"{out}.log", "w", encoding="utf-8") as log:
            res = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True, check=True)
        summary.write_text(res.stdout, encoding="utf-8")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="experiment", required=True)
    for name in ("experts", "profiles", "speed", "data", "export", "planner", "bench"):
        s = sub.add_parser(name, help=(globals()[name].__doc__ or "").replace("%", "%%"))
        s.add_argument("--task", default="ur5e-peg", choices=("ur5e-peg", "ur5e-table-leg"))
        s.add_argument("--dry-run", action="store_true")
    args = p.parse_args()
    globals()[args.experiment](args.task, args.dry_run)


if __name__ == "__main__":
    main()
