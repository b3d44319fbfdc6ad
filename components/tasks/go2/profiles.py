"""Proxy-real "reality profiles": YAML-described deviations layered over :class:`Go2Env`.

A profile fixes the course (flat, a straight slope, or foam blocks on flat ground), the
surface (friction, contact softness, and surface ``patches`` such as a strip of ice), and
robot/IO deviations (actuation latency, motor strength, payload, observation and action
noise). Built-ins live in ``profiles/*.yaml`` and load by name; any other YAML loads by path.
Every key is type- and range-checked against :data:`PROFILE_SCHEMA` through
:mod:`simdist.profiles` (``base:`` layers a profile over another); a bad or unknown key
raises :class:`ProfileError` naming the file, the key, the value and the accepted range.

The course runs along +x from the robot's spawn point (x = 0, yaw 0); the incline or
first foam block starts ``course_start`` metres ahead. :func:`forward_progress` is the
base's x displacement, clipped to [0, ``course_length``] (the website's metric).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from simdist.components.tasks.go2.robot import PHYSICS_DT
from simdist.components.tasks.go2.terrain import Box, Patch, Terrain, make_flat, make_slope_course
from simdist.profiles import ProfileError, ProfileKey, ProfileSchema, builtin_names, load_profile_data

__all__ = ["COURSES", "PROFILE_DIR", "PROFILE_SCHEMA", "ProfileError", "RealityProfile", "SurfacePatch",
           "builtin_profiles", "forward_progress", "load_profile"]

log = logging.getLogger(__name__)

PROFILE_DIR = Path(__file__).with_name("profiles")
COURSES = ("flat", "slope", "foam")
#: the course height field behind the spawn point, beyond the course end and across it (m)
COURSE_BACK, COURSE_RUN_OUT, COURSE_WIDTH = 2.0, 2.0, 4.0
#: MuJoCo clamps a contact time constant below two physics steps (refsafe), so none lower is accepted
MIN_TIMECONST = 2 * PHYSICS_DT


@dataclass
class SurfacePatch:
    """A region of the course (course coordinates, m) with its own friction and contact softness."""

    x: list[float]
    y: list[float]
    friction: float | None = None  # None: the course surface's
    solref: list[float] | None = None  # None: the course surface's
    solimp: list[float] | None = None


@dataclass
class RealityProfile:
    """One proxy-real setting; see ``profiles/*.yaml`` for commented examples and :data:`PROFILE_SCHEMA`
    (or ``docs/profiles.md``) for every key's type and accepted range."""

    name: str = "custom"
    description: str = ""
    course: str = "flat"  # flat | slope | foam
    course_length: float = 3.0  # m, progress cap
    course_start: float = 0.3  # m ahead of the spawn point where the feature starts
    slope_deg: float = 0.0
    friction: float = 0.8  # ground and foot friction (overrides randomisation)
    contact_solref: list[float] | None = None  # (timeconst, dampratio) of the course surface
    contact_solimp: list[float] | None = None  # (dmin, dmax, width)
    foam_blocks: int = 0  # compliant blocks laid end to end over the course
    foam_height: float = 0.05
    foam_width: float = 1.0
    latency_steps: int = 0  # actuation delay in control steps (0.02 s each)
    motor_strength: float = 1.0  # scales Kp, Kd and the torque limit
    velocity_limit: float | None = None  # rad/s: the official DC-motor torque-speed limit (None: a flat clip)
    payload_mass: float = 0.0  # kg added to the base
    payload_offset: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])  # base frame, m
    obs_noise: float = 0.0  # multiple of the official training-noise standard deviations
    action_noise: float = 0.0  # std of Gaussian noise added to actions (action units)
    eval_speeds: list[float] = field(default_factory=lambda: [0.1, 0.3, 0.5])  # protocol speeds (m/s)
    patches: list[SurfacePatch] = field(default_factory=list)  # regions with their own surface

    def __post_init__(self) -> None:
        self.patches = [p if isinstance(p, SurfacePatch) else SurfacePatch(**p) for p in self.patches]
        PROFILE_SCHEMA.validate(self.to_dict(), f"profile {self.name!r}")

    # -- YAML -----------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: dict[str, Any], source: str = "<dict>") -> RealityProfile:
        """A profile from a mapping (checked against :data:`PROFILE_SCHEMA`; errors name ``source``)."""
        return cls(**PROFILE_SCHEMA.validate(d, source))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_yaml(self, path: str | Path | None = None) -> str:
        text = yaml.safe_dump(self.to_dict(), sort_keys=False)
        if path is not None:
            Path(path).write_text(text)
        return text

    # -- terrain --------------------------------------------------------------------
    def terrain(self) -> Terrain:
        """The course as a :class:`Terrain`; its surfaces outrank the feet (priority 2).

        With surface patches the ground of a flat or foam course is a flat height field (the patches cut
        into it) instead of the infinite plane.
        """
        if self.course == "slope":
            t = make_slope_course(self.slope_deg, self.course_length, start=self.course_start)
        elif self.patches:
            t = make_slope_course(0.0, self.course_length, start=self.course_start)
        else:
            t = make_flat()
        t.friction, t.priority = self.friction, 2
        t.solref = tuple(self.contact_solref) if self.contact_solref and self.course != "foam" else None
        t.solimp = tuple(self.contact_solimp) if self.contact_solimp and self.course != "foam" else None
        if self.course == "foam" and self.foam_blocks > 0:
            for i, (cx, half) in enumerate(_foam_blocks(self.course, self.course_length, self.course_start,
                                                        self.foam_blocks)):
                t.boxes.append(Box(
                    center=(cx, 0.0, 0.5 * self.foam_height),
                    half_size=(half, 0.5 * self.foam_width, 0.5 * self.foam_height),
                    name=f"foam{i}", friction=self.friction,
                    solref=tuple(self.contact_solref or (0.02, 1.0)),
                    solimp=tuple(self.contact_solimp or (0.9, 0.95, 0.001)),
                ))
        for p in self.patches:
            patch = Patch(x=(p.x[0], p.x[1]), y=(p.y[0], p.y[1]),
                          friction=self.friction if p.friction is None else p.friction,
                          solref=tuple(p.solref) if p.solref is not None else t.solref,  # type: ignore[arg-type]
                          solimp=tuple(p.solimp) if p.solimp is not None else t.solimp)  # type: ignore[arg-type]
            ix0, ix1, iy0, iy1 = t.patch_cells(patch)
            snapped = (t.origin[0] + ix0 * t.resolution, t.origin[0] + ix1 * t.resolution,
                       t.origin[1] + iy0 * t.resolution, t.origin[1] + iy1 * t.resolution)
            if max(abs(a - b) for a, b in zip(snapped, (*p.x, *p.y))) > 1e-6:
                log.info("profile %s: surface patch x=%s, y=%s snapped to the %g m grid: x=[%g, %g], y=[%g, %g]",
                         self.name, p.x, p.y, t.resolution, *snapped)
            t.patches.append(patch)
        return t



def _foam_blocks(course: str, length: float, start: float, blocks: int) -> list[tuple[float, float]]:
    """(centre x, half length) of each foam block (course coordinates, m)."""
    if course != "foam" or blocks <= 0:
        return []
    seg = length / blocks
    return [(start + (i + 0.5) * seg, 0.5 * seg) for i in range(blocks)]


def _check_course(p: dict[str, Any]) -> list[str]:
    """Cross-key rules: patches lie on the course's height field, apart from each other and the foam."""
    errors = []
    x_lo, x_hi = -COURSE_BACK, p["course_start"] + p["course_length"] + COURSE_RUN_OUT
    y_hi = COURSE_WIDTH / 2
    foam = _foam_blocks(p["course"], p["course_length"], p["course_start"], p["foam_blocks"])
    rects: list[tuple[float, float, float, float]] = []
    for i, patch in enumerate(p["patches"]):
        (x0, x1), (y0, y1) = patch["x"], patch["y"]
        if x0 < x_lo or x1 > x_hi or y0 < -y_hi or y1 > y_hi:
            errors.append(f"patches[{i}]: x = [{x0:g}, {x1:g}], y = [{y0:g}, {y1:g}] leaves the course's ground "
                          f"(x in [{x_lo:g}, {x_hi:g}], y in [{-y_hi:g}, {y_hi:g}] m)")
        for j, (a0, a1, b0, b1) in enumerate(rects):
            if x0 < a1 and a0 < x1 and y0 < b1 and b0 < y1:
                errors.append(f"patches[{i}] overlaps patches[{j}]")
        half_w = p["foam_width"] / 2
        if any(x0 < cx + h and cx - h < x1 and y0 < half_w and -half_w < y1 for cx, h in foam):
            errors.append(f"patches[{i}] lies under a foam block (patches cover the ground, not the blocks)")
        rects.append((x0, x1, y0, y1))
    return errors


_SOLREF = ("contact time constant and damping ratio (MuJoCo solref, standard form)",
           (f"[{MIN_TIMECONST:g}, 1]", "(0, 10]"))
_SOLIMP = ("contact impedance dmin, dmax and transition width (MuJoCo solimp)",
           ("[0.0001, 0.9999]", "[0.0001, 0.9999]", "(0, 1]"))

#: the keys of one surface patch
PATCH_SCHEMA = ProfileSchema((
    ProfileKey("x", "list[float]", doc="span along the course, from the spawn point", unit="m", length=2,
               range=f"[{-COURSE_BACK:g}, 100]", increasing=True),
    ProfileKey("y", "list[float]", doc="span across the course (0: the course's centre line)", unit="m",
               length=2, range=f"[{-COURSE_WIDTH / 2:g}, {COURSE_WIDTH / 2:g}]", increasing=True),
    ProfileKey("friction", "float", None, "sliding friction on the patch (null: the course's)", range="(0, 5]",
               nullable=True),
    ProfileKey("solref", "list[float]", None, _SOLREF[0] + " (null: the course's)", "s, -", length=2,
               ranges=_SOLREF[1], nullable=True),
    ProfileKey("solimp", "list[float]", None, _SOLIMP[0] + " (null: the course's)", "-, -, m", length=3,
               ranges=_SOLIMP[1], nullable=True),
), nested=True)

#: every key of a go2 reality profile, with its type and accepted range (defaults: the training simulator's)
PROFILE_SCHEMA = ProfileSchema.from_dataclass(RealityProfile, [
    ProfileKey("course", "str", doc="the course: flat ground, a straight incline, or foam blocks on flat ground",
               choices=COURSES),
    ProfileKey("course_length", "float", doc="course length, the progress cap", unit="m", range="(0, 100]"),
    ProfileKey("course_start", "float", doc="where the incline or the first foam block starts, ahead of the "
               "spawn point", unit="m", range="[0, 10]"),
    ProfileKey("slope_deg", "float", doc="incline of the slope course (negative: downhill)", unit="deg",
               range="[-30, 30]"),
    ProfileKey("friction", "float", doc="sliding friction of the ground and the feet (replaces randomisation)",
               range="(0, 5]"),
    ProfileKey("contact_solref", "list[float]", doc=_SOLREF[0] + " of the course surface (null: MuJoCo's)",
               unit="s, -", length=2, ranges=_SOLREF[1], nullable=True),
    ProfileKey("contact_solimp", "list[float]", doc=_SOLIMP[0] + " of the course surface (null: MuJoCo's)",
               unit="-, -, m", length=3, ranges=_SOLIMP[1], nullable=True),
    ProfileKey("foam_blocks", "int", doc="foam course: compliant blocks laid end to end over the course",
               range="[0, 100]"),
    ProfileKey("foam_height", "float", doc="foam course: block height", unit="m", range="(0, 0.5]"),
    ProfileKey("foam_width", "float", doc="foam course: block width across the course", unit="m",
               range="(0, 10]"),
    ProfileKey("latency_steps", "int", doc="actuation delay in control steps (0.02 s each)", unit="steps",
               range="[0, 50]"),
    ProfileKey("motor_strength", "float", doc="scales Kp, Kd and the torque limit", range="(0, 5]"),
    ProfileKey("velocity_limit", "float", None, "the official (IsaacLab DC motor) torque-speed limit: torque within "
               "limit x (+-1 - joint velocity / velocity_limit), clipped to +-limit, each physics step (null: a "
               "flat +-limit clip)", unit="rad/s", range="(0, 1000]", nullable=True),
    ProfileKey("payload_mass", "float", doc="mass added to the base", unit="kg", range="[0, 50]"),
    ProfileKey("payload_offset", "list[float]", doc="payload position in the base frame", unit="m", length=3,
               range="[-1, 1]"),
    ProfileKey("obs_noise", "float", doc="observation noise, in multiples of the official training-noise std",
               range="[0, 10]"),
    ProfileKey("action_noise", "float", doc="std of Gaussian noise added to actions", unit="action units",
               range="[0, 10]"),
    ProfileKey("eval_speeds", "list[float]", doc="the protocol's commanded speeds", unit="m/s", min_length=1,
               range="(0, 5]"),
    ProfileKey("patches", "list[mapping]", doc="regions of the ground with their own surface (ice, carpet); "
               "keys below", schema=PATCH_SCHEMA),
], checks=[_check_course])


def builtin_profiles() -> list[str]:
    """Names of the profiles shipped in ``profiles/``."""
    return builtin_names(PROFILE_DIR)


def load_profile(profile: str | Path | dict | RealityProfile) -> RealityProfile:
    """A profile from a built-in name, a YAML path, a dict, or a profile (returned as is); every key is
    checked against :data:`PROFILE_SCHEMA` before any env exists (:class:`ProfileError` names the file,
    the key, the value and the accepted range)."""
    if isinstance(profile, RealityProfile):
        return profile
    return RealityProfile(**load_profile_data(profile, PROFILE_SCHEMA, PROFILE_DIR))


def forward_progress(env: Any) -> np.ndarray:
    """Progress along the course (m) of every env, clipped to [0, course_length].

    Without a profile, the x displacement since reset, unclipped above.
    """
    x = env.base_pos[:, 0] - env.spawn_pos[:, 0]
    profile = getattr(env, "profile", None)
    cap = profile.course_length if profile is not None else np.inf
    return np.clip(x, 0.0, cap).astype(np.float32)
