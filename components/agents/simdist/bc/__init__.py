"""SimDist+BC (``simdist_bc``): SimDist's dynamics finetuning plus behaviour cloning of the base policy head on
demonstrations; it plans like SimDist.

``DemoBCModule`` (its LightningModule, :mod:`.training`) loads on first access, so registering the agent does not
import Lightning.
"""

from simdist.components.agents.simdist.bc.configuration import BC_CONFIG_NAME, SimDistBCConfig
from simdist.components.agents.simdist.bc.modeling import SimDistBCAgent
from simdist.lazy import lazy_getattr

__all__ = ["BC_CONFIG_NAME", "DemoBCModule", "SimDistBCAgent", "SimDistBCConfig"]

__getattr__ = lazy_getattr(__name__, {"DemoBCModule": "training"}, globals())
