"""The Diffusion Policy agent (``diffusion_policy``): the paper's DP baseline on SimDist's frozen encoder.

Importing this package registers the agent. ``DiffusionPolicyModule`` (its LightningModule, :mod:`.training`)
loads on first access, and ``diffusers`` on first use of a scheduler, so registering imports neither.
"""

from simdist.components.agents.diffusion_policy.configuration import SETTINGS, DiffusionPolicyConfig
from simdist.components.agents.diffusion_policy.modeling import DiffusionPolicyAgent
from simdist.components.agents.diffusion_policy.network import ConditionalUnet1D
from simdist.components.agents.diffusion_policy.policy import DiffusionPolicy
from simdist.lazy import lazy_getattr

__all__ = ["SETTINGS", "ConditionalUnet1D", "DiffusionPolicy", "DiffusionPolicyAgent", "DiffusionPolicyConfig",
           "DiffusionPolicyModule"]

__getattr__ = lazy_getattr(__name__, {"DiffusionPolicyModule": "training"}, globals())
