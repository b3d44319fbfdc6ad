"""``toy-reach`` reality profiles: the floor's tilt, the puck's mass and friction, and the actuators' latency and gain.

Built-ins live in ``profiles/*.yaml`` (``sim``: the training simulator; ``real``: the proxy-real puck;
``lag``: a delayed, stronger actuator);
any other YAML loads by path and is checked against :data:`PROFILE_SCHEMA` (see ``docs/profiles.md``).
A key left at null keeps the simulator's per-episode randomisation of that quantity.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simdist.profiles import ProfileKey, ProfileSchema, builtin_names, load_profile_data

PROFILE_DIR = Path(__file__).with_name("profiles")


@dataclass
class ToyProfile:
    """One toy-reach setting (defaults: the training simulator)."""

    name: str = "custom"
    description: str = ""
    tilt: float = 0.0  # rad, floor tilt along +x (a constant drift m g sin(tilt))
    mass_scale: float | None = None  # x nominal mass; None: randomised per episode
    friction: float | None = None  # sliding friction coefficient; None: randomised per episode
    latency: int = 0  # control steps between an action and its effect (the simulator has none)
    gain: float = 1.0  # actuator force per unit action over the nominal 2 N

    def __post_init__(self) -> None:
        PROFILE_SCHEMA.validate(dataclasses.asdict(self), f"profile {self.name!r}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


PROFILE_SCHEMA = ProfileSchema.from_dataclass(ToyProfile, [
    ProfileKey("tilt", "float", doc="floor tilt along +x; the puck drifts with m g sin(tilt)", unit="rad",
               range="[-0.5, 0.5]"),
    ProfileKey("mass_scale", "float", doc="puck mass over the nominal 1 kg (null: randomised in U(0.8, 1.25))",
               range="(0, 10]", nullable=True),
    ProfileKey("friction", "float", doc="sliding friction coefficient, as joint friction mu m g (null: "
               "randomised in U(0.02, 0.08))", range="[0, 1]", nullable=True),
    ProfileKey("latency", "int", doc="actuation delay: the action chosen at step t acts during step t + latency "
               "(zero force until the first one arrives)", unit="control steps (0.1 s)", range="[0, 10]"),
    ProfileKey("gain", "float", doc="actuator gain over the nominal 2 N per unit action", range="(0, 5]"),
])


def builtin_profiles() -> list[str]:
    """Names of the profiles shipped in ``profiles/``."""
    return builtin_names(PROFILE_DIR)


def load_profile(profile: str | Path | dict | ToyProfile) -> ToyProfile:
    """A profile from a built-in name (``sim``, ``real``), a YAML path, a dict, or a profile (as is)."""
    if isinstance(profile, ToyProfile):
        return profile
    return ToyProfile(**load_profile_data(profile, PROFILE_SCHEMA, PROFILE_DIR))
