"""Reality profiles: YAML round trip, name vs path, checked keys, effects on the model, surface patches."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import mujoco
import numpy as np
import pytest

pytest.importorskip("mujoco.batch", reason="Go2Env needs mujoco >= 4")

from simdist.components.tasks.go2 import Go2Env, RealityProfile, builtin_profiles, forward_progress, load_profile
from simdist.components.tasks.go2 import robot as R
from simdist.components.tasks.go2.profiles import ProfileError
from simdist.tasks import make_task


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


# ---- checked keys (simdist.profiles) -------------------------------------------------------------------

#: the built-in profiles' values as the loader read them before the keys were checked (all other keys at
#: RealityProfile's defaults); checking must not change any of them
BUILTIN_VALUES = {
    "foam": dict(course="foam", course_length=3.0, friction=0.8, foam_blocks=2, foam_height=0.05, foam_width=1.0,
                 contact_solref=[0.05, 1.0], contact_solimp=[0.3, 0.95, 0.04], eval_speeds=[0.2, 0.7, 1.2],
                 description="two 5 cm compliant foam blocks over a 3.00 m course"),
    "ptfe-slope-3deg": dict(course="slope", course_length=1.82, slope_deg=3.0, friction=0.1, latency_steps=1,
                            description="1.82 m PTFE-covered incline at 3 deg, friction 0.1, 20 ms actuation delay"),
    "ptfe-slope-5.7deg": dict(course="slope", course_length=1.82, slope_deg=5.7, friction=0.12, latency_steps=1,
                              description="1.82 m PTFE-covered incline at 5.7 deg, friction 0.12, 20 ms actuation "
                                          "delay"),
}


@pytest.mark.parametrize("name", sorted(BUILTIN_VALUES))
def test_builtin_profiles_load_to_the_same_values(name: str) -> None:
    expected = {**dataclasses.asdict(RealityProfile()), "name": name, **BUILTIN_VALUES[name]}
    got = load_profile(name).to_dict()
    assert got == expected
    assert all(type(got[k]) is type(v) for k, v in expected.items())


def test_negative_friction_is_refused_before_any_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "foam.yaml"
    bad.write_text("base: foam\nfriction: -0.2\n")
    built: list[int] = []
    monkeypatch.setattr(Go2Env, "_build_sim", lambda self, nthread: built.append(1))
    message = re.escape(f"{bad}: friction = -0.2 is out of range (0, 5]")
    with pytest.raises(ProfileError, match=message):
        Go2Env(1, profile=bad)
    with pytest.raises(ProfileError, match=message):
        make_task("go2", profile=str(bad))
    with pytest.raises(ProfileError, match=r"friction = -0.2 is out of range"):
        RealityProfile(friction=-0.2)
    assert not built


def test_cross_key_checks_of_patches() -> None:
    patch = {"x": [1.0, 1.4], "y": [-1.0, 1.0]}
    with pytest.raises(ProfileError, match=r"patches\[1\] overlaps patches\[0\]"):
        load_profile({"patches": [patch, {"x": [1.2, 2.0], "y": [0.0, 0.5]}]})
    with pytest.raises(ProfileError, match=r"patches\[0\]: x = \[4, 6\].*leaves the course's ground"):
        load_profile({"patches": [{"x": [4.0, 6.0], "y": [0.0, 1.0]}]})
    with pytest.raises(ProfileError, match="under a foam block"):
        load_profile({"base": "foam", "patches": [patch]})
    with pytest.raises(ProfileError, match=r"patches\[0\].solref\[0\] = 0.001 is out of range \[0.01, 1\]"):
        load_profile({"patches": [{**patch, "solref": [0.001, 1.0]}]})
    ok = load_profile({"base": "foam", "patches": [{"x": [-1.0, -0.2], "y": [-1.0, 1.0], "friction": 0.3}]})
    assert ok.patches[0].friction == 0.3 and load_profile(ok.to_dict()) == ok


# ---- surface patches --------------------------------------------------------------------------------


def _foot_contacts(env: Go2Env, d: mujoco.MjData) -> list[tuple[str, float, np.ndarray]]:
    """(geom name, friction, position) of every foot contact of env 0."""
    env.batch.get_data(0, d)
    feet = set(env.foot_geom_ids.tolist())
    out = []
    for c in d.contact[:d.ncon]:
        other = c.geom2 if c.geom1 in feet else c.geom1 if c.geom2 in feet else None
        if other is not None:
            out.append((env.model.geom(int(other)).name, float(c.friction[0]), c.pos.copy()))
    return out


def test_patch_is_flush_geometry_that_the_height_map_does_not_see() -> None:
    """On a slope, a patch across the incline's foot: rays from above hit the patch inside it and the ground
    outside, both at the surface height the height scan uses."""
    prof = load_profile({"course": "slope", "slope_deg": 5.7, "course_length": 1.82,
                         "patches": [{"x": [0.1, 0.9], "y": [-0.5, 0.5], "friction": 0.05}]})
    env = Go2Env(1, profile=prof, randomize=False, seed=0)
    m = env.model
    patch, ground = m.geom("patch0"), m.geom("ground")
    assert patch.friction[0] == pytest.approx(0.05) and patch.priority[0] == 2
    assert (patch.contype[0], patch.conaffinity[0]) == (ground.contype[0], ground.conaffinity[0])
    assert ground.friction[0] == pytest.approx(0.8)
    d = mujoco.MjData(m)
    d.qpos[2] = 10.0  # the robot out of the rays' way
    mujoco.mj_forward(m, d)
    geomid = np.zeros(1, np.int32)
    flat_prof = load_profile({**prof.to_dict(), "patches": []})
    for x in np.arange(-0.28, 1.3, 0.07):  # steps off the patch edges, where both are hit
        for y in (-0.8, -0.3, 0.0, 0.45, 0.8):
            top = 2.0
            dist = mujoco.mj_ray(m, d, np.array([x, y, top]), np.array([0.0, 0.0, -1.0]), None, 1, -1, geomid)
            surface = float(env.terrain.height_at(np.array([x]), np.array([y]))[0])
            assert top - dist == pytest.approx(surface, abs=1e-5)
            assert surface == pytest.approx(float(flat_prof.terrain().height_at(np.array([x]), np.array([y]))[0]))
            inside = 0.1 < x < 0.9 and -0.5 < y < 0.5
            assert m.geom(int(geomid[0])).name == ("patch0" if inside else "ground"), (x, y)


def _walk(profiles: list[RealityProfile], steps: int = 250) -> list[dict]:
    """The shipped expert walking straight at 0.5 m/s on each profile (one policy call per step for all):
    foot contacts per geom, their friction, the feet's slip speed on x in [1.0, 1.6] (m/s, mean over feet in
    contact) and the progress."""
    from simdist.experts import load_policy

    policy = load_policy(Path(__file__).resolve().parents[1] / "hub" / "experts" / "go2")
    envs = [Go2Env(1, profile=p, command_mode="straight", straight_speed=0.5, randomize=False, seed=0, nthread=1)
            for p in profiles]
    obs = [env.reset(seed=0) for env in envs]
    datas = [mujoco.MjData(env.model) for env in envs]
    stats = [{"counts": {}, "friction": {}, "slip": []} for _ in envs]
    prev = [env.site_xpos[0, env.foot_site_ids].copy() for env in envs]
    for _ in range(steps):
        actions = policy({policy.obs_key: np.concatenate([o[policy.obs_key] for o in obs])})
        for i, (env, d, st) in enumerate(zip(envs, datas, stats)):
            obs[i] = env.step(actions[i:i + 1]).obs
            feet = env.site_xpos[0, env.foot_site_ids].copy()
            speed = np.linalg.norm((feet - prev[i])[:, :2], axis=1) / env.dt
            prev[i] = feet
            on = (feet[:, 0] > 1.0) & (feet[:, 0] < 1.6) & env._kinematics()["foot_contact"][0]
            st["slip"].extend(speed[on].tolist())
            for name, mu, _ in _foot_contacts(env, d):
                st["counts"][name] = st["counts"].get(name, 0) + 1
                st["friction"].setdefault(name, set()).add(round(mu, 6))
    for env, st in zip(envs, stats):
        st["slip"] = float(np.mean(st["slip"]))
        st["progress"] = float(env.base_pos[0, 0] - env.spawn_pos[0, 0])
    return stats


def test_ice_patch_changes_the_contacts_and_the_gait() -> None:
    """``ice-patch``: the feet really touch the patch geom there, at friction 0.05, and slip faster on it than
    on the same geometry with the course's friction (measured: 0.21 vs 0.09 m/s)."""
    ice = load_profile("ice-patch")
    assert ice.course == "flat" and ice.patches[0].friction == pytest.approx(0.05)
    same = load_profile({**ice.to_dict(), "name": "control", "patches": [{**ice.to_dict()["patches"][0],
                                                                           "friction": None}]})
    a, b = _walk([ice, same])
    assert a["counts"]["patch0"] > 50 and b["counts"]["patch0"] > 50 and a["counts"]["ground"] > 50
    assert a["friction"] == {"ground": {0.8}, "patch0": {0.05}}
    assert b["friction"] == {"ground": {0.8}, "patch0": {0.8}}
    assert a["slip"] > 1.5 * b["slip"]
    assert a["progress"] > 1.6 and b["progress"] > 1.6  # both crossed the strip
