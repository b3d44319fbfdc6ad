"""Camera images of the UR5e cell (``front``, ``side``, ``wrist``) with ``mujoco.Renderer``.

:class:`CameraRig` renders the env's cameras into ``image_<cam>`` arrays (``size`` x ``size`` RGB, uint8) from
an ``MjData`` or from every simulation of a ``mujoco.batch.Batch``; :class:`~.env.UR5eEnv` uses one when
``ArmEnvConfig.cameras`` is set. Images are optional: :func:`render_states` draws them afterwards from the
env's stored ``physics`` observation rows (qpos and the mocap poses), so data generation runs without them.
The robot's visuals are primitives; shadows, reflections and the skybox are off, so a small frame costs a few
milliseconds even on a software renderer (``MUJOCO_GL=egl`` on Mesa llvmpipe).

:class:`VisualRandomization` is an optional, light, per-episode visual domain randomisation (geom colours,
light intensity, camera pose), drawn deterministically from a seed onto the rig's copy of the model.

Rollout videos: :mod:`.video`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

#: the env's cameras, in the order their images are listed
CAMERA_NAMES = ("front", "side", "wrist")
DEFAULT_SIZE = 64
LARGE_SIZE = 224
#: render-only lighting (ambient, diffuse, specular): brighter than MuJoCo's default headlight, dull highlights
HEADLIGHT = ((0.3, 0.3, 0.3), (0.45, 0.45, 0.45), (0.1, 0.1, 0.1))
LIGHT_SPECULAR = 0.1
#: GIF palette size: 64 colours (the Go2 videos') merge the small green peg and hole into the grey robot
GIF_COLORS = 256
#: geom groups drawn: 0-2 and the robot's collision geoms (group 3; the gripper has no other visuals);
#: sites (the TCP and target markers, group 4) stay hidden
GEOM_GROUPS = (0, 1, 2, 3)


@dataclass(frozen=True)
class VisualRandomization:
    """Per-episode visual jitter, uniform in +-each value: ``rgba`` is added to every geom's RGB (clipped to
    [0, 1]; alpha kept), ``light`` scales each light's and the headlight's diffuse intensity by ``1 +- light``,
    ``camera_pos`` (m) shifts each camera along each axis of its parent frame and ``camera_rot`` (deg) turns it
    about a random axis."""

    rgba: float = 0.06
    light: float = 0.25
    camera_pos: float = 0.02
    camera_rot: float = 2.0

    def __post_init__(self) -> None:
        for name in ("rgba", "light", "camera_pos", "camera_rot"):
            if getattr(self, name) < 0:
                raise ValueError(f"VisualRandomization.{name} must be >= 0, got {getattr(self, name)}")
        if self.light >= 1.0:
            raise ValueError(f"VisualRandomization.light must be < 1, got {self.light}")


def camera_names(model: mujoco.MjModel) -> list[str]:
    """The model's camera names, in id order."""
    return [model.camera(i).name for i in range(model.ncam)]


def camera_ids(model: mujoco.MjModel, cameras: Iterable[str]) -> list[int]:
    """Camera ids for ``cameras``; a ValueError names an unknown one and lists the model's cameras."""
    known = camera_names(model)
    ids = []
    for cam in cameras:
        if cam not in known:
            raise ValueError(f"unknown camera {cam!r}: the model has {', '.join(known) or 'no cameras'}")
        ids.append(known.index(cam))
    return ids


def render_model(model: mujoco.MjModel) -> mujoco.MjModel:
    """A copy of ``model`` with the rendering's lighting (:data:`HEADLIGHT`, dull specular highlights); its
    physics is untouched, so an ``MjData`` of ``model`` renders with it."""
    out = copy.copy(model)
    ambient, diffuse, specular = HEADLIGHT
    out.vis.headlight.ambient[:] = ambient
    out.vis.headlight.diffuse[:] = diffuse
    out.vis.headlight.specular[:] = specular
    out.light_specular[:] = LIGHT_SPECULAR
    return out


def _axis_angle_quat(rng: np.random.Generator, max_deg: float) -> np.ndarray:
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = np.deg2rad(rng.uniform(-max_deg, max_deg))
    quat = np.zeros(4)
    mujoco.mju_axisAngle2Quat(quat, axis, angle)
    return quat


def randomize_visuals(model: mujoco.MjModel, nominal: mujoco.MjModel, config: VisualRandomization,
                      seed: int) -> None:
    """Write one draw of ``config`` (deterministic in ``seed``) into ``model``'s visual fields, starting from
    ``nominal``'s (a model of the same structure): geom colours, light intensities, camera poses."""
    rng = np.random.default_rng(seed)
    rgba = nominal.geom_rgba.copy()
    rgba[:, :3] = np.clip(rgba[:, :3] + rng.uniform(-config.rgba, config.rgba, (model.ngeom, 3)), 0.0, 1.0)
    model.geom_rgba[:] = rgba
    model.light_diffuse[:] = nominal.light_diffuse * rng.uniform(1 - config.light, 1 + config.light,
                                                                 (model.nlight, 1))
    model.vis.headlight.diffuse[:] = nominal.vis.headlight.diffuse * rng.uniform(1 - config.light,
                                                                                 1 + config.light)
    model.cam_pos[:] = nominal.cam_pos + rng.uniform(-config.camera_pos, config.camera_pos, (model.ncam, 3))
    for i in range(model.ncam):
        quat = np.zeros(4)
        mujoco.mju_mulQuat(quat, nominal.cam_quat[i], _axis_angle_quat(rng, config.camera_rot))
        model.cam_quat[i] = quat


class CameraRig:
    """One ``mujoco.Renderer`` (``size`` x ``size``) drawing ``cameras`` of ``model`` (a copy with the render
    lighting; :func:`render_model`). ``randomization``: visual jitter drawn from ``seed`` now and from a new
    seed at each :meth:`randomize` (per episode); None (default): the nominal visuals."""

    def __init__(self, model: mujoco.MjModel, cameras: Sequence[str] = ("front",), size: int = DEFAULT_SIZE, *,
                 randomization: VisualRandomization | None = None, seed: int = 0) -> None:
        from simdist.offscreen import make_renderer

        if isinstance(cameras, str):
            cameras = (cameras,)
        self.cameras = tuple(cameras)
        if not self.cameras:
            raise ValueError("CameraRig needs at least one camera")
        self.camera_ids = camera_ids(model, self.cameras)
        self.size = int(size)
        if self.size < 1:
            raise ValueError(f"image size must be positive, got {size}")
        self.nominal = render_model(model)
        self.model = copy.copy(self.nominal) if randomization is not None else self.nominal
        self.randomization = randomization
        self.keys = tuple(f"image_{cam}" for cam in self.cameras)
        self.option = mujoco.MjvOption()
        self.option.geomgroup[:] = 0
        self.option.geomgroup[list(GEOM_GROUPS)] = 1
        self._data = mujoco.MjData(model)
        self._renderer = make_renderer(self.model, self.size, self.size)
        flags = self._renderer.scene.flags
        for flag in (mujoco.mjtRndFlag.mjRND_SHADOW, mujoco.mjtRndFlag.mjRND_REFLECTION,
                     mujoco.mjtRndFlag.mjRND_SKYBOX, mujoco.mjtRndFlag.mjRND_FOG):
            flags[flag] = 0
        if randomization is not None:
            self.randomize(seed)

    def randomize(self, seed: int) -> None:
        """A new draw of the visual jitter (no-op without ``randomization``); call it when an episode starts."""
        if self.randomization is not None:
            randomize_visuals(self.model, self.nominal, self.randomization, int(seed))

    def render_data(self, data: mujoco.MjData) -> dict[str, np.ndarray]:
        """``{"image_<cam>": (size, size, 3) uint8}`` of ``data`` (its positions must be current: after
        ``mj_forward`` or a step). With randomisation the camera and light poses in ``data`` are recomputed
        (``mj_camlight``) for the jittered cameras."""
        out = {key: np.empty((self.size, self.size, 3), np.uint8) for key in self.keys}
        self._render_into(data, out, None)
        return out

    def render_batch(self, batch: Any) -> dict[str, np.ndarray]:
        """``{"image_<cam>": (B, size, size, 3) uint8}`` of every simulation of a persistent
        ``mujoco.batch.Batch`` whose positions are current (the env's steps compute them)."""
        n = int(batch.nsim)
        out = {key: np.empty((n, self.size, self.size, 3), np.uint8) for key in self.keys}
        for i in range(n):
            batch.get_data(i, self._data)
            self._render_into(self._data, out, i)
        return out

    def _render_into(self, data: mujoco.MjData, out: dict[str, np.ndarray], row: int | None) -> None:
        if self._renderer is None:
            raise RuntimeError("this CameraRig is closed")
        if self.randomization is not None:
            mujoco.mj_camlight(self.model, data)
        for key, cam in zip(self.keys, self.camera_ids):
            self._renderer.update_scene(data, camera=cam, scene_option=self.option)
            self._renderer.render(out=out[key] if row is None else out[key][row])

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    def __enter__(self) -> CameraRig:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def set_physics_state(model: mujoco.MjModel, data: mujoco.MjData, row: np.ndarray) -> None:
    """Write one ``physics`` observation row (qpos, mocap positions, mocap quaternions) into ``data`` and run
    ``mj_forward``."""
    nq, nm = model.nq, model.nmocap
    row = np.asarray(row, np.float64)
    data.qpos[:] = row[:nq]
    data.mocap_pos[:] = row[nq:nq + 3 * nm].reshape(nm, 3)
    data.mocap_quat[:] = row[nq + 3 * nm:].reshape(nm, 4)
    mujoco.mj_forward(model, data)


def render_states(model: mujoco.MjModel, physics_rows: np.ndarray, cameras: Sequence[str] = ("front",),
                  size: int = DEFAULT_SIZE, *, randomization: VisualRandomization | None = None, seed: int = 0
                  ) -> dict[str, np.ndarray]:
    """``{"image_<cam>": (T, size, size, 3) uint8}`` from T stored ``physics`` observation rows (T, nq + 7
    nmocap) of an env on ``model`` (``env.model``: the same profile's spec). ``randomization``: one visual draw
    from ``seed`` for all T rows (one episode)."""
    rows = np.asarray(physics_rows)
    if rows.ndim == 1:
        rows = rows[None]
    width = model.nq + 7 * model.nmocap
    if rows.ndim != 2 or rows.shape[1] != width:
        raise ValueError(f"physics rows must be (T, {width}) (nq {model.nq} + 7 x {model.nmocap} mocap), "
                         f"got {rows.shape}")
    data = mujoco.MjData(model)
    with CameraRig(model, cameras, size, randomization=randomization, seed=seed) as rig:
        out = {key: np.empty((len(rows), rig.size, rig.size, 3), np.uint8) for key in rig.keys}
        for t, row in enumerate(rows):
            set_physics_state(model, data, row)
            rig._render_into(data, out, t)
    return out


# ---- rollout videos --------------------------------------------------------------------------------
