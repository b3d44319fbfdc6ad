"""Registered planners: ``mppi``, ``mppi_naive`` and ``policy``, with MPPI's settings beside it: ``MPPIConfig``
(the schema of a ``planner.json``) in :mod:`.mppi` and the presets (``paper``, ``manipulation``, ``realtime``) in
:mod:`.presets`.

The contract they implement (``Planner``, ``PlanResult``, ``discounted_return``, ``build_planner``, ...) is the
core's :mod:`simdist.planning.base`.
"""

from . import mppi, policy
from .mppi import MPPIPlanner, NaiveMPPIPlanner
from .policy import PolicyPlanner

__all__ = ["MPPIPlanner", "NaiveMPPIPlanner", "PolicyPlanner", "mppi", "policy"]
