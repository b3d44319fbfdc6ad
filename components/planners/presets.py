"""MPPI's presets, beside the algorithm they configure (:class:`~simdist.components.planners.mppi.MPPIPlanner`
declares them as its ``presets``; the core reads them by name through the registry:
:func:`simdist.planning.planner_preset`). Each is an :class:`~.mppi.MPPIConfig` (with a temporal-ensemble decay in
its :class:`~simdist.planning.settings.PlannerPreset`).

``PAPER`` holds the official MPPI settings (SIMDIST 6.1: 450 + 22 samples × 8 iterations; also the
``MPPIConfig`` defaults), ``MANIPULATION`` the paper's manipulation settings (Table III, 3
iterations, the sample count measured to fit a 5 Hz tick on 2 CPU cores), ``REALTIME`` a smaller setting
measured to keep the tick's p99 within a 50 Hz budget on a 2-core CPU (``simdist bench --sections
realtime``), used with temporal ensembling at ``REALTIME_DECAY``. ``planner_preset(name)`` gives a preset as complete
:func:`~simdist.planning.build_planner` settings, as a ``planner.json`` holds them::

    planner = build_planner(world_model, planner_preset("realtime"))
"""

from __future__ import annotations

from simdist.planning.settings import PlannerPreset

from .mppi import MPPIConfig, MPPIPlanner

# Measured on the 2-core dev machine (1 thread, shared with other jobs): 16 + 2 sequences in one
# iteration cost ≈ 15 ms CPU per tick (encoder 1 ms, policy head 2.3 ms, one imagine ≈ 8 ms); each
# further iteration or 16 samples adds ≈ 8 ms, which no longer fits a 20 ms p99 under load.
REALTIME_SAMPLES, REALTIME_ITERATIONS = 16, 1

#: The official MPPI settings (SIMDIST 6.1: 450 + 22 samples × 8 iterations): ``MPPIConfig``'s defaults.
PAPER = MPPIConfig()
#: The paper's manipulation MPPI (SIMDIST 13 §1.4, Table III: initial std 1.0, minimum 0.05, base-policy std
#: 0.1, temperature 0.4, momentum 0, γ 0.99; 3 iterations). The paper's sample count is lost; 256 + 12 is the
#: size measured to keep a 5 Hz tick's p99 within 200 ms on 2 cores (``simdist bench --task <arm task>
#: --sections mppi``; the arm task's docs).
MANIPULATION = MPPIConfig(num_samples=256, iterations=3, temperature=0.4, init_std=1.0, base_act_std=0.1)
#: A real-time setting for a 50 Hz loop on a 2-core CPU (its size chosen with ``simdist bench``; see above): the
#: paper's at that budget (:meth:`MPPIConfig.at_budget`: 16 + 2 samples, 4 elites).
#: One iteration cannot narrow a wide first draw, so it samples near the base policy's chunk (measured on the
#: first task's flat course in docs/speed.md: the paper's shift warm start with std 2.0 fell, the policy prior
#: with std 0.1 completed every trial).
#: Its tick runs on the faster of one torch thread and the caller's count, timed over the first ticks
#: (``tick_threads="auto"``): on the 2-core machine one thread met the 20 ms p99 where two did not.
REALTIME = PAPER.at_budget(REALTIME_SAMPLES, REALTIME_ITERATIONS, init_std=0.1, warm_start="policy",
                           tick_threads="auto")

#: The temporal-ensemble decay ``REALTIME`` is used with (the demo's default and the zoo's ``planner.json``):
#: chosen among 0.7-0.9 on randomised walks in nominal simulation (``python results/<task>/run.py
#: temporal-ensemble``; the numbers are in the task's docs).
REALTIME_DECAY = 0.8

#: MPPI's presets by name (read their ``build_planner`` settings through :func:`simdist.planning.planner_preset`).
PLANNER_PRESETS: dict[str, PlannerPreset] = {
    "paper": PlannerPreset(PAPER),
    "manipulation": PlannerPreset(MANIPULATION),
    "realtime": PlannerPreset(REALTIME, REALTIME_DECAY),
}

MPPIPlanner.presets = PLANNER_PRESETS  # the planner declares them (simdist.planning.planner_preset reads them by name)
