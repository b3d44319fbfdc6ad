"""The thread count of small planner ticks: fixed, or chosen by timing the first ticks."""

from __future__ import annotations

import time

import pytest
import torch

from simdist import WorldModel
from simdist.benchmarking.measure import random_history
from simdist.planning import build_planner, execution, planner_preset
from simdist.planning.threads import ThreadChoice, check_tick_threads


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("slow_on, expected", [(2, 1), (1, 2)])
def test_auto_keeps_the_faster_setting(slow_on: int, expected: int) -> None:
    choice = ThreadChoice("auto", calibration_ticks=8)
    ran = []
    for _ in range(14):
        n = choice.threads(2)
        ran.append(n)
        choice.run(n, 2, lambda n=n: time.sleep(0.03 if n == slow_on else 0.001))
    assert ran[:10] == [1, 2] * 5  # calibration alternates, the first tick of each warms up
    assert choice.chosen == expected and set(ran[10:]) == {expected}
    assert choice.report["ticks"] == {1: 4, 2: 4} and choice.report["p90_ms"][slow_on] > 25.0


def test_fixed_and_caller_settings() -> None:
    assert ThreadChoice(None).threads(2) == 2 and ThreadChoice(1).threads(2) == 1 and ThreadChoice(4).threads(2) == 2
    single = ThreadChoice("auto")
    assert single.threads(1) == 1 and single.run(1, 1, lambda: 7) == 7 and single.report["chosen"] == 1
    for bad in (0, -1, "fast", 1.5, True):
        with pytest.raises(ValueError, match="tick_threads"):
            check_tick_threads(bad)


@pytest.mark.skipif(not execution.thread_limits_available(), reason="no per-thread torch thread limit here")
def test_one_thread_tick_runs_on_one_thread(two_threads) -> None:
    seen = []
    ex = execution.TickExecutor(lambda a: a.sum((-1, -2)), chunk=8, tick_threads=1)
    ex.run(torch.device("cpu"), lambda: seen.append(torch.get_num_threads()), sequences=4)
    ex.run(torch.device("cpu"), lambda: seen.append(torch.get_num_threads()), sequences=40)  # not one chunk
    assert seen[0] == 1 and torch.get_num_threads() == 2
    ex.close()


@pytest.mark.skipif(not execution.thread_limits_available(), reason="no per-thread torch thread limit here")
def test_realtime_preset_calibrates_and_plans_alike(two_threads) -> None:
    torch.manual_seed(0)
    wm = WorldModel.from_preset("toy").eval()
    hist = random_history(wm, 1)
    settings = planner_preset("realtime")
    assert settings["tick_threads"] == "auto"
    auto, caller = build_planner(wm, settings), build_planner(wm, {**settings, "tick_threads": None})
    for _ in range(45):
        a, b = auto.plan(hist), caller.plan(hist)
        torch.testing.assert_close(a.action, b.action, atol=1e-5, rtol=1e-5)
    report = auto.thread_report
    assert report["chosen"] in (1, 2) and report["ticks"] == {1: 20, 2: 20} and report["caller_threads"] == 2
    assert caller.thread_report == {"tick_threads": None}
