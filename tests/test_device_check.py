"""``benchmarks/device_check.py`` (the prepared GPU check) on CPU: every measurement or its skip reason."""

from __future__ import annotations

import datetime
import importlib.util
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.usefixtures("single_thread")

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "device_check.py"


@pytest.fixture(scope="module")
def device_check() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("device_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module's annotations through sys.modules
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def positive(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def check_tick(m: dict[str, Any]) -> None:
    assert m["status"] == "measured", m
    for key in ("median_ms", "p99_ms", "ticks_per_s", "sequences_per_s", "gflops"):
        assert positive(m[key]), (key, m[key])
    assert m["p99_ms"] >= m["median_ms"] * 0.999


def test_cpu_quick_records_every_measurement(device_check, tmp_path, capsys):
    out = tmp_path / "check.json"
    assert device_check.main(["--device", "cpu", "--quick", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["complete"] is True and report["device"] == "cpu" and report["torch"]
    assert datetime.date.fromisoformat(report["date"]) and report["target_ms"] == 5.0
    ms = report["measurements"]
    assert list(ms) == list(device_check.NAMES)
    go2 = ms["go2-eager"]
    check_tick(go2)
    assert go2["setting"].startswith("450+22x8 h25") and isinstance(go2["meets_target_p99"], bool)
    check_tick(ms["ur5e-peg-eager"])
    assert ms["ur5e-peg-eager"]["setting"].startswith("256+12x3 h5")
    assert ms["go2-reduce-overhead"]["status"] == "skipped" and "CUDA" in ms["go2-reduce-overhead"]["reason"]
    assert ms["go2-compile-default"]["status"] == "skipped" and "--quick" in ms["go2-compile-default"]["reason"]
    train = ms["pretrain-b512"]
    assert train["status"] == "measured" and train["setting"] == "pretrain go2 b512 windows"
    assert positive(train["samples_per_s"]) and positive(train["median_ms"])
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically, no temporary left
    table = capsys.readouterr().out
    assert "go2-eager" in table and "samples/s" in table


def test_cuda_unavailable_names_device_before_work(device_check, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    with pytest.raises(SystemExit) as exc:
        device_check.main(["--device", "cuda", "--out", str(tmp_path / "x.json")])
    assert exc.value.code == 2 and "--device cuda" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_cpu_compiled_variant(device_check, tmp_path):
    """The ``torch.compile`` variant --quick skips on CPU (about a minute of compiling on one thread)."""
    out = tmp_path / "check.json"
    argv = ["--device", "cpu", "--quick", "--with-compile", "--only", "go2-compile-default,go2-reduce-overhead",
            "--out", str(out)]
    assert device_check.main(argv) == 0
    ms = json.loads(out.read_text())["measurements"]
    check_tick(ms["go2-compile-default"])
    assert positive(ms["go2-compile-default"]["compile_s"])
    assert ms["go2-reduce-overhead"]["status"] == "skipped"
