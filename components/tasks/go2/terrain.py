"""Height-field terrains: a tile grid for training/data collection and straight courses.

A :class:`Terrain` is a height array ``heights[iy, ix]`` (metres) on a regular grid with
spacing ``resolution`` whose sample ``[0, 0]`` sits at world ``origin``. MuJoCo receives
the same samples as an ``hfield`` geom, so :meth:`Terrain.height_at` (bilinear on the
array, no ray casting) matches the physical ground up to MuJoCo's two-triangle cell split.
Extra box geoms (e.g. foam blocks) are listed in ``boxes`` and included in
``height_at``. Surface ``patches`` (a strip of ice, a carpet) are regions of an hfield ground
with their own contact parameters: each is a small hfield of the same samples, so flush with
the surface, filling a pocket ``PATCH_DEPTH`` deep cut into the ground under it; feet on a
patch touch only the patch, and ``height_at`` (the surface) does not change.

Tile grid: rows are difficulty levels (row ``i`` of ``R`` has difficulty in
``[i/R, (i+1)/R)``), columns are terrain types in the official proportions
(pyramid stairs 0.2, inverted stairs 0.2, boxes 0.2, random rough 0.2, pyramid slope 0.1,
inverted slope 0.1). Difficulty ``d`` maps to the official ranges: slope 0.4 d,
rough noise 0.01 + 0.05 d m, boxes 0.025 + 0.075 d m, stair step 0.05 + 0.18 d m.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import mujoco
import numpy as np

from simdist.components.tasks.go2.robot import WORLD_CONAFFINITY, WORLD_CONTYPE

TERRAIN_TYPES: tuple[str, ...] = (
    "flat",
    "pyramid_slope",
    "inverted_pyramid_slope",
    "random_rough",
    "boxes",
    "pyramid_stairs",
    "inverted_pyramid_stairs",
)
#: Official sub-terrain proportions (IsaacLab ROUGH_TERRAINS_CFG with the Go2 tweaks).
OFFICIAL_PROPORTIONS: dict[str, float] = {
    "pyramid_stairs": 0.2,
    "inverted_pyramid_stairs": 0.2,
    "boxes": 0.2,
    "random_rough": 0.2,
    "pyramid_slope": 0.1,
    "inverted_pyramid_slope": 0.1,
}


@dataclass
class Box:
    """An axis-aligned box geom on the ground (e.g. a foam block) with its own contact."""

    center: tuple[float, float, float]
    half_size: tuple[float, float, float]
    name: str = "box"
    friction: float = 0.8
    solref: tuple[float, float] = (0.02, 1.0)
    solimp: tuple[float, float, float] = (0.9, 0.95, 0.001)

    @property
    def top(self) -> float:
        return self.center[2] + self.half_size[2]


#: depth (m) of the pocket cut into the ground under a surface patch (which the patch's hfield fills)
PATCH_DEPTH = 0.1


@dataclass
class Patch:
    """A region ``x`` by ``y`` (world metres) of the ground with its own contact; bounds snap to the grid."""

    x: tuple[float, float]
    y: tuple[float, float]
    friction: float = 0.8
    solref: tuple[float, float] | None = None
    solimp: tuple[float, float, float] | None = None


@dataclass
class Terrain:
    """Height samples plus metadata; see the module docstring for conventions."""

    heights: np.ndarray  # (ny, nx) float32 metres
    resolution: float
    origin: tuple[float, float]  # world (x, y) of heights[0, 0]
    tile_size: float = 0.0
    num_rows: int = 0
    num_cols: int = 0
    col_types: tuple[str, ...] = ()
    boxes: list[Box] = field(default_factory=list)
    patches: list[Patch] = field(default_factory=list)
    plane: bool = False  # flat plane geom instead of an hfield
    friction: float = 1.0
    priority: int = 0
    solref: tuple[float, float] | None = None
    solimp: tuple[float, float, float] | None = None

    # -- geometry -------------------------------------------------------------------
    def height_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Ground height at world points (any matching shapes); bilinear, edge-clamped."""
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if self.plane:
            h = np.zeros(np.broadcast_shapes(x.shape, y.shape), dtype=np.float32)
        else:
            ny, nx = self.heights.shape
            # float64 grid coordinates; NaN (diverged bodies) maps to the origin cell. The cell index is
            # clamped to [0, n-2] so the +1 neighbours exist (float32 rounding put the edge exactly on n-1).
            fx = np.clip(np.nan_to_num((x - self.origin[0]) / self.resolution, nan=0.0), 0.0, nx - 1.0)
            fy = np.clip(np.nan_to_num((y - self.origin[1]) / self.resolution, nan=0.0), 0.0, ny - 1.0)
            ix = np.minimum(np.floor(fx).astype(np.int64), nx - 2)
            iy = np.minimum(np.floor(fy).astype(np.int64), ny - 2)
            tx = (fx - ix).astype(np.float32)
            ty = (fy - iy).astype(np.float32)
            flat = self.heights.ravel()
            i00 = iy * nx + ix
            h00 = flat[i00]
            h01 = flat[i00 + 1]
            h10 = flat[i00 + nx]
            h11 = flat[i00 + nx + 1]
            h = (h00 + (h01 - h00) * tx) * (1.0 - ty) + (h10 + (h11 - h10) * tx) * ty
        for b in self.boxes:
            inside = (np.abs(x - b.center[0]) <= b.half_size[0]) & (np.abs(y - b.center[1]) <= b.half_size[1])
            h = np.where(inside, np.maximum(h, b.top), h)
        return h

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """(xmin, xmax, ymin, ymax) of the height samples."""
        ny, nx = self.heights.shape
        return (
            self.origin[0],
            self.origin[0] + (nx - 1) * self.resolution,
            self.origin[1],
            self.origin[1] + (ny - 1) * self.resolution,
        )

    def tile_center(self, row: np.ndarray, col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World (x, y) of tile centres; rows run along x, columns along y."""
        border = self._border()
        x = self.origin[0] + border + (np.asarray(row) + 0.5) * self.tile_size
        y = self.origin[1] + border + (np.asarray(col) + 0.5) * self.tile_size
        return x, y

    def _border(self) -> float:
        if self.num_rows == 0:
            return 0.0
        xmin, xmax, _, _ = self.extent
        return 0.5 * ((xmax - xmin) - self.num_rows * self.tile_size)

    # -- MuJoCo ---------------------------------------------------------------------
    def patch_cells(self, patch: Patch) -> tuple[int, int, int, int]:
        """Grid indices (ix0, ix1, iy0, iy1) of a patch's corner samples (its bounds snapped to the grid)."""
        ny, nx = self.heights.shape
        ix0, ix1 = (int(round((v - self.origin[0]) / self.resolution)) for v in patch.x)
        iy0, iy1 = (int(round((v - self.origin[1]) / self.resolution)) for v in patch.y)
        if self.plane or not (0 <= ix0 and ix0 + 2 <= ix1 <= nx - 1 and 0 <= iy0 and iy0 + 2 <= iy1 <= ny - 1):
            raise ValueError(f"surface patch x={list(patch.x)}, y={list(patch.y)} must lie on the height field "
                             f"and span at least 2 cells ({2 * self.resolution:g} m) each way")
        return ix0, ix1, iy0, iy1

    def add_to_spec(self, spec: mujoco.MjSpec) -> None:
        """Add the ground (hfield or plane), the boxes and the surface patches to ``spec``'s world body."""
        wb = spec.worldbody
        cells = [self.patch_cells(p) for p in self.patches]
        if self.plane:
            g = wb.add_geom(name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
        else:
            heights = self.heights
            if cells:  # pockets under the patches' interior samples; the patches fill them flush
                heights = heights.copy()
                for ix0, ix1, iy0, iy1 in cells:
                    heights[iy0 + 1:iy1, ix0 + 1:ix1] -= PATCH_DEPTH
            g = self._add_hfield(spec, "ground", "terrain", heights, self.origin, base=0.5)
        self._contact(g, self.friction, self.priority, self.solref, self.solimp)
        for b in self.boxes:
            bg = wb.add_geom(name=b.name, type=mujoco.mjtGeom.mjGEOM_BOX, size=list(b.half_size),
                             pos=list(b.center))
            self._contact(bg, b.friction, 2, b.solref, b.solimp)
        res = self.resolution
        for i, (p, (ix0, ix1, iy0, iy1)) in enumerate(zip(self.patches, cells)):
            origin = (self.origin[0] + ix0 * res, self.origin[1] + iy0 * res)
            pg = self._add_hfield(spec, f"patch{i}", f"patch{i}", self.heights[iy0:iy1 + 1, ix0:ix1 + 1], origin,
                                  base=PATCH_DEPTH + 0.05)
            self._contact(pg, p.friction, 2, p.solref, p.solimp)

    def _add_hfield(self, spec: mujoco.MjSpec, geom: str, asset: str, heights: np.ndarray,
                    origin: tuple[float, float], base: float) -> mujoco.MjsGeom:
        """An hfield geom of ``heights[iy, ix]`` whose sample [0, 0] sits at world ``origin``."""
        ny, nx = heights.shape
        lo, hi = float(heights.min()), float(heights.max())
        span = max(hi - lo, 1e-3)
        hf = spec.add_hfield()
        hf.name = asset
        hf.nrow, hf.ncol = ny, nx
        rx = 0.5 * (nx - 1) * self.resolution
        ry = 0.5 * (ny - 1) * self.resolution
        hf.size = [rx, ry, span, base]
        hf.userdata = ((heights - lo) / span).astype(np.float32).ravel()
        g = spec.worldbody.add_geom(name=geom, type=mujoco.mjtGeom.mjGEOM_HFIELD)
        g.hfieldname = asset
        g.pos = [origin[0] + rx, origin[1] + ry, lo]
        return g

    @staticmethod
    def _contact(g: mujoco.MjsGeom, friction: float, priority: int, solref, solimp) -> None:
        g.contype, g.conaffinity = WORLD_CONTYPE, WORLD_CONAFFINITY
        g.condim = 3
        g.friction = [friction, 0.005, 0.0001]
        g.priority = priority
        if solref is not None:
            g.solref = list(solref)
        if solimp is not None:
            g.solimp = [*solimp, 0.5, 2.0]


# ---- sub-terrain generators (n x n pixels, local coordinates centred on the tile) ----


def _centred_coords(n: int, res: float) -> tuple[np.ndarray, np.ndarray]:
    c = (np.arange(n) - (n - 1) / 2.0) * res
    return np.meshgrid(c, c, indexing="ij")  # local (x, y): x along axis 0


def _slope(n: int, res: float, d: float, rng: np.random.Generator, inverted: bool) -> np.ndarray:
    x, y = _centred_coords(n, res)
    half = (n - 1) * res / 2.0
    platform = 1.0  # half width of the flat centre
    r = np.maximum(np.maximum(np.abs(x), np.abs(y)), platform)
    h = 0.4 * d * (half - r)
    return -h if inverted else h


def _rough(n: int, res: float, d: float, rng: np.random.Generator) -> np.ndarray:
    amp = 0.01 + 0.05 * d
    coarse = max(int(round(n * res / 0.2)), 2)  # 0.2 m control points, bilinear upsampling
    ctrl = rng.uniform(0.0, amp, size=(coarse + 1, coarse + 1))
    t = np.linspace(0.0, coarse, n)
    i = np.minimum(t.astype(int), coarse - 1)
    f = t - i
    rows = ctrl[i] * (1 - f)[:, None] + ctrl[i + 1] * f[:, None]
    return rows[:, i] * (1 - f)[None, :] + rows[:, i + 1] * f[None, :]


def _boxes(n: int, res: float, d: float, rng: np.random.Generator) -> np.ndarray:
    hmax = 0.025 + 0.075 * d
    cell = 0.45
    ncell = int(math.ceil(n * res / cell))
    grid = rng.uniform(-hmax, hmax, size=(ncell, ncell))
    idx = np.minimum((np.arange(n) * res / cell).astype(int), ncell - 1)
    h = grid[idx][:, idx]
    x, y = _centred_coords(n, res)
    h[(np.abs(x) < 1.0) & (np.abs(y) < 1.0)] = 0.0  # flat spawn platform
    return h


def _stairs(n: int, res: float, d: float, rng: np.random.Generator, inverted: bool) -> np.ndarray:
    step_h = 0.05 + 0.18 * d
    step_w = 0.3
    x, y = _centred_coords(n, res)
    half = (n - 1) * res / 2.0
    platform = 1.5
    r = np.maximum(np.abs(x), np.abs(y))
    k = np.floor((half - np.maximum(r, platform)) / step_w)  # steps climbed from the edge
    h = step_h * np.maximum(k, 0.0)
    return -h if inverted else h


_GENERATORS: dict[str, Callable[[int, float, float, np.random.Generator], np.ndarray]] = {
    "flat": lambda n, res, d, rng: np.zeros((n, n)),
    "pyramid_slope": lambda n, res, d, rng: _slope(n, res, d, rng, False),
    "inverted_pyramid_slope": lambda n, res, d, rng: _slope(n, res, d, rng, True),
    "random_rough": _rough,
    "boxes": _boxes,
    "pyramid_stairs": lambda n, res, d, rng: _stairs(n, res, d, rng, False),
    "inverted_pyramid_stairs": lambda n, res, d, rng: _stairs(n, res, d, rng, True),
}


def sub_terrain(kind: str, difficulty: float, size: float = 8.0, resolution: float = 0.1,
                seed: int = 0) -> np.ndarray:
    """One square tile of ``kind`` at ``difficulty`` in [0, 1], as heights (n, n)."""
    if kind not in _GENERATORS:
        raise ValueError(f"unknown terrain type {kind!r}; known: {', '.join(TERRAIN_TYPES)}")
    n = int(round(size / resolution))
    rng = np.random.default_rng(seed)
    return _GENERATORS[kind](n, resolution, float(np.clip(difficulty, 0.0, 1.0)), rng).astype(np.float32)


def columns_for(num_cols: int, proportions: dict[str, float] | None = None) -> tuple[str, ...]:
    """Assign a terrain type to each column by cumulative proportion (IsaacLab style)."""
    props = proportions or OFFICIAL_PROPORTIONS
    names = list(props)
    cum = np.cumsum([props[k] for k in names]) / sum(props.values())
    return tuple(names[int(np.searchsorted(cum, (j + 0.5) / num_cols))] for j in range(num_cols))


def make_grid(num_rows: int = 10, num_cols: int = 12, tile_size: float = 8.0, resolution: float = 0.1,
              border: float = 4.0, proportions: dict[str, float] | None = None,
              types: Sequence[str] | None = None, difficulties: Sequence[float] | None = None,
              seed: int = 0) -> Terrain:
    """Tile grid: rows (along x) are difficulty levels, columns (along y) terrain types.

    ``difficulties`` (one per column) fixes every tile of a column at that difficulty instead: a strip of one
    terrain type and difficulty along x, which a robot walking +x from row 0 stays on (Table I's grid)."""
    cols = tuple(types) if types is not None else columns_for(num_cols, proportions)
    if len(cols) != num_cols:
        raise ValueError(f"{len(cols)} column types given for {num_cols} columns")
    if difficulties is not None and len(difficulties) != num_cols:
        raise ValueError(f"{len(difficulties)} column difficulties given for {num_cols} columns")
    n = int(round(tile_size / resolution))
    nb = int(round(border / resolution))
    heights = np.zeros((num_cols * n + 2 * nb + 1, num_rows * n + 2 * nb + 1), dtype=np.float32)
    rng = np.random.default_rng(seed)
    for i in range(num_rows):
        for j, kind in enumerate(cols):
            d = (i + rng.uniform()) / num_rows if difficulties is None else float(difficulties[j])
            tile = sub_terrain(kind, d, tile_size, resolution, int(rng.integers(1 << 31)))
            # heights is indexed [iy, ix]: tile columns (y) map to axis 0, rows (x) to axis 1
            heights[nb + j * n: nb + (j + 1) * n, nb + i * n: nb + (i + 1) * n] = tile.T
    return Terrain(heights=heights, resolution=resolution, origin=(-border, -border),
                   tile_size=tile_size, num_rows=num_rows, num_cols=num_cols, col_types=cols)


def make_flat() -> Terrain:
    """An infinite plane (cheapest to simulate); ``height_at`` is 0 everywhere."""
    return Terrain(heights=np.zeros((2, 2), np.float32), resolution=1.0, origin=(0.0, 0.0), plane=True)


def make_slope_course(slope_deg: float, length: float, start: float = 0.3, run_out: float = 2.0,
                      width: float = 4.0, resolution: float = 0.05) -> Terrain:
    """Straight course along +x: flat until ``start``, an incline of ``slope_deg`` for
    ``length`` metres (horizontal), then a flat top ``run_out`` long. The robot spawns at x=0.
    """
    x0, x1 = -2.0, start + length + run_out
    xs = np.arange(x0, x1 + 1e-9, resolution)
    ys = np.arange(-width / 2, width / 2 + 1e-9, resolution)
    rise = np.tan(math.radians(slope_deg)) * np.clip(xs - start, 0.0, length)
    heights = np.broadcast_to(rise, (len(ys), len(xs))).astype(np.float32).copy()
    # low walls keep height_at sane outside the course; the robot never reaches them
    return Terrain(heights=heights, resolution=resolution, origin=(float(x0), float(ys[0])))
