"""The SimDist agent: a latent world model plus the settings of the planner that acts with it; and its variant
SimDist+BC (``simdist_bc``, :mod:`.bc`), which also clones demonstrations into the policy head."""

from simdist.components.agents.simdist import bc
from simdist.components.agents.simdist.configuration import SimDistAgentConfig
from simdist.components.agents.simdist.modeling import SimDistAgent

__all__ = ["SimDistAgent", "SimDistAgentConfig", "bc"]
