"""Built-in agents, each in one folder; importing this package registers them as kind ``agent``."""

from simdist.components.agents import bc as _bc  # noqa: F401
from simdist.components.agents import simdist as _simdist  # noqa: F401
