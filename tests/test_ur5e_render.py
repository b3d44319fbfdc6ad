"""UR5e camera images: the rig's shapes and contents, the env's image observations, images re-rendered from the
stored physics rows, camera placement over the workspace, visual randomisation (needs an offscreen GL context:
skipped without one)."""

from __future__ import annotations

import numpy as np
import pytest

import simdist.envs  # noqa: F401 - first, so that MUJOCO_GL defaults to egl before mujoco is imported

try:  # MuJoCo sets up the MUJOCO_GL backend on import; a missing one fails there (not with ImportError)
    import mujoco
except Exception as err:  # noqa: BLE001
    pytest.skip(f"mujoco does not import: {type(err).__name__}: {err}", allow_module_level=True)

from simdist.components.tasks.ur5e.assembly import PegAssembly  # noqa: E402
from simdist.components.tasks.ur5e.env import ArmEnvConfig, UR5eEnv  # noqa: E402
from simdist.components.tasks.ur5e.grids import RECEPTACLE_XY, get_grid  # noqa: E402
from simdist.components.tasks.ur5e.render import (  # noqa: E402
    CameraRig,
    VisualRandomization,
    render_states,
)

CAMS = ("front", "side", "wrist")


@pytest.fixture(scope="module")
def gl() -> None:
    from simdist.offscreen import offscreen_gl_error

    error = offscreen_gl_error()
    if error is not None:
        pytest.skip(f"no offscreen GL context: {error}")


@pytest.fixture(scope="module")
def env(gl):
    env = UR5eEnv(PegAssembly(), 2, ArmEnvConfig(grid="wide", cameras=CAMS, image_size=64), seed=0)
    env.reset(seed=0)
    yield env
    env.close()


def project(model: mujoco.MjModel, data: mujoco.MjData, cam: str, point: np.ndarray, size: int) -> np.ndarray:
    """Pixel (column, row) of a world point in camera ``cam`` (NaN behind it)."""
    i = model.camera(cam).id
    p = data.cam_xmat[i].reshape(3, 3).T @ (np.asarray(point) - data.cam_xpos[i])
    if p[2] >= 0:
        return np.array([np.nan, np.nan])
    f = 0.5 * size / np.tan(np.deg2rad(model.cam_fovy[i]) / 2)
    return np.array([0.5 * size + f * p[0] / -p[2], 0.5 * size - f * p[1] / -p[2]])


def test_fixed_cameras_frame_the_workspace(env) -> None:
    """Every Wide-lattice peg start, the hole block and the gripper project well inside the front and side views."""
    data = env.batch.get_data(0)
    tcp = data.site_xpos[env.model.site("tcp").id].copy()
    points = [np.array([x, y, 0.03]) for x, y in get_grid("wide").lattice()[:, :2]]
    points += [np.array([*RECEPTACLE_XY, 0.03]), tcp, tcp + [0.0, 0.0, 0.13]]  # the gripper base above the TCP
    for cam in ("front", "side"):
        for point in points:
            col, row = project(env.model, data, cam, point, 100)
            assert 3 < col < 97 and 3 < row < 97, (cam, point, col, row)


def test_images_have_content(env) -> None:
    obs = env.observations
    for cam in CAMS:
        img = obs[f"image_{cam}"]
        assert img.shape == (2, 64, 64, 3) and img.dtype == np.uint8
        assert env.observation_spec[f"image_{cam}"].shape == (64, 64, 3)
        assert img.std() > 10, cam  # not blank
    for a in range(3):
        for b in range(a + 1, 3):
            diff = np.abs(obs[f"image_{CAMS[a]}"][0].astype(int) - obs[f"image_{CAMS[b]}"][0].astype(int)).mean()
            assert diff > 10, (CAMS[a], CAMS[b])
    # the peg (green) shows where it projects in the front view, and the gripper region has contrast
    data = env.batch.get_data(0)
    img = obs["image_front"][0].astype(int)
    col, row = project(env.model, data, "front", data.xpos[env.model.body("peg").id], 64).round().astype(int)
    patch = img[max(row - 3, 0):row + 4, max(col - 3, 0):col + 4]
    green = (patch[..., 1] > patch[..., 0] + 25) & (patch[..., 1] > patch[..., 2] + 25)
    assert green.any()
    col, row = project(env.model, data, "front", data.site_xpos[env.model.site("tcp").id], 64).round().astype(int)
    assert img[max(row - 4, 0):row + 5, max(col - 4, 0):col + 5].std() > 15
    # the wrist view shows the fingers (dark) in its lower half and the table (bright) in its upper half
    wrist = obs["image_wrist"][0].mean(-1)
    assert wrist[:20].mean() > 120 and (wrist[32:] < 50).mean() > 0.05


def test_env_with_two_cameras_returns_images(gl) -> None:
    env = UR5eEnv(PegAssembly(), 2, ArmEnvConfig(grid="wide", cameras=("front", "wrist"), image_size=32), seed=1)
    try:
        assert {"image_front", "image_wrist"} <= set(env.observation_spec) and "image_side" not in env.observation_spec
        obs = env.reset(seed=1)
        step = env.step(np.zeros((2, 7)))
        for o in (obs, step.obs):
            assert o["image_front"].shape == o["image_wrist"].shape == (2, 32, 32, 3)
            assert o["image_front"].dtype == np.uint8 and "image_side" not in o
    finally:
        env.close()


def test_render_states_reproduces_the_env_images(env) -> None:
    rng = np.random.default_rng(0)
    obs = env.observations
    for _ in range(3):
        obs = env.step(rng.uniform(-1, 1, (2, 7))).obs
    images = render_states(env.model, obs["physics"], CAMS, 64)
    for cam in CAMS:
        key = f"image_{cam}"
        assert images[key].shape == (2, 64, 64, 3) and images[key].dtype == np.uint8
        diff = np.abs(images[key].astype(int) - obs[key].astype(int))
        # the rows are float32: at most a few edge pixels move
        assert (diff.max(-1) > 8).mean() < 0.01, cam
        assert diff.mean() < 0.5, cam


def test_unknown_camera_is_named(env) -> None:
    with pytest.raises(ValueError, match=r"'top'.*front, side, wrist"):
        CameraRig(env.model, ("front", "top"))
    with pytest.raises(ValueError, match="physics rows"):
        render_states(env.model, np.zeros((1, 5)), ("front",))


def test_visual_randomization_is_seeded(env) -> None:
    data = env.batch.get_data(0)
    nominal = CameraRig(env.model, ("front",), 32)
    rig = CameraRig(env.model, ("front",), 32, randomization=VisualRandomization(), seed=1)
    try:
        base = nominal.render_data(data)["image_front"]
        first = rig.render_data(data)["image_front"]
        dpos = rig.model.cam_pos - nominal.model.cam_pos
        assert 0 < np.abs(dpos).max() <= 0.02
        rig.randomize(2)
        second = rig.render_data(data)["image_front"]
        rig.randomize(1)
        again = rig.render_data(data)["image_front"]
        assert np.array_equal(first, again)
        assert not np.array_equal(first, second) and not np.array_equal(first, base)
        assert np.abs(first.astype(int) - base.astype(int)).mean() < 40  # light: the same scene
    finally:
        nominal.close()
        rig.close()
    # off by default, and the env's model is untouched by either rig
    with CameraRig(env.model, ("front",), 8) as plain:
        assert plain.randomization is None and np.array_equal(plain.model.cam_pos, env.model.cam_pos)
        assert np.array_equal(plain.model.geom_rgba, env.model.geom_rgba)
