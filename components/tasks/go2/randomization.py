"""Domain-randomisation parameters of SIMDIST 4.2, sampled per env.

Startup (drawn at construction and on ``reset(seed=...)``): foot friction U(0.2, 1.2)
(static = dynamic), restitution U(0, 0.3), base mass +U(-1, 3) kg.
Reset (drawn at every env reset): Kp, Kd x U(0.9, 1.1) per joint, joint friction
+U(0, 0.05) N m per joint, initial joints x U(0.95, 1.05), base xy +-0.5 m, yaw +-pi.
With ``enabled=False`` every parameter takes its nominal value (friction 0.8,
restitution 0.05, as the official sim-deployment overrides).

MuJoCo has no restitution coefficient: it is mapped to the damping ratio of the foot
contact's ``solref`` through the damped-oscillator relation
e = exp(-zeta pi / sqrt(1 - zeta^2)), i.e. zeta = -ln e / sqrt(pi^2 + ln^2 e) (e = 0 -> 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FRICTION_RANGE = (0.2, 1.2)
RESTITUTION_RANGE = (0.0, 0.3)
MASS_DELTA_RANGE = (-1.0, 3.0)
GAIN_SCALE_RANGE = (0.9, 1.1)
JOINT_FRICTION_RANGE = (0.0, 0.05)
JOINT_INIT_SCALE = (0.95, 1.05)
POSE_XY = 0.5
NOMINAL_FRICTION = 0.8
NOMINAL_RESTITUTION = 0.05


def restitution_to_dampratio(e: np.ndarray) -> np.ndarray:
    """Damping ratio of a linear contact whose bounce has restitution ``e``."""
    e = np.clip(np.asarray(e, dtype=np.float64), 1e-6, 0.999)
    ln = np.log(e)
    return -ln / np.sqrt(np.pi**2 + ln**2)


def to_unit(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Map [lo, hi] to [-1, 1] (the privileged observation's convention)."""
    return 2.0 * (np.asarray(x) - lo) / (hi - lo) - 1.0


@dataclass
class DomainParams:
    """Per-env parameters (B leading dimension)."""

    friction: np.ndarray  # (B,)
    restitution: np.ndarray  # (B,)
    mass_delta: np.ndarray  # (B,)
    kp_scale: np.ndarray  # (B, 12)
    kd_scale: np.ndarray  # (B, 12)
    joint_friction: np.ndarray  # (B, 12)

    @classmethod
    def nominal(cls, n: int) -> DomainParams:
        return cls(np.full(n, NOMINAL_FRICTION), np.full(n, NOMINAL_RESTITUTION), np.zeros(n),
                   np.ones((n, 12)), np.ones((n, 12)), np.zeros((n, 12)))

    def sample_startup(self, ids: np.ndarray, rng: np.random.Generator) -> None:
        n = len(ids)
        self.friction[ids] = rng.uniform(*FRICTION_RANGE, size=n)
        self.restitution[ids] = rng.uniform(*RESTITUTION_RANGE, size=n)
        self.mass_delta[ids] = rng.uniform(*MASS_DELTA_RANGE, size=n)

    def sample_reset(self, ids: np.ndarray, rng: np.random.Generator) -> None:
        n = len(ids)
        self.kp_scale[ids] = rng.uniform(*GAIN_SCALE_RANGE, size=(n, 12))
        self.kd_scale[ids] = rng.uniform(*GAIN_SCALE_RANGE, size=(n, 12))
        self.joint_friction[ids] = rng.uniform(*JOINT_FRICTION_RANGE, size=(n, 12))

    def privileged(self) -> np.ndarray:
        """(B, 40): mass delta, friction (static, dynamic), restitution, Kp, Kd, joint friction.

        Multipliers and joint friction are mapped from their ranges to [-1, 1].
        """
        return np.concatenate([
            self.mass_delta[:, None],
            self.friction[:, None],
            self.friction[:, None],
            self.restitution[:, None],
            to_unit(self.kp_scale, *GAIN_SCALE_RANGE),
            to_unit(self.kd_scale, *GAIN_SCALE_RANGE),
            to_unit(self.joint_friction, *JOINT_FRICTION_RANGE),
        ], axis=1)
