"""The cells of the toy map: proxy-real profiles of ``toy-reach`` that vary one or two physical quantities at a time
and a few together, in the order the runner visits them (the most informative first).

A cell names its profile's departures from the training simulator: ``L`` latency (control steps), ``G`` actuator
gain, ``M`` puck mass scale, ``F`` friction, ``T`` floor tilt (rad). Unnamed quantities keep the simulator's: no
latency, gain 1, mass and friction randomised per episode (mass U(0.8, 1.25) kg around the nominal 1, friction
U(0.02, 0.08)), a level floor. "Lower friction" is 0.01, below the simulator's whole range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: friction of the "lower" setting (the simulator randomises U(0.02, 0.08))
LOW_FRICTION = 0.01
#: floor tilt of the tilted settings, both signs (rad; the built-in ``real`` profile's magnitude)
TILT = 0.05


@dataclass(frozen=True)
class Cell:
    """One profile of the map; ``kind``: ``reference`` (the ``lag`` profile), ``one`` (one factor), ``two`` or
    ``combo`` (three or more)."""

    name: str
    kind: str
    latency: int = 0
    gain: float = 1.0
    mass_scale: float | None = None
    friction: float | None = None
    tilt: float = 0.0

    def profile(self) -> dict[str, Any]:
        """The profile's keys (docs/profiles.md), as the toy's YAML profiles write them."""
        return {"name": self.name, "description": f"toy map cell {self.name}", "latency": self.latency,
                "gain": self.gain, "mass_scale": self.mass_scale, "friction": self.friction, "tilt": self.tilt}

    def factors(self) -> dict[str, Any]:
        """The quantities that differ from the simulator's."""
        base = Cell("", "")
        return {k: getattr(self, k) for k in ("latency", "gain", "mass_scale", "friction", "tilt")
                if getattr(self, k) != getattr(base, k)}


def _cell(kind: str, latency: int = 0, gain: float = 1.0, mass: float | None = None, friction: float | None = None,
          tilt: float = 0.0, name: str | None = None) -> Cell:
    parts = []
    if latency:
        parts.append(f"L{latency}")
    if gain != 1.0:
        parts.append(f"G{gain:g}")
    if mass is not None:
        parts.append(f"M{mass:g}")
    if friction is not None:
        parts.append(f"F{friction:g}")
    if tilt:
        parts.append(f"T{tilt:+g}")
    return Cell(name or "-".join(parts) or "nominal", kind, latency, gain, mass, friction, tilt)


#: the grid, in the order the runner visits it: lag (the demo's profile, to check it reproduces), the issue's
#: user profile (another latency, a weaker actuator, a heavier puck, lower friction, the tilt the other way), the
#: one-factor cells, two factors, then more together
CELLS: tuple[Cell, ...] = (
    _cell("reference", latency=4, gain=4.0, name="lag"),
    _cell("combo", latency=2, gain=0.7, mass=2.0, friction=LOW_FRICTION, tilt=-TILT),
    _cell("one", latency=2),
    _cell("one", gain=0.5),
    _cell("one", mass=3.0),
    _cell("one", tilt=-TILT),
    _cell("one", latency=4),
    _cell("one", gain=0.7),
    _cell("one", mass=2.0),
    _cell("one", tilt=TILT),
    _cell("one", friction=LOW_FRICTION),
    _cell("one", latency=1),
    _cell("one", gain=2.0),
    _cell("one", gain=4.0),
    _cell("two", latency=2, gain=2.0),
    _cell("two", latency=2, gain=0.5),
    _cell("two", mass=3.0, tilt=-TILT),
    _cell("two", mass=2.0, friction=LOW_FRICTION),
    _cell("two", gain=0.7, mass=2.0),
    _cell("two", latency=2, mass=2.0),
    _cell("two", latency=1, tilt=-TILT),
    _cell("two", latency=4, gain=2.0),
    _cell("combo", mass=3.0, friction=LOW_FRICTION, tilt=TILT),
    _cell("combo", latency=1, gain=2.0, mass=2.0, tilt=TILT),
    _cell("combo", latency=4, gain=4.0, mass=2.0, friction=LOW_FRICTION),
    _cell("combo", latency=2, gain=0.5, mass=3.0, tilt=-TILT),
    _cell("one", name="nominal"),
)


def cell_named(name: str) -> Cell:
    """The grid's cell ``name`` (KeyError listing the names otherwise)."""
    for cell in CELLS:
        if cell.name == name:
            return cell
    raise KeyError(f"no cell {name!r}; cells: {', '.join(c.name for c in CELLS)}")
