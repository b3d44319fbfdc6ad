"""MPPI's presets, beside the algorithm they configure (:class:`~simdist.components.planners.mppi.MPPIPlanner`
declares them as its ``presets``; the core reads them by name through the registry:
:func:`simdist.planning.planner_preset`).

``PAPER`` holds the official MPPI settings (SIMDIST 6.1: 450 + 22 samples × 8 iterations; also the
``MPPIPlanner`` constructor defaults), ``MANIPULATION`` the paper's manipulation settings (Table III, 3
iterations, the sample count measured to fit a 5 Hz tick on 2 CPU cores), ``REALTIME`` a smaller setting
measured to keep the tick's p99 within a 50 Hz budget on a 2-core CPU (``simdist bench --sections
realtime``), used with temporal ensembling at ``REALTIME_DECAY``. Each preset is complete
:func:`~simdist.planning.build_planner` settings, as a ``planner.json`` holds them::

    planner = build_planner(world_model, planner_preset("realtime"))
"""

from __future__ import annotations

from typing import Any

# Measured on the 2-core dev machine (1 thread, shared with other jobs): 16 + 2 sequences in one
# iteration cost ≈ 15 ms CPU per tick (encoder 1 ms, policy head 2.3 ms, one imagine ≈ 8 ms); each
# further iteration or 16 samples adds ≈ 8 ms, which no longer fits a 20 ms p99 under load.
REALTIME_SAMPLES, REALTIME_POLICY, REALTIME_ITERATIONS, REALTIME_ELITES = 16, 2, 1, 4

#: The official MPPI settings (SIMDIST 6.1); these are also the ``MPPIPlanner`` constructor defaults.
PAPER: dict[str, Any] = dict(
    num_samples=450, mixture_coef=0.05, iterations=8, num_elites=64, temperature=0.25, init_std=2.0,
    min_std=0.05, base_act_std=0.05, momentum=0.0, discount=0.99, seed=42,
)
#: The paper's manipulation MPPI (SIMDIST 13 §1.4, Table III: initial std 1.0, minimum 0.05, base-policy std
#: 0.1, temperature 0.4, momentum 0, γ 0.99; 3 iterations). The paper's sample count is lost; 256 + 12 is the
#: size measured to keep a 5 Hz tick's p99 within 200 ms on 2 cores (``simdist bench --task <arm task>
#: --sections mppi``; the arm task's docs).
MANIPULATION: dict[str, Any] = dict(
    PAPER, num_samples=256, mixture_coef=0.05, iterations=3, num_elites=64, temperature=0.4, init_std=1.0,
    min_std=0.05, base_act_std=0.1,
)
#: A real-time setting for a 50 Hz loop on a 2-core CPU (its size chosen with ``simdist bench``; see above).
#: One iteration cannot narrow a wide first draw, so it samples near the base policy's chunk (measured on the
#: first task's flat course in docs/speed.md: the paper's shift warm start with std 2.0 fell, the policy prior
#: with std 0.1 completed every trial).
#: Its tick runs on the faster of one torch thread and the caller's count, timed over the first ticks
#: (``tick_threads="auto"``): on the 2-core machine one thread met the 20 ms p99 where two did not.
REALTIME: dict[str, Any] = dict(PAPER, num_samples=REALTIME_SAMPLES, num_policy_samples=REALTIME_POLICY,
                                iterations=REALTIME_ITERATIONS, num_elites=REALTIME_ELITES, init_std=0.1,
                                warm_start="policy", tick_threads="auto")

#: The temporal-ensemble decay ``REALTIME`` is used with (the demo's default and the zoo's ``planner.json``):
#: chosen among 0.7-0.9 on randomised walks in nominal simulation (``python results/<task>/run.py
#: temporal-ensemble``; the numbers are in the task's docs).
REALTIME_DECAY = 0.8

#: Complete ``build_planner`` settings per preset name (read them through :func:`simdist.planning.planner_preset`).
PLANNER_PRESETS: dict[str, dict[str, Any]] = {
    "paper": {"planner": "mppi", **PAPER, "temporal_ensemble": None},
    "manipulation": {"planner": "mppi", **MANIPULATION, "temporal_ensemble": None},
    "realtime": {"planner": "mppi", **REALTIME, "temporal_ensemble": REALTIME_DECAY},
}


def scaled_settings(num_samples: int, iterations: int, *, init_std: float | None = None,
                    warm_start: str | None = None, base: dict[str, Any] | None = None,
                    **overrides: Any) -> dict[str, Any]:
    """The official settings (or ``base``'s, e.g. ``MANIPULATION``) at another budget: the policy mixture and
    elite count scale with the sample count (5 % policy samples, at least 2; elites a quarter of the
    samples, 4 to 64), so small budgets keep the base-policy samples that ``int(num_samples *
    mixture_coef)`` would round away.
    ``init_std`` and ``warm_start`` replace the official values unless None (as command-line options pass
    them); ``overrides`` replace any setting.
    ``scaled_settings(16, 1, init_std=0.1, warm_start="policy", tick_threads="auto") ==
    REALTIME``; ``scaled_settings(450, 8)`` is
    the paper's setting."""
    base = {k: v for k, v in (base or PAPER).items() if k not in ("planner", "temporal_ensemble")}
    policy = max(REALTIME_POLICY, int(num_samples * base["mixture_coef"]))
    elites = min(base["num_elites"], max(REALTIME_ELITES, num_samples // 4))
    settings = dict(base, num_samples=int(num_samples), num_policy_samples=policy, iterations=int(iterations),
                    num_elites=elites)
    if init_std is not None:
        settings["init_std"] = init_std
    if warm_start is not None:
        settings["warm_start"] = warm_start
    settings.update(overrides)
    return settings

