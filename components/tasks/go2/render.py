"""Offscreen videos of one Go2 protocol trial: a camera following the base, rendered with ``mujoco.Renderer``.

The trial is :func:`~simdist.components.tasks.go2.protocol.run_trials` (the protocol's reset phase and straight-walk
command) on one env of a reality profile's course, with a controller ``run_protocol`` accepts (an expert
policy or a planner); every ``every``-th control step is drawn. MuJoCo picks its OpenGL backend from
``MUJOCO_GL`` when ``mujoco`` is first imported; :mod:`simdist.envs` defaults it to ``egl`` on headless Linux
(if simdist is imported before mujoco).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from simdist.components.tasks.go2.protocol import Course, make_course, protocol_env, run_trials
from simdist.offscreen import label_frames, make_renderer, write_gif

#: camera: distance (m), azimuth and elevation (deg); azimuth 90 looks along +y, so the walk (+x) goes right
CAMERA = (1.9, 105.0, -14.0)
ROBOT_RGBA = {"trunk": (0.95, 0.55, 0.15, 1.0), "head": (0.95, 0.55, 0.15, 1.0)}
LIMB_RGBA = (0.22, 0.22, 0.25, 1.0)


def _render_model(env: Any) -> mujoco.MjModel:
    """``env``'s robot and terrain with visuals for video: a checkered ground, a light, a coloured robot."""
    spec = env.build_spec()
    spec.add_texture(name="grid", type=mujoco.mjtTexture.mjTEXTURE_2D, builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
                     rgb1=[0.72, 0.75, 0.78], rgb2=[0.56, 0.6, 0.64], width=64, height=64)
    mat = spec.add_material(name="grid", texrepeat=[2.0, 2.0], texuniform=True)
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "grid"
    for geom in spec.worldbody.geoms:
        if geom.name == "ground":
            geom.material = "grid"
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec.visual.headlight.diffuse = [0.45, 0.45, 0.45]
    spec.add_texture(name="sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX, builtin=mujoco.mjtBuiltin.mjBUILTIN_FLAT,
                     rgb1=[0.82, 0.87, 0.93], rgb2=[0.82, 0.87, 0.93], width=16, height=16)
    spec.worldbody.add_light(pos=[0.0, 0.0, 4.0], dir=[0.3, 0.2, -1.0], diffuse=[0.6, 0.6, 0.6], castshadow=False)
    model = spec.compile()
    if model.nq != env.model.nq:  # pragma: no cover - visuals never add joints
        raise RuntimeError("the render model does not match the env's model")
    for g in range(model.ngeom):
        if model.geom_bodyid[g] != 0:
            model.geom_rgba[g] = ROBOT_RGBA.get(model.geom(g).name, LIMB_RGBA)
    return model


class _FrameRecorder:
    """A view of a one-env :class:`Go2Env` that renders env 0 after reset and after every ``every``-th step."""

    def __init__(self, env: Any, width: int, height: int, every: int) -> None:
        self.env, self.every, self.steps = env, max(1, int(every)), 0
        self.model = _render_model(env)
        self.data = mujoco.MjData(self.model)
        self.renderer = make_renderer(self.model, width, height)
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        self.camera.distance, self.camera.azimuth, self.camera.elevation = CAMERA
        self.option = mujoco.MjvOption()
        self.option.geomgroup[:] = 1  # the robot's geoms are in group 3 (collision), hidden by default
        self.frames: list[np.ndarray] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def reset(self, *args: Any, **kwargs: Any) -> dict[str, np.ndarray]:
        obs = self.env.reset(*args, **kwargs)
        self.capture()
        return obs

    def step(self, actions: np.ndarray) -> Any:
        result = self.env.step(actions)
        self.steps += 1
        if self.steps % self.every == 0:
            self.capture()
        return result

    def capture(self) -> None:
        self.data.qpos[:] = self.env.qpos[0]
        mujoco.mj_forward(self.model, self.data)
        self.camera.lookat[:] = self.data.qpos[:3]
        self.renderer.update_scene(self.data, camera=self.camera, scene_option=self.option)
        self.frames.append(self.renderer.render().copy())

    def close(self) -> None:
        self.renderer.close()


def render_frames(controller: Any, profile: str | Course, speed: float, steps: int, *, width: int = 320,
                  height: int = 240, every: int = 2, seed: int = 0) -> np.ndarray:
    """(N, height, width, 3) uint8 frames of one protocol trial at ``speed`` for at most ``steps`` control steps
    (reset phase included; the trial ends early on success or a fall), one frame per ``every`` steps.
    ``profile``: a reality profile (name or YAML path) or a :class:`Course` (e.g. ``make_course(terrain="flat")``)."""
    course = profile if isinstance(profile, Course) else make_course(profile=profile)
    env = protocol_env(course, 1, steps, seed=seed)
    recorder = None
    try:
        recorder = _FrameRecorder(env, width, height, every)
        run_trials(recorder, controller, speed, course.length, seed=seed, max_steps=steps)
    finally:
        if recorder is not None:
            recorder.close()
        env.close()
    return np.stack(recorder.frames)


def render_rollout(controller: Any, profile: str | Course, speed: float, steps: int, path: str | Path, *,
                   width: int = 320, height: int = 240, fps: float = 25.0, seed: int = 0, label: str | None = None
                   ) -> Path:
    """Render one trial to an animated GIF at ``path`` (see :func:`render_frames`), one frame per 50 / ``fps``
    control steps (at 25 fps: every other 50 Hz step, i.e. real time), with ``label`` in the corner."""
    every = max(1, round(50.0 / fps))
    frames = render_frames(controller, profile, speed, steps, width=width, height=height, every=every, seed=seed)
    if label:
        frames = label_frames(frames, label)
    return write_gif(frames, path, fps=fps)
