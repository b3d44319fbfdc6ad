"""Built-in tasks, one folder each; importing this package imports every folder, which registers its tasks (kind
``task``) and world-model presets without importing MuJoCo. Their envs (kind ``env``) register from :mod:`.envs`.
A new built-in task is a new folder here: nothing in this file names one."""

from simdist.registry import import_submodules

__all__ = import_submodules(__name__, __path__, packages_only=True)
