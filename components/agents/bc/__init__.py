"""The single-step behaviour-cloning agent (``bc``): SimDist's encoder with an MLP policy head.

``BCModule`` (its LightningModule, :mod:`.training`) loads on first access, so registering the agent does not
import Lightning.
"""

from simdist.components.agents.bc.configuration import BCConfig
from simdist.components.agents.bc.modeling import BCAgent
from simdist.components.agents.bc.policy import BCPolicy
from simdist.lazy import lazy_getattr

__all__ = ["BCAgent", "BCConfig", "BCModule", "BCPolicy"]

__getattr__ = lazy_getattr(__name__, {"BCModule": "training"}, globals())
