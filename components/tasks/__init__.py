"""Built-in tasks, each in one folder; importing this package registers them (kind ``task``) and their
world-model presets without importing MuJoCo. Their envs (kind ``env``) register from :mod:`.envs`."""

from simdist.components.tasks import go2, toy_reach, ur5e

__all__ = ["go2", "toy_reach", "ur5e"]
