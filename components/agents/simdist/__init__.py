"""The SimDist agent: a latent world model plus the settings of the planner that acts with it."""

from simdist.components.agents.simdist.configuration import SimDistAgentConfig
from simdist.components.agents.simdist.modeling import SimDistAgent

__all__ = ["SimDistAgent", "SimDistAgentConfig"]
