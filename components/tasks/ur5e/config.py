"""The UR5e env's settings and constants (action scales, success tolerances, reward weights, reset kinds)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdist.components.tasks.ur5e import robot as R
from simdist.components.tasks.ur5e.grids import get_grid

#: 10 Hz action scales (m, m, m, rad, rad, rad): OmniReset's real-robot scale, z relaxed to 5 mm
ACTION_SCALE = np.array([0.01, 0.01, 0.005, 0.02, 0.02, 0.2])
SUCCESS_POS_TOL = 0.0025
SUCCESS_TILT_TOL = 0.025
SUCCESS_HOLD = 5
ABNORMAL_SPEED = 2.0 * R.VELOCITY_LIMIT
#: OmniReset reward weights
REWARD_WEIGHTS = {"reach": 0.1, "align": 0.1, "success": 1.0, "action": -1e-4, "action_rate": -1e-3,
                  "joint_velocity": -1e-2, "abnormal": -100.0}
#: training reset kinds and their default mixture (OmniReset's four, 25 % each); evaluation uses "free"
RESET_KINDS = ("free", "grasped", "near_receptacle", "inserted")
#: the arm's start: TCP above the workspace pointing down (training adds jitter)
HOME_TCP = (0.45, 0.0, 0.22)
WORKSPACE_LOW = np.array([0.15, -0.5, 0.0])
WORKSPACE_HIGH = np.array([0.8, 0.55, 0.45])


@dataclass(frozen=True)
class ArmEnvConfig:
    """Env settings. ``grid``: starts on that grid, its 20-cell lattice served in order after each seeded
    :meth:`UR5eEnv.reset` (``lattice``; else uniform over the grid); None: training starts with the diverse
    resets, mixed by ``reset_mix`` (probabilities of :data:`RESET_KINDS`). ``contacts``: the contact recipe
    (:data:`~.robot.CONTACT_RECIPES`: ``noslip``, ``fast``, ``fast-stiff``)."""

    control_hz: int = 5
    episode_seconds: float = 45.0
    grid: str | None = None
    lattice: bool = True
    reset_mix: tuple[float, float, float, float] = (0.25, 0.25, 0.25, 0.25)
    randomize: bool = True
    cameras: tuple[str, ...] = ()
    image_size: int = 64
    nthread: int = 2
    contacts: str = "noslip"

    def __post_init__(self) -> None:
        R.contact_recipe(self.contacts)
        if self.control_hz not in (5, 10):
            raise ValueError(f"control_hz must be 5 or 10, got {self.control_hz}")
        if self.episode_seconds <= 0:
            raise ValueError(f"episode_seconds must be positive, got {self.episode_seconds}")
        if self.grid is not None:
            get_grid(self.grid)
        mix = np.asarray(self.reset_mix, float)
        if mix.shape != (4,) or (mix < 0).any() or mix.sum() <= 0:
            raise ValueError(f"reset_mix must be 4 non-negative weights for {RESET_KINDS}, got {self.reset_mix}")

    @property
    def substeps(self) -> int:
        return int(round(1.0 / (self.control_hz * R.PHYSICS_DT)))

    @property
    def action_scale(self) -> np.ndarray:
        return ACTION_SCALE * (10 / self.control_hz)

    @property
    def max_steps(self) -> int:
        return int(round(self.episode_seconds * self.control_hz))
