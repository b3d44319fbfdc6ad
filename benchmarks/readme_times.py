"""The times the README states, measured on this machine, with the machine and its load: installing simdist into a
fresh virtual environment from a clean clone, the checks (ruff, mypy), the default test suite, the quickstart
commands and the demo. Prints a Markdown table (and writes it as JSON with ``--json``).

    python benchmarks/readme_times.py                                  # install, quickstart, evaluate, checks, tests
    python benchmarks/readme_times.py --steps quickstart,evaluate      # some of them (with this interpreter's simdist)
    python benchmarks/readme_times.py --steps demo,go2-demo            # the toy and Go2 demos (minutes each)

Every step runs as a user would type it, in a scratch folder (the repository's outputs/, data/ and runs/ are not
touched). Steps after ``install`` use the environment it made; without ``install`` they use the ``simdist`` beside
this interpreter. Models load offline (``HF_HUB_OFFLINE=1``: the zoo's bundled copies), so no step waits on the
network after the install. Beside each step's wall time the script records its own CPU time (its processes') and
the load of everything else on the machine while it ran (the machine's busy CPU time less the step's, per second
of wall time): a time is an idle machine's only when the other jobs' load stayed below a tenth of the cores, and
the table says so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STEPS = ("install", "quickstart", "evaluate", "checks", "tests", "demo", "go2-demo")
DEFAULT_STEPS = ("install", "quickstart", "evaluate", "checks", "tests")
#: the other jobs' load (cores in use on average, per core) below which a step counts as measured on an idle machine
IDLE_LOAD_PER_CORE = 0.1


@dataclass
class Timing:
    """One step: what ran, how long it took, whether it passed, and the machine's load around it."""

    step: str
    command: str
    seconds: float
    returncode: int
    cpu_seconds: float
    others_load: float


def machine_cpu_seconds() -> float:
    """CPU seconds every process of the machine has used since boot (``/proc/stat``; 0 where there is none)."""
    stat = Path("/proc/stat")
    if not stat.is_file():
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, stat.read_text().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds() -> float:
    """CPU seconds used by this process's finished children (the step's commands and what they waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def proc_field(path: str, key: str) -> str | None:
    """The value of the first ``key: value`` line of a /proc file (None where there is none)."""
    source = Path(path)
    lines = source.read_text().splitlines() if source.is_file() else []
    return next((line.partition(":")[2].strip() for line in lines if line.startswith(key)), None)


def machine() -> dict[str, object]:
    """The CPU model, core count, memory and platform."""
    memory = proc_field("/proc/meminfo", "MemTotal")
    return {"cpu": proc_field("/proc/cpuinfo", "model name") or platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "memory": f"{int(memory.split()[0]) / 2**20:.0f} GiB" if memory else "unknown memory",
            "platform": platform.platform(), "python": platform.python_version()}


def commands(step: str, bin_dir: Path, scratch: Path) -> list[str]:
    """The shell commands of ``step`` (run in ``scratch``, except the checks and tests: in the clone)."""
    simdist = bin_dir / "simdist"
    python = bin_dir / "python"
    return {
        "install": [f"git clone --quiet {REPO} clone", "python3 -m venv clone/.venv",
                    "clone/.venv/bin/pip install --quiet -e 'clone[dev]'"],
        "quickstart": [f"{simdist} zoo list"],
        "evaluate": [f"{simdist} evaluate --task go2 --agent simdist/go2-slope --profile ptfe-slope-5.7deg --trials 5"],
        "checks": [f"{bin_dir / 'ruff'} check .", f"{bin_dir / 'mypy'}"],
        "tests": [f"{python} -m pytest -q"],
        "demo": [f"{simdist} demo --out {scratch / 'toy-demo'}"],
        "go2-demo": [f"{simdist} demo --task go2 --no-video --out {scratch / 'go2-demo'}"],
    }[step]


def run_step(step: str, bin_dir: Path, scratch: Path, source: Path, log: Path) -> Timing:
    """Run ``step``'s commands one after the other (stopping at a failure); their output goes to ``log``."""
    cwd = source if step in ("checks", "tests") else scratch
    lines = commands(step, bin_dir, scratch)
    machine_before, own_before, started, rc = machine_cpu_seconds(), children_cpu_seconds(), time.perf_counter(), 0
    with log.open("a") as out:
        for line in lines:
            out.write(f"$ {line}\n")
            out.flush()
            rc = subprocess.run(line, shell=True, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "HF_HUB_OFFLINE": "1"}).returncode
            if rc:
                break
    shown = " && ".join(lines).replace(f"{bin_dir}/", "").replace(f"{scratch}/", "")
    shown = shown.replace(str(REPO), "<this checkout>")
    wall, own = time.perf_counter() - started, children_cpu_seconds() - own_before
    others = max(0.0, machine_cpu_seconds() - machine_before - own) / wall
    return Timing(step, shown, wall, rc, own, others)


def table(timings: list[Timing], info: dict[str, object]) -> str:
    """The Markdown table of the timings, with the machine and the conditions."""
    cores = os.cpu_count() or 1
    rows = ["| step | time | its CPU time | other jobs' load (cores) | result |", "|---|---:|---:|---|---|"]
    for t in timings:
        idle = t.others_load < IDLE_LOAD_PER_CORE * cores
        minutes, seconds = divmod(round(t.seconds), 60)
        result = "ok" if t.returncode == 0 else f"failed ({t.returncode})"
        rows.append(f"| {t.step} | {minutes} min {seconds:02d} s | {t.cpu_seconds / 60:.1f} min | "
                    f"{t.others_load:.2f}{' (idle)' if idle else ' (busy)'} | {result} |")
    head = (f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by `python benchmarks/readme_times.py` "
            f"on {info['cores']} cores ({info['cpu']}), {info['memory']}, Python {info['python']}.")
    return "\n".join([head, "", *rows, "", "Commands:", *(f"- {t.step}: `{t.command}`" for t in timings)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default=",".join(DEFAULT_STEPS),
                        help=f"comma-separated steps, in order, of {', '.join(STEPS)}")
    parser.add_argument("--json", type=Path, help="also write the timings and the machine to this file")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (its path is printed)")
    args = parser.parse_args(argv)
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    unknown = [s for s in steps if s not in STEPS]
    if unknown or not steps:
        print(f"--steps: {', '.join(unknown) or 'none given'} is not a step; the steps are {', '.join(STEPS)}",
              file=sys.stderr)
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="simdist-times-"))
    log = scratch / "log.txt"
    bin_dir, source = Path(sys.executable).parent, REPO
    info, timings = machine(), []
    try:
        for step in steps:
            timing = run_step(step, bin_dir, scratch, source, log)
            timings.append(timing)
            print(f"{step}: {timing.seconds:.0f} s (rc {timing.returncode})", file=sys.stderr)
            if step == "install" and timing.returncode == 0:
                bin_dir, source = scratch / "clone" / ".venv" / "bin", scratch / "clone"
        print(table(timings, info))
        if args.json:
            args.json.write_text(json.dumps({"machine": info, "timings": [asdict(t) for t in timings]}, indent=2))
    finally:
        if args.keep or any(t.returncode for t in timings):
            print(f"scratch folder and log kept: {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return 1 if any(t.returncode for t in timings) else 0


if __name__ == "__main__":
    sys.exit(main())
