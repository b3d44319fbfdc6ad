"""Reality profiles of Gymnasium MuJoCo environments (the ``gym:ID`` tasks).

The physics keys rescale the env's ``MjModel`` from its nominal values at every reset: body masses (all bodies
with ``mass_scale``, named ones with ``body_mass_scale``; inertias scale with the mass), sliding friction of every
geom (``friction_scale``) and the force of every actuator (``actuator_gain``: its gain and bias parameters, so
motors and position servos both scale). ``latency`` delays actions by whole control steps (a wrapper: zero
action until the first one arrives) and ``obs_noise`` adds Gaussian noise to every observation. Built-ins live in
``profiles/*.yaml`` (``sim``: the env as Gymnasium ships it; ``lag``: delayed actions); any other YAML loads by
path, checked against :data:`PROFILE_SCHEMA` as every task's profiles are (``docs/profiles.md``). The physics keys
need a MuJoCo env (one whose ``unwrapped`` has ``model``); other envs take ``latency`` and ``obs_noise`` only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simdist.profiles import ProfileKey, ProfileSchema

PROFILE_DIR = Path(__file__).with_name("profiles")

BODY_SCHEMA = ProfileSchema((
    ProfileKey("body", "str", doc="a body of the env's MjModel, by name"),
    ProfileKey("scale", "float", doc="its mass (and inertia) over the nominal one", range="(0, 100]"),
), nested=True)


@dataclass
class GymProfile:
    """One setting of a Gymnasium env (defaults: the env as shipped)."""

    name: str = "custom"
    description: str = ""
    mass_scale: float = 1.0
    body_mass_scale: list[dict[str, Any]] = field(default_factory=list)
    friction_scale: float = 1.0
    actuator_gain: float = 1.0
    latency: int = 0
    obs_noise: float = 0.0

    def __post_init__(self) -> None:
        PROFILE_SCHEMA.validate(dataclasses.asdict(self), f"profile {self.name!r}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def changes_physics(self) -> bool:
        """Whether a physics key differs from the shipped model (these need a MuJoCo env)."""
        return (self.mass_scale != 1.0 or bool(self.body_mass_scale) or self.friction_scale != 1.0
                or self.actuator_gain != 1.0)


PROFILE_SCHEMA = ProfileSchema.from_dataclass(GymProfile, [
    ProfileKey("mass_scale", "float", doc="every body's mass and inertia over the env's nominal ones",
               range="(0, 100]"),
    ProfileKey("body_mass_scale", "list[mapping]", doc="per-body mass scales, applied after mass_scale",
               schema=BODY_SCHEMA),
    ProfileKey("friction_scale", "float", doc="every geom's sliding friction over the nominal one",
               range="[0, 100]"),
    ProfileKey("actuator_gain", "float", doc="every actuator's force per unit control over the nominal one "
               "(gain and bias parameters scaled)", range="(0, 100]"),
    ProfileKey("latency", "int", doc="actuation delay: the action chosen at step t acts during step t + latency "
               "(zero action until the first one arrives)", unit="control steps", range="[0, 50]"),
    ProfileKey("obs_noise", "float", doc="standard deviation of Gaussian noise added to every observation",
               unit="observation units", range="[0, 100]"),
])
