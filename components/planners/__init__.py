"""Registered planners: ``mppi``, ``mppi_naive`` and ``policy``."""

from . import base, mppi, policy
from .base import Planner, PlanResult, discounted_return
from .mppi import MPPIPlanner, NaiveMPPIPlanner
from .policy import PolicyPlanner

__all__ = [
    "MPPIPlanner", "NaiveMPPIPlanner", "PlanResult", "Planner", "PolicyPlanner", "base", "discounted_return",
    "mppi", "policy",
]
