"""Built-in agents, each in one folder; importing this package registers them as kind ``agent``."""

from simdist.components.agents import bc as _bc  # noqa: F401
from simdist.components.agents import diffusion_policy as _diffusion_policy  # noqa: F401
from simdist.components.agents import iql as _iql  # noqa: F401
from simdist.components.agents import rlpd as _rlpd  # noqa: F401
from simdist.components.agents import sgft as _sgft  # noqa: F401
from simdist.components.agents import simdist as _simdist  # noqa: F401
from simdist.components.agents import simdist_bc as _simdist_bc  # noqa: F401
