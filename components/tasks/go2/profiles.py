"""Proxy-real "reality profiles": YAML-described deviations layered over :class:`Go2Env`.

A profile fixes the course (flat, a straight slope, or foam blocks on flat ground), the
surface (friction, contact softness), and robot/IO deviations (actuation latency, motor
strength, payload, observation and action noise). Built-ins live in ``profiles/*.yaml``
and load by name; any other YAML loads by path. Unknown keys raise :class:`ProfileError`.

The course runs along +x from the robot's spawn point (x = 0, yaw 0); the incline or
first foam block starts ``course_start`` metres ahead. :func:`forward_progress` is the
base's x displacement, clipped to [0, ``course_length``] (the website's metric).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from simdist.components.tasks.go2.terrain import Box, Terrain, make_flat, make_slope_course

PROFILE_DIR = Path(__file__).with_name("profiles")
COURSES = ("flat", "slope", "foam")


class ProfileError(ValueError):
    """Bad profile name, file or key."""


@dataclass
class RealityProfile:
    """One proxy-real setting; see ``profiles/*.yaml`` for commented examples."""

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
    payload_mass: float = 0.0  # kg added to the base
    payload_offset: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])  # base frame, m
    obs_noise: float = 0.0  # multiple of the official training-noise standard deviations
    action_noise: float = 0.0  # std of Gaussian noise added to actions (action units)
    eval_speeds: list[float] = field(default_factory=lambda: [0.1, 0.3, 0.5])  # protocol speeds (m/s)

    def __post_init__(self) -> None:
        if self.course not in COURSES:
            raise ProfileError(f"profile {self.name!r}: course must be one of {COURSES}, got {self.course!r}")
        if self.latency_steps < 0:
            raise ProfileError(f"profile {self.name!r}: latency_steps must be >= 0")
        if len(self.payload_offset) != 3:
            raise ProfileError(f"profile {self.name!r}: payload_offset needs 3 values")

    # -- YAML -----------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: dict[str, Any], source: str = "<dict>") -> RealityProfile:
        known = {f.name for f in dataclasses.fields(cls)}
        for key in d:
            if key not in known:
                raise ProfileError(
                    f"unknown key {key!r} in reality profile {source}; known keys: {', '.join(sorted(known))}"
                )
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_yaml(self, path: str | Path | None = None) -> str:
        text = yaml.safe_dump(self.to_dict(), sort_keys=False)
        if path is not None:
            Path(path).write_text(text)
        return text

    # -- terrain --------------------------------------------------------------------
    def terrain(self) -> Terrain:
        """The course as a :class:`Terrain`; its surfaces outrank the feet (priority 2)."""
        if self.course == "slope":
            t = make_slope_course(self.slope_deg, self.course_length, start=self.course_start)
        else:
            t = make_flat()
        t.friction, t.priority = self.friction, 2
        t.solref = tuple(self.contact_solref) if self.contact_solref and self.course != "foam" else None
        t.solimp = tuple(self.contact_solimp) if self.contact_solimp and self.course != "foam" else None
        if self.course == "foam" and self.foam_blocks > 0:
            seg = self.course_length / self.foam_blocks
            for i in range(self.foam_blocks):
                cx = self.course_start + (i + 0.5) * seg
                t.boxes.append(Box(
                    center=(cx, 0.0, 0.5 * self.foam_height),
                    half_size=(0.5 * seg, 0.5 * self.foam_width, 0.5 * self.foam_height),
                    name=f"foam{i}", friction=self.friction,
                    solref=tuple(self.contact_solref or (0.02, 1.0)),
                    solimp=tuple(self.contact_solimp or (0.9, 0.95, 0.001)),
                ))
        return t


def builtin_profiles() -> list[str]:
    """Names of the profiles shipped in ``profiles/``."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))


def load_profile(profile: str | Path | dict | RealityProfile) -> RealityProfile:
    """A profile from a built-in name, a YAML path, a dict, or a profile (returned as is)."""
    if isinstance(profile, RealityProfile):
        return profile
    if isinstance(profile, dict):
        return RealityProfile.from_dict(profile)
    path = Path(profile)
    if not (path.suffix in (".yaml", ".yml") or path.exists()):
        path = PROFILE_DIR / f"{profile}.yaml"
        if not path.exists():
            known = ", ".join(builtin_profiles())
            raise ProfileError(f"unknown reality profile {str(profile)!r}; built-ins: {known}")
    if not path.exists():
        raise ProfileError(f"reality profile file {str(path)!r} does not exist")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ProfileError(f"reality profile {str(path)!r} must be a YAML mapping")
    data.setdefault("name", path.stem)
    return RealityProfile.from_dict(data, source=repr(str(path)))


def forward_progress(env: Any) -> np.ndarray:
    """Progress along the course (m) of every env, clipped to [0, course_length].

    Without a profile, the x displacement since reset, unclipped above.
    """
    x = env.base_pos[:, 0] - env.spawn_pos[:, 0]
    profile = getattr(env, "profile", None)
    cap = profile.course_length if profile is not None else np.inf
    return np.clip(x, 0.0, cap).astype(np.float32)
