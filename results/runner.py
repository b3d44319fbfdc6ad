"""What the experiment runners under results/ share: the ``simdist`` command in this interpreter, running a
step with its log, once (a step whose ``stdout`` result exists is the caller's to skip), and writing a result
file atomically.

The runners that use it run as modules from the repository root (``python -m results.go2.run ...``), so they
import it as ``results.runner``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix, for writers that pick the format from it) for the block to
    write; renamed over ``path`` when the block succeeds, removed otherwise, so no reader sees half a result."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: Path, text: str) -> None:
    """``text`` into ``path``, atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: Path, obj: Any) -> None:
    """``obj`` as JSON indented by one space, with a final newline, into ``path``, atomically."""
    write_text(path, json.dumps(obj, indent=1) + "\n")


def estimate_cell(e: dict[str, Any]) -> str:
    """``mean [low, high]`` of an estimate in a result JSON (``simdist.bootstrap_ci``'s fields), three decimals."""
    return f"{e['mean']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"


def simdist_command(*args: str) -> list[str]:
    """``simdist ARGS`` of this Python's environment: the ``simdist`` next to it (the README's install), else
    ``python -m simdist.cli``."""
    exe = Path(sys.executable).with_name("simdist")
    return [str(exe), *args] if exe.is_file() else [sys.executable, "-m", "simdist.cli", *args]


def run_command(cmd: list[str], log: Path, dry: bool, stdout: Path | None = None) -> None:
    """Run ``cmd`` from the repository root with one OpenMP thread and the Hub offline, its stderr (and stdout,
    unless ``stdout`` names a result file, written atomically) appended to ``log``; exit naming the log on
    failure. ``dry``: print only."""
    print("+", " ".join(cmd), flush=True)
    if dry:
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), "HF_HUB_OFFLINE": "1"}
    with open(log, "a") as err:
        out = open(stdout.with_suffix(".tmp"), "w") if stdout is not None else err
        rc = subprocess.call(cmd, cwd=ROOT, env=env, stdout=out, stderr=err)
        if stdout is not None:
            out.close()
    if rc != 0:
        sys.exit(f"failed (rc {rc}): see {log}")
    if stdout is not None:
        os.replace(stdout.with_suffix(".tmp"), stdout)


def run_result_step(out: Path, cmd: list[str], dry: bool) -> None:
    """One step that writes the result file ``out`` (relative to the repository root): the command's stdout
    becomes the file, unless the command writes it itself (``--out``); its log goes to ``outputs/<out>.log``."""
    if not dry:
        (ROOT / out).parent.mkdir(parents=True, exist_ok=True)
    run_command(cmd, ROOT / "outputs" / out.with_suffix(".log"), dry, stdout=None if "--out" in cmd else ROOT / out)


def pretrain_and_export(configs: list[str], data: Path, out: Path, model: Path, seed: int, dry: bool,
                        placement_name: str = "placement.json") -> None:
    """``simdist fit`` with the recipe ``configs`` (``--config`` arguments) on ``data``, its logs and checkpoints in
    ``out`` (a placement file replaces the recipe's checkpoint callback; a killed fit resumes from ``last.ckpt``),
    then ``simdist export`` of the last checkpoint to ``model``."""
    ckpt = out / "checkpoints" / "last.ckpt"
    placement = out / placement_name
    if not dry:
        out.mkdir(parents=True, exist_ok=True)
        placement.write_text(json.dumps({"trainer": {
            "default_root_dir": str(out),
            "logger": {"class_path": "lightning.pytorch.loggers.CSVLogger", "init_args": {"save_dir": str(out)}},
            "callbacks": [{"class_path": "lightning.pytorch.callbacks.ModelCheckpoint",
                           "init_args": {"dirpath": str(out / "checkpoints"), "save_last": True,
                                         "every_n_train_steps": 200}}]}}))
    resume = ["--ckpt_path", str(ckpt)] if ckpt.exists() else []
    run_command(simdist_command("fit", *configs, "--config", str(placement), "--seed_everything", str(seed),
                                "--data.train", str(data), *resume), out / "fit.log", dry)
    run_command(simdist_command("export", "--ckpt", str(ckpt), "--out", str(model), "--overwrite"), out / "fit.log",
                dry)
