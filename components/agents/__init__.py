"""Built-in agents, one folder each; importing this package imports every folder, which registers its agents as
kind ``agent`` (``latent`` is the body the latent-space RL agents share). A new built-in agent is a new folder
here: nothing in this file names one."""

from simdist.registry import import_submodules

__all__ = import_submodules(__name__, __path__, packages_only=True)
