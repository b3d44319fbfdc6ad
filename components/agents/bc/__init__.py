"""The single-step behaviour-cloning agent (``bc``): SimDist's encoder with an MLP policy head.

Its policy (:class:`BCPolicy`, :class:`BCConfig`) is the body the latent-space agents share, so it lives in
``latent/``. ``BCModule`` (its LightningModule, :mod:`.training`) loads on first access, so registering the agent
does not import Lightning.
"""

from simdist.components.agents.bc.modeling import BCAgent
from simdist.components.agents.latent import BCConfig, BCPolicy
from simdist.lazy import lazy_getattr

__all__ = ["BCAgent", "BCConfig", "BCModule", "BCPolicy"]

__getattr__ = lazy_getattr(__name__, {"BCModule": "training"}, globals())
