"""Reality profiles: YAML round trip, name vs path, unknown keys, effects on the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco.batch", reason="Go2Env needs mujoco >= 4")

from simdist.components.tasks.go2 import Go2Env, RealityProfile, builtin_profiles, forward_progress, load_profile
from simdist.components.tasks.go2 import robot as R
from simdist.components.tasks.go2.profiles import ProfileError


def test_builtins_exist_and_load_by_name() -> None:
    assert {"ptfe-slope-3deg", "ptfe-slope-5.7deg", "foam"} <= set(builtin_profiles())
    p = load_profile("ptfe-slope-5.7deg")
    assert p.course == "slope" and p.slope_deg == pytest.approx(5.7)
    assert p.course_length == pytest.approx(1.82) and p.friction < 0.2
    foam = load_profile("foam")
    assert foam.course_length == pytest.approx(3.0) and foam.foam_blocks == 2
    assert foam.foam_height == pytest.approx(0.05)


def test_yaml_round_trip_and_path_vs_name(tmp_path: Path) -> None:
    p = load_profile("foam")
    path = tmp_path / "my_foam.yaml"
    p.to_yaml(path)
    assert load_profile(path) == p
    assert load_profile(str(path)) == p
    custom = RealityProfile(name="x", course="slope", slope_deg=4.0, latency_steps=2, payload_mass=1.5,
                            payload_offset=[0.05, 0.0, 0.02], obs_noise=1.0, action_noise=0.1)
    assert RealityProfile.from_dict(custom.to_dict()) == custom
    no_name = tmp_path / "nameless.yaml"
    no_name.write_text("course: flat\nfriction: 0.5\n")
    assert load_profile(no_name).name == "nameless"


def test_unknown_key_and_unknown_name_raise(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("course: flat\nfricton: 0.3\n")
    with pytest.raises(ProfileError, match="fricton"):
        load_profile(bad)
    with pytest.raises(ProfileError, match="no-such-profile"):
        load_profile("no-such-profile")
    with pytest.raises(ProfileError, match="does not exist"):
        load_profile(tmp_path / "missing.yaml")
    with pytest.raises(ProfileError, match="course"):
        RealityProfile(course="moon")


def test_slope_profile_applies_friction_and_geometry() -> None:
    env = Go2Env(2, profile="ptfe-slope-5.7deg", seed=0)
    env.reset()
    ground = env.model.geom("ground")
    assert ground.friction[0] == pytest.approx(0.12) and ground.priority[0] == 2
    np.testing.assert_allclose(env.m_friction[:, env.foot_geom_ids, 0], 0.12)
    np.testing.assert_allclose(env.params.friction, 0.12)
    assert env.profile.latency_steps == 1
    tan = np.tan(np.radians(5.7))
    h = env.terrain.height_at(np.array([0.0, 0.3 + 1.0, 0.3 + 1.82 + 1.0]), np.zeros(3))
    np.testing.assert_allclose(h, [0.0, tan * 1.0, tan * 1.82], atol=1e-4)
    np.testing.assert_allclose(env.spawn_pos[:, :2], 0.0)  # course start, yaw 0
    # progress is the x displacement, clipped to the course
    env.qpos[0, 0] = 5.0
    env.qpos[1, 0] = 0.7
    np.testing.assert_allclose(forward_progress(env), [1.82, 0.7], atol=1e-6)


def test_foam_profile_is_soft() -> None:
    env = Go2Env(1, profile="foam", randomize=False, seed=0)
    env.reset()
    foam = env.model.geom("foam0")
    assert foam.solref[0] == pytest.approx(0.05) and foam.priority[0] == 2
    assert foam.size[2] * 2 == pytest.approx(0.05)
    assert env.terrain.height_at(np.array([1.0]), np.array([0.0]))[0] == pytest.approx(0.05)
    # a foot-sized load sinks deeper into the foam than into the default ground
    env.qpos[0, :3] = [1.0, 0.0, 0.05 + R.NOMINAL_BASE_HEIGHT]
    env.batch.forward([0])
    for _ in range(50):
        env.step(np.zeros((1, 12), np.float32))
    feet_z = env.site_xpos[0, env.foot_site_ids, 2] - R.FOOT_RADIUS
    assert feet_z.mean() < 0.05 - 0.005  # sunk into the 5 cm block


def test_latency_motor_strength_and_payload() -> None:
    prof = RealityProfile(name="t", latency_steps=2, motor_strength=0.8, payload_mass=2.0,
                          payload_offset=[0.1, 0.0, 0.0])
    env = Go2Env(2, profile=prof, randomize=False, seed=0)
    env.reset()
    np.testing.assert_allclose(env.m_gain[:, :, 0], 0.8 * R.KP)
    np.testing.assert_allclose(env.m_forcerange[:, :, 1], 0.8 * R.TORQUE_LIMIT)
    np.testing.assert_allclose(env.m_mass[:, env.base_body_id], R.TRUNK_MASS + 2.0)
    assert env.m_ipos[0, env.base_body_id, 0] > R.TRUNK_IPOS[0]
    a = np.ones((2, 12), np.float32)
    env.step(a)
    np.testing.assert_allclose(env.ctrl, np.tile(R.DEFAULT_JOINT_POS, (2, 1)))  # delayed
    env.step(a)
    np.testing.assert_allclose(env.ctrl, np.tile(R.DEFAULT_JOINT_POS, (2, 1)))
    env.step(a)
    np.testing.assert_allclose(env.ctrl, np.tile(R.DEFAULT_JOINT_POS + R.ACTION_SCALE, (2, 1)))
