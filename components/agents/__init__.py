"""Built-in agents, one folder each; importing this package imports every folder, which registers its agents as
kind ``agent`` (``latent`` is the body the latent-space RL agents share). A new built-in agent is a new folder
here: nothing in this file names one."""

import importlib
import pkgutil

__all__ = sorted(info.name for info in pkgutil.iter_modules(__path__) if info.ispkg)
for _name in __all__:
    importlib.import_module(f"{__name__}.{_name}")
