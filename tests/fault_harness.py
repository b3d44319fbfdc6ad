"""Fault injection: run a ``simdist`` command, SIGKILL it after a delay, rerun it, compare with a clean run.

Used by ``tests/test_fault_injection.py`` (slow) and ``docs/reliability_table.py``. Everything here drives
real subprocesses (``python -m simdist.cli ...``); comparisons read the written files back.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]

#: keys of dataset.json / generate.json / state.json that hold clocks or timings, not data
TIMING_KEYS = frozenset({"updated", "seconds", "wall_seconds", "cpu_seconds", "transitions_per_s", "session",
                         "wall_s", "cpu_s", "simulated_per_s", "simulated_per_cpu_s", "collect_seconds",
                         "fit_seconds"})


def simdist_command(*args: str) -> list[str]:
    """``python -m simdist.cli ARGS`` with this interpreter."""
    return [sys.executable, "-m", "simdist.cli", *args]


def child_env() -> dict[str, str]:
    """One thread per library, offline hub, headless MuJoCo: the same settings for every run."""
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", HF_HUB_OFFLINE="1",
               HF_HUB_DISABLE_TELEMETRY="1", PYTHONHASHSEED="0", MUJOCO_GL=env.get("MUJOCO_GL", "egl"))
    return env


@dataclass
class Outcome:
    """How one run of a command ended."""

    rc: int | None
    seconds: float
    killed: bool
    log: str

    def check(self) -> Outcome:
        """Raise with the log's tail unless the run exited 0."""
        if self.rc != 0:
            raise AssertionError(f"command failed (rc={self.rc}) after {self.seconds:.1f} s:\n{self.log[-4000:]}")
        return self


def run(cmd: Sequence[str], log: Path, *, kill_after: float | None = None,
        kill_when: Callable[[], bool] | None = None, timeout: float = 600.0, cwd: Path = REPO) -> Outcome:
    """Run ``cmd`` (in its own process group) to completion, or SIGKILL the group ``kill_after`` s after
    ``kill_when()`` first holds (polled every 20 ms; without it, after the start).

    ``killed`` is False when the command exited before the kill was due (the point came too late).
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    start = log.stat().st_size if log.exists() else 0
    with open(log, "ab") as out:
        out.write(f"\n$ {' '.join(cmd)}  (kill {kill_after} s after trigger)\n".encode())
        out.flush()
        t0 = time.perf_counter()
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=child_env(), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        killed = False
        try:
            if kill_after is None:
                proc.wait(timeout=timeout)
            else:
                while kill_when is not None and proc.poll() is None and not kill_when():
                    if time.perf_counter() - t0 > timeout:
                        raise subprocess.TimeoutExpired(cmd, timeout)
                    time.sleep(0.02)
                proc.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if kill_after is None:
                raise AssertionError(f"{' '.join(cmd)} ran past {timeout} s") from None
            killed = True
        seconds = time.perf_counter() - t0
    with open(log, "rb") as f:
        f.seek(start)
        text = f.read().decode(errors="replace")
    return Outcome(proc.returncode, seconds, killed, text)


#: what a resumed command says about the interrupted run (quoted in docs/reliability.md)
_RESUME_WORDS = ("interrupted", "temporaries", "Restoring states", "Restored all states", "already written",
                 "restored")


def resume_lines(log: str, out: Path, limit: int = 2) -> str:
    """The first ``limit`` distinct lines of ``log`` that mention the interrupted run (``out`` shown as OUT)."""
    seen: list[str] = []
    for line in log.splitlines():
        line = re.sub(r"\s+", " ", line.strip().replace(str(out), "OUT"))
        if any(w in line for w in _RESUME_WORDS) and line not in seen:
            seen.append(line)
    return "; ".join(seen[:limit])


# ------------------------------------------------------------------------------------------- checks
def leftover_temporaries(root: Path) -> list[str]:
    """Files or folders under ``root`` that only an interrupted write leaves: ``*.tmp*``, ``.tmp-*``,
    ``.*.old-*`` and partial shards (``*.tar.tmp``)."""
    bad = []
    for p in root.rglob("*"):
        name = p.name
        if ".tmp" in name or name.startswith(".tmp-") or ".old-" in name or name.endswith(".part"):
            bad.append(str(p.relative_to(root)))
    return sorted(bad)


def dataset_folders(root: Path) -> list[Path]:
    """``root`` and every folder under it that holds a ``dataset.json``."""
    return sorted(p.parent for p in root.rglob("dataset.json"))


def episodes_of(folder: Path) -> dict[tuple[str, int], Any]:
    """Every episode of the dataset folder ``folder`` keyed by (shard folder relative to ``folder``, id)."""
    from simdist.data import iter_episodes, read_dataset_info

    info = read_dataset_info(folder)
    out: dict[tuple[str, int], Any] = {}
    for shard in info["shards"]:
        url = folder / shard["name"]
        where = str(Path(shard["name"]).parent)
        for ep in iter_episodes([str(url)], shuffle_shards=False, split_by_node=False, split_by_worker=False):
            key = (where, ep.episode_id)
            if key in out:
                raise AssertionError(f"{folder}: episode {key} appears twice")
            out[key] = ep
    return out


def compare_episodes(a: dict[tuple[str, int], Any], b: dict[tuple[str, int], Any]) -> list[str]:
    """Differences between two episode maps: missing/extra ids, arrays not bit-identical, meta."""
    diffs = []
    if set(a) != set(b):
        diffs.append(f"episode ids differ: only in reference {sorted(set(a) - set(b))[:10]}, "
                     f"only in rerun {sorted(set(b) - set(a))[:10]}")
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        ax, ay = x.arrays(), y.arrays()
        if set(ax) != set(ay):
            diffs.append(f"{key}: fields {sorted(ax)} != {sorted(ay)}")
            continue
        for name in ax:
            if ax[name].dtype != ay[name].dtype or ax[name].shape != ay[name].shape or \
                    ax[name].tobytes() != ay[name].tobytes():
                diffs.append(f"{key}: {name} differs")
        if x.meta != y.meta:
            diffs.append(f"{key}: meta differs")
    return diffs


def strip_timing(obj: Any) -> Any:
    """``obj`` without the :data:`TIMING_KEYS` (recursively)."""
    if isinstance(obj, dict):
        return {k: strip_timing(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, list):
        return [strip_timing(v) for v in obj]
    return obj


def json_diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Paths where two JSON values differ (first 20); NaN equals NaN (a metric with nothing to measure)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}/{k}: only in one" for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            out += json_diff(a[k], b[k], f"{path}/{k}")
        return out[:20]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in json_diff(x, y, f"{path}[{i}]")][:20]
    both_nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    return [] if a == b or both_nan else [f"{path}: {str(a)[:80]} != {str(b)[:80]}"]


def compare_json_files(ref: Path, new: Path, names: Iterable[str]) -> list[str]:
    """Differences of the JSON files ``names`` (relative paths) under two folders, timings ignored and the
    run folder's own path (which a file may record) read as the same in both."""
    diffs = []
    for name in names:
        a, b = ref / name, new / name
        if a.exists() != b.exists():
            diffs.append(f"{name}: exists in only one run")
            continue
        if a.exists():
            x = json.loads(a.read_text().replace(str(ref), "<run>"))
            y = json.loads(b.read_text().replace(str(new), "<run>"))
            diffs += [f"{name}{d}" for d in json_diff(strip_timing(x), strip_timing(y))]
    return diffs


def compare_datasets(ref: Path, new: Path) -> list[str]:
    """Every dataset folder under ``ref`` against ``new``: episodes bit for bit, indices and statistics."""
    diffs = []
    folders = [p.relative_to(ref) for p in dataset_folders(ref)]
    other = [p.relative_to(new) for p in dataset_folders(new)]
    if folders != other:
        diffs.append(f"dataset folders differ: {folders} != {other}")
    for rel in folders:
        if not (new / rel / "dataset.json").exists():
            continue
        diffs += [f"{rel}: {d}" for d in compare_episodes(episodes_of(ref / rel), episodes_of(new / rel))]
        diffs += compare_json_files(ref, new, [str(rel / "dataset.json")])
    return diffs


def duplicate_or_missing_ids(folder: Path) -> list[str]:
    """Episode ids listed twice in ``dataset.json`` or listed but absent from the shards (and vice versa)."""
    from simdist.data import read_dataset_info

    problems = []
    for d in dataset_folders(folder):
        info = read_dataset_info(d)
        listed: dict[str, list[int]] = {}
        for sh in info["shards"]:
            listed.setdefault(str(Path(sh["name"]).parent), []).extend(sh["episode_ids"])
        for part, ids in listed.items():
            if len(ids) != len(set(ids)):
                problems.append(f"{d}/{part}: duplicated ids in the index")
        stored = episodes_of(d)
        by_part: dict[str, set[int]] = {}
        for part, eid in stored:
            by_part.setdefault(part, set()).add(eid)
        for part in set(listed) | set(by_part):
            if set(listed.get(part, [])) != by_part.get(part, set()):
                problems.append(f"{d}/{part}: index and shards disagree on episode ids")
        if info.get("num_episodes") != len(stored):
            problems.append(f"{d}: num_episodes {info.get('num_episodes')} != {len(stored)} stored")
    return problems


def max_abs_difference(a: dict[str, Any], b: dict[str, Any]) -> float:
    """Largest absolute difference between two tensor dicts of the same keys (inf if keys differ)."""
    if set(a) != set(b):
        return float("inf")
    worst = 0.0
    for k in a:
        x, y = a[k], b[k]
        if x.shape != y.shape:
            return float("inf")
        if x.numel():
            worst = max(worst, float((x.double() - y.double()).abs().max()))
    return worst


@dataclass
class FaultReport:
    """What one kill-and-rerun produced."""

    command: str
    delay: float
    killed: bool
    phase: str
    rerun_seconds: float
    differences: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    id_problems: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not (self.differences or self.leftovers or self.id_problems)

    def summary(self) -> str:
        state = "bit-exact" if self.ok else "; ".join((self.differences + self.leftovers + self.id_problems)[:5])
        at = self.extra.get("killed_after_s")
        when = f"{at:.1f} s after start" if at is not None else f"{self.delay:.1f} s"
        return f"{self.command}: SIGKILL {when} ({self.phase}) -> {state}"


# ------------------------------------------------------------------------------------------ scenarios
#: a half-written temporary as a kill inside an atomic write leaves it (planted before each rerun)
PLANTED = "0badc0de"


@dataclass
class KillPoint:
    """Where to kill: ``delay`` (uniform range, s) after ``trigger(run folder)`` first holds (None: the start)."""

    phase: str
    trigger: Callable[[Path], bool] | None
    delay: tuple[float, float]


@dataclass
class Scenario:
    """A resumable command, how to compare two of its run folders, and where to kill it."""

    name: str
    command: Callable[[Path, bool], list[str]]  # (run folder, is it the rerun?) -> argv
    compare: Callable[[Path, Path], list[str]]
    points: list[KillPoint]
    plant: Callable[[Path], list[Path]] = lambda out: []  # stale temporaries to leave before the rerun
    on_disk: Callable[[Path], str] = lambda out: ", ".join(sorted(str(p.relative_to(out)) for p in out.rglob("*")
                                                                   if p.is_file())[:8]) if out.exists() else "nothing"


def exists(*names: str) -> Callable[[Path], bool]:
    """A trigger: ``names`` (relative to the run folder, glob patterns allowed) all exist."""
    return lambda out: all(any(out.glob(n)) for n in names)


def plant_files(out: Path, names: Iterable[str]) -> list[Path]:
    """Write half a temporary file at each of ``names`` whose folder exists (a folder if the name ends in /)."""
    planted = []
    for name in names:
        p = out / name.rstrip("/")
        if not p.parent.is_dir():
            continue
        if name.endswith("/"):
            p.mkdir(exist_ok=True)
            (p / "model.safetensors").write_bytes(b"\0" * 100)
        else:
            p.write_bytes(b'{"half": ')
        planted.append(p)
    return planted


def inject(scn: Scenario, ref: Path, out: Path, point: KillPoint, seed: int, log: Path) -> FaultReport:
    """Run ``scn`` in ``out``, SIGKILL it at ``point`` (seeded delay), plant stale temporaries, rerun it to
    completion and compare with the uninterrupted run in ``ref``."""
    delay = float(np.random.default_rng(seed).uniform(*point.delay))
    trigger = point.trigger
    killed = run(scn.command(out, False), log, kill_after=delay,
                 kill_when=(lambda: trigger(out)) if trigger is not None else None)
    on_disk = scn.on_disk(out)
    planted = [str(p.relative_to(out)) for p in scn.plant(out)] if killed.killed else []
    rerun = run(scn.command(out, True), log).check()
    return FaultReport(scn.name, delay, killed.killed, point.phase, rerun.seconds, differences=scn.compare(ref, out),
                       leftovers=leftover_temporaries(out), id_problems=duplicate_or_missing_ids(out),
                       extra={"killed_after_s": killed.seconds, "on_disk_at_kill": on_disk, "planted": planted,
                              "rerun_said": resume_lines(rerun.log, out)})


def toy_generate(transitions: int = 30_000) -> Scenario:
    """``simdist generate --task toy-reach``: critic fit, then shards of 256 episodes in one folder."""
    def command(out: Path, rerun: bool) -> list[str]:
        return simdist_command("generate", "--task", "toy-reach", "--out", str(out), "--envs", "8",
                               "--transitions", str(transitions), "--no-progress")

    return Scenario(
        f"simdist generate --task toy-reach --envs 8 --transitions {transitions}", command, compare_datasets,
        [KillPoint("fitting the expert critic, nothing written", None, (1.5, 5.0)),
         KillPoint("writing the first shard", exists("dataset.json"), (0.3, 2.0)),
         KillPoint("first shard committed, writing the second", exists("episodes-000000.tar"), (0.1, 1.0))],
        plant=lambda out: plant_files(out, [f".dataset.json.{PLANTED}.tmp"]),
        on_disk=lambda out: _shards_on_disk(out))


def go2_generate() -> Scenario:
    """``simdist generate --task go2`` (small): three parts, each one shard."""
    def command(out: Path, rerun: bool) -> list[str]:
        return simdist_command("generate", "--task", "go2", "--experts", "go2", "--out", str(out), "--envs", "8",
                               "--transitions", "3000", "--part-size", "1000", "--episode-length-s", "2",
                               "--no-progress")

    def compare(ref: Path, new: Path) -> list[str]:
        return compare_datasets(ref, new) + compare_json_files(ref, new, ["generate.json"])

    return Scenario(
        "simdist generate --task go2 --experts go2 --envs 8 --transitions 3000 --part-size 1000 "
        "--episode-length-s 2", command, compare,
        [KillPoint("part 1 of 3 running", exists("part-0000/dataset.json"), (0.0, 0.8)),
         KillPoint("part 1 committed, part 2 running", exists("part-0001/dataset.json"), (0.0, 0.8)),
         KillPoint("parts 1-2 committed, part 3 running", exists("part-0002/dataset.json"), (0.0, 0.5))],
        plant=lambda out: plant_files(out, [f".generate.json.{PLANTED}.tmp", f"part-0000/.dataset.json.{PLANTED}.tmp"]),
        on_disk=lambda out: _shards_on_disk(out))


UR5E_OPTIONS = ("--envs", "4", "--transitions", "1200", "--parts", "2", "--critic-envs", "4", "--critic-steps", "20",
                "--critic-epochs", "20")


def ur5e_generate() -> Scenario:
    """``simdist generate --task ur5e-peg`` (small): the expert critic fitted on continuations and saved, then
    two parts of one shard each, labelled by it."""
    def command(out: Path, rerun: bool) -> list[str]:
        return simdist_command("generate", "--task", "ur5e-peg", "--out", str(out), *UR5E_OPTIONS, "--no-progress")

    def compare(ref: Path, new: Path) -> list[str]:
        from safetensors.torch import load_file

        diffs = compare_datasets(ref, new) + compare_json_files(ref, new, ["generate.json", "critic.json"])
        if (d := max_abs_difference(load_file(ref / "critic.safetensors"), load_file(new / "critic.safetensors"))):
            diffs.append(f"critic.safetensors: weights differ by up to {d:.3g}")
        return diffs

    return Scenario(
        f"simdist generate --task ur5e-peg {' '.join(UR5E_OPTIONS)}", command, compare,
        [KillPoint("fitting the expert critic, nothing written", exists(".generate.lock"), (2.0, 10.0)),
         KillPoint("critic saved, part 1 running", exists("critic.json"), (0.0, 1.5)),
         KillPoint("part 1 committed, part 2 running", exists("part-0001/dataset.json"), (0.0, 1.0))],
        plant=lambda out: plant_files(out, [f".critic.json.{PLANTED}.tmp", f".generate.json.{PLANTED}.tmp"]),
        on_disk=lambda out: _shards_on_disk(out) + ("; critic saved" if (out / "critic.json").exists() else ""))


DEMOS_OPTIONS = ("--agent", "expert", "--episodes", "40", "--num-envs", "4")


def toy_demos() -> Scenario:
    """``simdist demos --task toy-reach`` with the PD expert: ten chunks of four attempts, each committed as a shard."""
    def command(out: Path, rerun: bool) -> list[str]:
        return simdist_command("demos", "--task", "toy-reach", "--out", str(out), *DEMOS_OPTIONS, "--no-progress")

    return Scenario(
        f"simdist demos --task toy-reach {' '.join(DEMOS_OPTIONS)}", command, compare_datasets,
        [KillPoint("loading, first chunk", None, (2.0, 6.0)),
         KillPoint("chunk 3 committed, rolling chunk 4", exists("episodes-000002.tar"), (0.0, 0.5)),
         KillPoint("chunk 9 committed, rolling the last", exists("episodes-000008.tar"), (0.0, 0.3))],
        plant=lambda out: plant_files(out, [f".dataset.json.{PLANTED}.tmp"]), on_disk=lambda out: _shards_on_disk(out))


FIT_CONFIG = """# fault-injection fit: 3 epochs of 20 steps, a checkpoint every 7 steps and at each epoch's end
trainer:
  max_epochs: 3
  logger: false
  enable_progress_bar: false
  enable_model_summary: false
  callbacks:
    - class_path: lightning.pytorch.callbacks.ModelCheckpoint
      init_args: {{dirpath: {out}/ckpt, save_last: true, every_n_train_steps: 7}}
    - class_path: lightning.pytorch.callbacks.ModelCheckpoint
      init_args: {{dirpath: {out}/epochs, filename: "end-{{epoch}}", save_top_k: -1, every_n_epochs: 1,
                  enable_version_counter: false}}  # a resumed run that redoes an epoch's end rewrites its file
data:
  windows_per_epoch: 2560
  batch_size: 128
"""


def toy_fit(data: Path, workers: int = 0) -> Scenario:
    """``simdist fit`` of the toy recipe on ``data``; the rerun resumes from ``ckpt/last.ckpt`` when it exists.
    With ``workers``, the loader runs that many worker processes and validation also runs mid-epoch."""
    extra = ["--data.num_workers", str(workers), "--trainer.val_check_interval", "10"] if workers else []

    def command(out: Path, rerun: bool) -> list[str]:
        config = out / "fault-fit.yaml"
        if not config.exists():
            out.mkdir(parents=True, exist_ok=True)
            config.write_text(FIT_CONFIG.format(out=out))
        argv = simdist_command("fit", "--config", "recipes/toy/base.yaml", "--config", "recipes/toy/pretrain.yaml",
                               "--config", str(config), "--data.train", str(data),
                               "--trainer.default_root_dir", str(out), *extra)
        if rerun and (out / "ckpt" / "last.ckpt").exists():
            argv += ["--ckpt_path", str(out / "ckpt" / "last.ckpt")]
        return argv

    def on_disk(out: Path) -> str:
        import torch

        last = out / "ckpt" / "last.ckpt"
        if not last.exists():
            return "no checkpoint"
        return f"last.ckpt at step {torch.load(last, weights_only=False, map_location='cpu')['global_step']}"

    return Scenario(
        "simdist fit --config recipes/toy/base.yaml --config recipes/toy/pretrain.yaml (3 x 20 steps"
        + (f"; {' '.join(extra)})" if extra else ")"), command,
        compare_fit,
        [KillPoint("before the first checkpoint", None, (2.0, 5.0)),
         KillPoint("epoch 1, after a mid-epoch checkpoint", exists("ckpt/last.ckpt"), (0.0, 1.0)),
         KillPoint("epoch 3, after the second epoch-end checkpoint", exists("epochs/end-epoch=1.ckpt"), (0.2, 1.0))],
        plant=lambda out: plant_files(out, [f"ckpt/.last.ckpt.{PLANTED}.tmp"]), on_disk=on_disk)


def compare_fit(ref: Path, new: Path) -> list[str]:
    """The final (last epoch's) checkpoints: weights, optimiser state and step, which must agree exactly."""
    import torch

    names = sorted(p.name for p in (ref / "epochs").glob("end-*.ckpt"))
    if names != sorted(p.name for p in (new / "epochs").glob("end-*.ckpt")):
        return [f"epoch checkpoints differ: {names}"]
    diffs = []
    for name in names:
        a = torch.load(ref / "epochs" / name, weights_only=False, map_location="cpu")
        b = torch.load(new / "epochs" / name, weights_only=False, map_location="cpu")
        if a["global_step"] != b["global_step"]:
            diffs.append(f"{name}: global_step {a['global_step']} != {b['global_step']}")
        if (d := max_abs_difference(a["state_dict"], b["state_dict"])) != 0.0:
            diffs.append(f"{name}: weights differ by up to {d:.3g}")
        sa, sb = a["optimizer_states"][0]["state"], b["optimizer_states"][0]["state"]
        flat_a = {f"{k}.{n}": v for k, st in sa.items() for n, v in st.items() if hasattr(v, "shape")}
        flat_b = {f"{k}.{n}": v for k, st in sb.items() for n, v in st.items() if hasattr(v, "shape")}
        if (d := max_abs_difference(flat_a, flat_b)) != 0.0:
            diffs.append(f"{name}: optimiser state differs by up to {d:.3g}")
    return diffs


ADAPT_OPTIONS = ("--num_envs", "4", "--episodes_per_eval", "4", "--heldout_episodes", "2", "--planner_preset", "paper",
                 "--num_samples", "32", "--iterations", "2", "--epochs", "2", "--windows_per_epoch", "512",
                 "--batch_size", "32")


def toy_adapt(model: Path, agent: str = "TOY", freeze: str | None = None) -> Scenario:
    """``simdist adapt --task toy-reach`` with the agent folder ``model`` (``agent``: how the table names it; the
    toy world model by default) over the schedule 0, 1 min, with ``--freeze freeze`` if given."""
    options = (*ADAPT_OPTIONS, *(("--freeze", freeze) if freeze else ()))

    def command(out: Path, rerun: bool) -> list[str]:
        return simdist_command("adapt", "--task", "toy-reach", "--agent", str(model), "--real", "real",
                               "--schedule", "0,1", "--out", str(out), *options)

    return Scenario(
        f"simdist adapt --task toy-reach --agent {agent} --real real --schedule 0,1 {' '.join(options)}",
        command, compare_adapt,
        [KillPoint("collecting the held-out set / stage 0", None, (3.0, 7.0)),
         KillPoint("stage 1: collecting real data", exists("real-data/dataset.json"), (0.0, 0.6)),
         KillPoint("stage 1: evaluating the saved stage model", exists("stages/stage-1/model.safetensors"),
                   (0.0, 0.3))],
        plant=lambda out: plant_files(out, [f".state.json.{PLANTED}.tmp", f"stages/.stage-1.tmp-{PLANTED}/",
                                             f"heldout-data/.dataset.json.{PLANTED}.tmp"]))


def compare_adapt(ref: Path, new: Path) -> list[str]:
    """Logged episodes bit for bit, ``state.json`` and ``curve.json`` (timings aside), stage weights exactly."""
    from safetensors.torch import load_file

    diffs = compare_datasets(ref, new) + compare_json_files(ref, new, ["state.json", "curve.json"])
    for weights in sorted((ref / "stages").glob("*/model.safetensors")):
        other = new / weights.relative_to(ref)
        if not other.exists():
            diffs.append(f"{weights.relative_to(ref)}: missing")
        elif (d := max_abs_difference(load_file(weights), load_file(other))) != 0.0:
            diffs.append(f"{weights.relative_to(ref)}: weights differ by up to {d:.3g}")
    return diffs


def _shards_on_disk(out: Path) -> str:
    if not out.exists():
        return "nothing"
    done = sorted(str(p.relative_to(out)) for p in out.rglob("*.tar"))
    open_ = sorted(str(p.relative_to(out)) for p in out.rglob("*.tar.tmp"))
    return f"{len(done)} shards committed ({', '.join(done) or '-'}), open: {', '.join(open_) or '-'}"


DEMO_OPTIONS = ("--task", "go2", "--minutes", "0.2", "--trials", "1", "--envs", "2", "--max-steps", "60",
                "--epochs", "1", "--windows-per-epoch", "128", "--no-video")


def go2_demo() -> Scenario:
    """``simdist demo`` (the Go2 demo on the zoo model) at a small scale: the adaptation loop and its results."""
    def command(out: Path, rerun: bool) -> list[str]:
        return simdist_command("demo", "--out", str(out), *DEMO_OPTIONS)

    return Scenario(
        f"simdist demo {' '.join(DEMO_OPTIONS)}", command, compare_demo,
        [KillPoint("collecting the held-out set / evaluating zero-shot", exists("heldout-data/dataset.json"),
                   (0.0, 2.0)),
         KillPoint("collecting the proxy-real data", exists("real-data/dataset.json"), (0.0, 0.5)),
         KillPoint("evaluating the adapted model", exists("stages/stage-1/model.safetensors"), (0.0, 0.3))],
        plant=lambda out: plant_files(out, [f".state.json.{PLANTED}.tmp", f"stages/.stage-1.tmp-{PLANTED}/"]))


def compare_demo(ref: Path, new: Path) -> list[str]:
    """The adaptation loop's data, state and weights as for ``adapt``, and ``results.json``."""
    return compare_adapt(ref, new) + compare_json_files(ref, new, ["results.json"])


def tiny_checkpoint(path: Path) -> Path:
    """A simdist checkpoint (world-model config and weights, as ``simdist fit`` stores them) of the toy preset."""
    import torch

    from simdist.model.world_model import WorldModel
    from simdist.training.module import CKPT_CONFIG_KEY

    torch.manual_seed(0)
    wm = WorldModel.from_preset("toy")
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({CKPT_CONFIG_KEY: wm.config.to_dict(),
                "state_dict": {f"world_model.{k}": v for k, v in wm.state_dict().items()}}, path)
    return path


def toy_export(ckpt: Path) -> Scenario:
    """``simdist export`` of ``ckpt`` into ``RUN/model`` over a previous export that holds a user's file (the run
    folder is prepared by the first call): killed while reading or while replacing the folder, the previous
    export and the user's file survive, and the rerun leaves the complete export beside the user's file."""
    def command(out: Path, rerun: bool) -> list[str]:
        model = out / "model"
        if not model.exists():  # a previous export of the same checkpoint, and a file of the user's in it
            model.mkdir(parents=True)
            (model / "config.json").write_text("{}")
            (model / "NOTES.md").write_text("the user's notes\n")
        return simdist_command("export", "--ckpt", str(ckpt), "--out", str(model), "--overwrite")

    def compare(ref: Path, new: Path) -> list[str]:
        from safetensors.torch import load_file

        diffs = compare_json_files(ref, new, ["model/config.json"])
        for name in ("model/README.md", "model/NOTES.md"):
            if (ref / name).read_bytes() != (new / name).read_bytes():
                diffs.append(f"{name} differs")
        if (d := max_abs_difference(load_file(ref / "model/model.safetensors"),
                                    load_file(new / "model/model.safetensors"))) != 0.0:
            diffs.append(f"model.safetensors: weights differ by up to {d:.3g}")
        return diffs

    return Scenario(
        "simdist export --ckpt CKPT --out model --overwrite (over an earlier export holding a user's file)", command,
        compare,
        [KillPoint("loading the checkpoint", None, (1.0, 4.0)),
         KillPoint("writing the new folder beside the old", exists(".model.tmp-*"), (0.0, 0.02))],
        plant=lambda out: plant_files(out, [f".model.tmp-{PLANTED}/"]))
