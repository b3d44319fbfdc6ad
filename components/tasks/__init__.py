"""Built-in tasks, one folder each; importing this package imports every folder, which registers its tasks (kind
``task``) and world-model presets without importing MuJoCo. Their envs (kind ``env``) register from :mod:`.envs`.
A new built-in task is a new folder here: nothing in this file names one."""

import importlib
import pkgutil

__all__ = sorted(info.name for info in pkgutil.iter_modules(__path__) if info.ispkg)
for _name in __all__:
    importlib.import_module(f"{__name__}.{_name}")
