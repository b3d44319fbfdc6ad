"""Registered planners: ``mppi``, ``mppi_naive`` and ``policy``.

The contract they implement (``Planner``, ``PlanResult``, ``discounted_return``, ...) is the core's
:mod:`simdist.planning.base`.
"""

from . import mppi, policy
from .mppi import MPPIPlanner, NaiveMPPIPlanner
from .policy import PolicyPlanner

__all__ = ["MPPIPlanner", "NaiveMPPIPlanner", "PolicyPlanner", "mppi", "policy"]
