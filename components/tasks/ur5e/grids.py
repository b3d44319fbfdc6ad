"""Initial-condition grids: Narrow (2 x 2 cm) and Wide (35 x 35 cm) over the object's start position.

Each grid has a fixed 20-cell evaluation lattice (4 x 5 cell centres, the paper's 20 trials per point):
the object's start xy and yaw and the receptacle's small jitter are a function of the cell alone, so every
evaluation of a grid sees the same 20 initial conditions. Training draws from the Wide grid enlarged by 5 cm
(see :func:`sample_training_starts`), plus the diverse resets of :mod:`.env`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: nominal receptacle (hole block / tabletop hole) position on the table, robot base frame (m)
RECEPTACLE_XY = (0.45, 0.25)
#: receptacle jitter: +-5 mm in x and y, +-3 degrees of yaw
RECEPTACLE_JITTER = (0.005, 0.005, np.deg2rad(3.0))
LATTICE_SHAPE = (4, 5)
#: the lattice's receptacle jitter comes from this fixed seed (plus the cell index), not the evaluation's
_LATTICE_SEED = 20_260_316


@dataclass(frozen=True)
class Grid:
    """A square of object start positions (centre, side in m) and a yaw range (rad, +-)."""

    name: str
    center: tuple[float, float]
    side: float
    yaw: float

    def lattice(self) -> np.ndarray:
        """(20, 6): per cell, object x, y, yaw and receptacle x, y, yaw (deterministic)."""
        nx, ny = LATTICE_SHAPE
        cx = self.center[0] + self.side * ((np.arange(nx) + 0.5) / nx - 0.5)
        cy = self.center[1] + self.side * ((np.arange(ny) + 0.5) / ny - 0.5)
        xs, ys = np.meshgrid(cx, cy, indexing="ij")
        n = nx * ny
        # yaws spread evenly over the range, in an order unrelated to position (a fixed permutation)
        yaws = self.yaw * np.linspace(-1.0, 1.0, n)[(np.arange(n) * 7) % n]
        receptacle = np.stack([receptacle_jitter(np.random.default_rng(_LATTICE_SEED + k)) for k in range(n)])
        return np.column_stack([xs.ravel(), ys.ravel(), yaws, receptacle])

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """(6,): a start drawn uniformly over the grid (object x, y, yaw; receptacle x, y, yaw)."""
        xy = np.asarray(self.center) + rng.uniform(-0.5, 0.5, 2) * self.side
        return np.concatenate([xy, [rng.uniform(-self.yaw, self.yaw)], receptacle_jitter(rng)])


def receptacle_jitter(rng: np.random.Generator, n: int | None = None) -> np.ndarray:
    """Receptacle x, y, yaw at its nominal pose plus uniform jitter ((3,) or (n, 3))."""
    j = np.asarray(RECEPTACLE_JITTER)
    size = (3,) if n is None else (n, 3)
    return np.asarray([*RECEPTACLE_XY, 0.0]) + rng.uniform(-1.0, 1.0, size) * j


GRIDS: dict[str, Grid] = {
    "narrow": Grid("narrow", center=(0.45, -0.05), side=0.02, yaw=np.deg2rad(10.0)),
    "wide": Grid("wide", center=(0.45, -0.05), side=0.35, yaw=np.deg2rad(45.0)),
}
#: training starts: the Wide grid enlarged by 5 cm on each side (clear of the receptacle)
TRAINING_MARGIN = 0.05


def get_grid(name: str) -> Grid:
    """The grid ``name`` (``narrow`` or ``wide``); a ValueError names the accepted ones."""
    try:
        return GRIDS[name]
    except KeyError:
        raise ValueError(f"--grid {name!r}: unknown grid; choose one of {', '.join(GRIDS)}") from None


def sample_training_starts(rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, 6) object x, y, yaw and receptacle x, y, yaw for training resets.

    Object xy uniform over the Wide grid enlarged by :data:`TRAINING_MARGIN` in -y and x (towards +y it stops
    at the Wide grid's edge, so an object never starts under the receptacle); yaw uniform over +-45 deg.
    """
    wide = GRIDS["wide"]
    half = wide.side / 2
    lo = np.array([wide.center[0] - half - TRAINING_MARGIN, wide.center[1] - half - TRAINING_MARGIN])
    hi = np.array([wide.center[0] + half + TRAINING_MARGIN, wide.center[1] + half])
    xy = rng.uniform(lo, hi, (n, 2))
    yaw = rng.uniform(-np.pi / 4, np.pi / 4, n)
    return np.column_stack([xy, yaw, receptacle_jitter(rng, n)])
