"""Soak tests (slow): resident memory stays flat over 10,000 real-time MPPI ticks and a 1 M-transition
generation. Each samples VmRSS over time, calls the first part warm-up and requires the rest to grow by
less than 5 % of the warm-up level. The samples are printed (``-s``) and written as JSON to
``$SIMDIST_SOAK_REPORT`` when set (docs/reliability.md quotes them).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from fault_harness import REPO, child_env, simdist_command

pytestmark = pytest.mark.slow

TICKS, EVERY = 10_000, 1_000
TRANSITIONS = 1_000_000
MAX_GROWTH = 0.05


def vm_rss_mib(pid: int | str = "self") -> float | None:
    """Resident set size of process ``pid`` in MiB (None once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def _report(name: str, data: dict) -> None:
    print(name, json.dumps(data))
    target = os.environ.get("SIMDIST_SOAK_REPORT")
    if target:
        path = Path(target)
        old = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**old, name: data}, indent=1))


def test_planner_ticks_memory_flat() -> None:
    """10,000 ticks of the real-time MPPI preset on the zoo model go2-slope (one env, fixed random inputs,
    an episode reset every 2,500 ticks); VmRSS every 1,000 ticks, the first 1,000 being warm-up."""
    import torch

    from simdist.agents import load_agent
    from simdist.components.planners.presets import REALTIME
    from simdist.planning import ObservationHistory
    from simdist.planning.settings import stated_settings

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        agent = load_agent(str(REPO / "hub" / "models" / "go2-slope")).with_settings(**stated_settings(REALTIME))
        cfg = agent.world_model.config
        history = ObservationHistory.for_model(agent.world_model, num_envs=1)
        rng = np.random.default_rng(0)
        obs = [{k: rng.normal(size=(1, *s)).astype(np.float32) for k, s in cfg.obs_spec.items()} for _ in range(32)]
        commands = rng.uniform(-1, 1, size=(32, 1, cfg.command_dim)).astype(np.float32)
        history.reset(obs[0], command=commands[0])
        rss, seconds = [vm_rss_mib()], []
        t0 = time.perf_counter()
        for t in range(1, TICKS + 1):
            action = agent.act(history)
            assert torch.isfinite(action).all()
            if t % 2_500 == 0:
                agent.reset()
                history.reset(obs[t % 32], command=commands[t % 32])
            else:
                history.push(obs[t % 32], action, command=commands[t % 32])
            if t % EVERY == 0:
                rss.append(vm_rss_mib())
                seconds.append(time.perf_counter() - t0)
    finally:
        torch.set_num_threads(threads)
    warm = rss[1]
    growth = (max(rss[1:]) - warm) / warm
    _report("planner_ticks", {"ticks": TICKS, "rss_mib_every_1000_ticks": [round(r, 1) for r in rss],
                              "seconds": [round(s, 1) for s in seconds], "growth_after_warmup": growth,
                              "ms_per_tick": 1e3 * seconds[-1] / TICKS})
    assert growth < MAX_GROWTH, f"VmRSS grew {growth:.1%} after warm-up: {rss}"


def test_generation_memory_flat(tmp_path: Path) -> None:
    """A 1 M-transition toy-reach generation (256 envs) in a child process; its VmRSS sampled every 2 s
    together with the transitions committed so far. Warm-up: until the first shard is committed."""
    out = tmp_path / "data"
    cmd = simdist_command("generate", "--task", "toy-reach", "--out", str(out), "--envs", "256",
                          "--transitions", str(TRANSITIONS), "--no-progress")
    log = tmp_path / "generate.log"
    samples: list[tuple[float, float, int]] = []  # (s, MiB, committed transitions)
    with open(log, "wb") as f:
        proc = subprocess.Popen(cmd, cwd=REPO, env=child_env(), stdout=f, stderr=subprocess.STDOUT)
        t0 = time.perf_counter()
        try:
            while proc.poll() is None:
                rss = vm_rss_mib(proc.pid)
                committed = 0
                if (out / "dataset.json").exists():
                    try:
                        committed = json.loads((out / "dataset.json").read_text())["num_steps"]
                    except (ValueError, KeyError):
                        pass
                if rss:  # None once gone, 0 right after the fork
                    samples.append((time.perf_counter() - t0, rss, committed))
                time.sleep(2.0)
                assert time.perf_counter() - t0 < 900, "generation ran past 15 minutes"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, log.read_text()[-3000:]
    info = json.loads((out / "dataset.json").read_text())
    assert info["num_steps"] >= TRANSITIONS
    after = [s for s in samples if s[2] > 0]
    assert len(after) >= 5, f"too few samples after warm-up: {samples}"
    warm = after[0][1]
    growth = (max(s[1] for s in after) - warm) / warm
    _report("generation", {"transitions": info["num_steps"], "episodes": info["num_episodes"],
                           "shards": len(info["shards"]), "wall_s": round(samples[-1][0], 1),
                           "samples_s_mib_committed": [(round(t, 1), round(r, 1), c) for t, r, c in samples],
                           "growth_after_warmup": growth})
    assert growth < MAX_GROWTH, f"VmRSS grew {growth:.1%} after the first shard: {samples}"
