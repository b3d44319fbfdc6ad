"""UR5e reality profiles: physics the training simulator neither has nor randomises (MANIPULATION.md 4).

A profile's defaults are the training simulator: keys left at null keep its per-episode randomisation
(object mass and friction, receptacle friction, controller gains); the others are fixed there (clearance
0.5 mm, no latency, no joint friction, a rigid fixture, exact perception). Built-ins live in
``profiles/*.yaml``: ``peg-real`` and ``table-leg-real`` are the default proxy-real settings of the two
tasks; any other YAML loads by path and is checked against the task's schema (``simdist tasks
--profile-keys ur5e-peg``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simdist.profiles import ProfileKey, ProfileSchema

PROFILE_DIR = Path(__file__).with_name("profiles")


@dataclass
class ArmProfile:
    """Physics of one UR5e cell (defaults: the training simulator)."""

    name: str = "sim"
    description: str = ""
    object_mass: float | None = None
    object_friction: float | None = None
    pad_friction: float = 1.2
    receptacle_friction: float | None = None
    gain_scale: float | None = None
    latency_ms: float = 0.0
    joint_friction: float = 0.0
    armature_scale: float = 1.0
    fixture_stiffness: float | None = None
    perception_bias: list[float] = field(default_factory=lambda: [0.0, 0.0])
    perception_noise: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def latency_substeps(self) -> int:
        """The actuation delay in 2 ms physics steps."""
        return int(round(self.latency_ms / 2.0))


@dataclass
class PegProfile(ArmProfile):
    """``ur5e-peg``: adds the clearance per side."""

    clearance: float = 0.0005


@dataclass
class LegProfile(ArmProfile):
    """``ur5e-table-leg``: adds the thread's friction and pitch error."""

    thread_friction: float = 0.05
    pitch_error: float = 0.0
    radial_clearance: float = 0.0005


_COMMON = [
    ProfileKey("object_mass", "float", doc="the manipulated object's mass (null: randomised in U(0.02, 0.06))",
               unit="kg", range="[0.005, 1]", nullable=True),
    ProfileKey("object_friction", "float", doc="the object's sliding friction (null: randomised in U(1.0, 2.0))",
               unit="-", range="[0.05, 3]", nullable=True),
    ProfileKey("pad_friction", "float", doc="the finger pads' sliding friction (in the noslip contact recipe's "
               "terms: --contacts fast and fast-stiff scale it by 5/3)", unit="-", range="[0.05, 3]"),
    ProfileKey("receptacle_friction", "float", doc="the hole's / tabletop's sliding friction (null: randomised "
               "in U(0.2, 0.6))", unit="-", range="[0.05, 3]", nullable=True),
    ProfileKey("gain_scale", "float", doc="the Cartesian controller's stiffness over the nominal (null: "
               "randomised in U(0.8, 1.2)); damping follows sqrt(gain)", unit="-", range="[0.1, 5]", nullable=True),
    ProfileKey("latency_ms", "float", doc="actuation delay of each new Cartesian target", unit="ms",
               range="[0, 200]"),
    ProfileKey("joint_friction", "float", doc="unmodelled dry friction on every arm joint", unit="N m",
               range="[0, 20]"),
    ProfileKey("armature_scale", "float", doc="arm joint armature over Menagerie's 0.1 kg m^2", unit="-",
               range="[0.1, 10]"),
    ProfileKey("fixture_stiffness", "float", doc="the receptacle sits on xy springs of this stiffness, +-10 mm "
               "(null: rigid)", unit="N/m", range="[50, 1e6]", nullable=True),
    ProfileKey("perception_bias", "list[float]", doc="constant xy error of the perceived receptacle pose",
               unit="m", range="[-0.02, 0.02]", length=2),
    ProfileKey("perception_noise", "float", doc="i.i.d. Gaussian noise on perceived object and receptacle "
               "positions, per step", unit="m", range="[0, 0.02]"),
]

PEG_SCHEMA = ProfileSchema.from_dataclass(PegProfile, [
    *_COMMON,
    ProfileKey("clearance", "float", doc="peg-hole clearance per side (the simulator's is 0.5 mm)", unit="m",
               range="[0.00005, 0.003]"),
])
LEG_SCHEMA = ProfileSchema.from_dataclass(LegProfile, [
    *_COMMON,
    ProfileKey("thread_friction", "float", doc="dry friction of the thread about the leg axis", unit="N m",
               range="[0, 5]"),
    ProfileKey("pitch_error", "float", doc="thread pitch error (the leg advances pitch + error per turn)",
               unit="m", range="[-0.002, 0.002]"),
    ProfileKey("radial_clearance", "float", doc="clearance around the stud in the hole's pocket", unit="m",
               range="[0.00005, 0.003]"),
])
