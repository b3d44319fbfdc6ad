"""Registered planners, one module each (``simdist components`` lists them): ``mppi`` and ``mppi_naive`` with
MPPI's settings beside them (``MPPIConfig``, the schema of a ``planner.json``, in :mod:`.mppi`; the presets
``paper``, ``manipulation``, ``realtime`` in :mod:`.presets`), ``policy``, and ``cem`` (:mod:`.cem`, with
``CEMConfig``). Every module of this folder is imported, so a new planner is a new file here: nothing in this file
names one.

The contract they implement (``Planner``, ``PlanResult``, ``discounted_return``, ``build_planner``, ...) is the
core's :mod:`simdist.planning.base`.
"""

from simdist.registry import import_submodules

__all__ = import_submodules(__name__, __path__)
