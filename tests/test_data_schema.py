"""Schema v1: validation errors, sample encoding, front padding, migration."""

from __future__ import annotations

import numpy as np
import pytest
import webdataset as wds

from simdist.data import (
    SCHEMA_VERSION,
    DataError,
    DatasetSpec,
    Episode,
    front_pad,
    iter_episodes,
    migrate,
)

SPEC = DatasetSpec(obs={"proprio": (3,), "extero": (2, 2)}, action_dim=2, command_dim=1, dt=0.02)


def make_episode(length: int = 20, episode_id: int = 7, seed: int = 0) -> Episode:
    rng = np.random.default_rng(seed)
    return Episode(
        obs={"proprio": rng.normal(size=(length, 3)), "extero": rng.normal(size=(length, 2, 2))},
        actions=rng.normal(size=(length, 2)),
        commands=rng.normal(size=(length, 1)),
        rewards=rng.normal(size=length),
        values=rng.normal(size=length),
        expert=rng.random(length) < 0.5,
        episode_id=episode_id,
        meta={"source": "sim", "seed": seed, "dt": 0.02, "policy": "expert", "friction": np.float32(0.8)},
    )


def test_valid_episode_and_dtypes() -> None:
    ep = make_episode().validate(SPEC, "here")
    assert ep.obs["proprio"].dtype == np.float32 and ep.expert.dtype == bool
    assert len(ep) == 20 and ep.key == "ep000000007"


def test_missing_key() -> None:
    ep = make_episode()
    del ep.obs["extero"]
    with pytest.raises(DataError, match=r"where-x.*missing key 'obs\.extero'"):
        ep.validate(SPEC, "where-x")


@pytest.mark.parametrize(
    "field,bad,pattern",
    [
        ("actions", np.zeros((20, 3)), r"'actions' has shape \(20, 3\), expected \(20, 2\)"),
        ("rewards", np.zeros(19), r"'rewards' has shape \(19,\), expected \(20,\)"),
        ("commands", np.zeros((20, 2)), r"'commands' has shape"),
    ],
)
def test_wrong_shape(field: str, bad: np.ndarray, pattern: str) -> None:
    ep = make_episode()
    setattr(ep, field, bad)
    with pytest.raises(DataError, match=pattern):
        ep.validate(SPEC, "shard-a")


def test_nan_inf_and_unexpected_group() -> None:
    ep = make_episode()
    ep.obs["extero"][3, 1, 0] = np.nan
    with pytest.raises(DataError, match=r"'obs\.extero' contains NaN at index \(3, 1, 0\)"):
        ep.validate(SPEC, "w")
    ep = make_episode()
    ep.values[5] = np.inf
    with pytest.raises(DataError, match=r"'values' contains Inf"):
        ep.validate(SPEC, "w")
    ep = make_episode()
    ep.obs["state"] = np.zeros((20, 1))
    with pytest.raises(DataError, match=r"unexpected key 'obs\.state'"):
        ep.validate(SPEC, "w")


def test_sample_round_trip_and_missing_field() -> None:
    ep = make_episode()
    sample = ep.to_sample()
    assert sample["__key__"] == "ep000000007"
    assert set(sample) == {
        "__key__", "obs.proprio.npy", "obs.extero.npy", "actions.npy", "commands.npy",
        "rewards.npy", "values.npy", "expert.npy", "meta.json",
    }
    back = Episode.from_sample(sample, "mem")
    for k, v in ep.arrays().items():
        np.testing.assert_array_equal(back.arrays()[k], v)
    assert back.episode_id == 7 and back.meta["friction"] == pytest.approx(0.8)
    del sample["rewards.npy"]
    with pytest.raises(DataError, match=r"mem key 'ep000000007': missing key 'rewards\.npy'"):
        Episode.from_sample(sample, "mem")


def test_bad_values_in_shard_name_url_and_key(tmp_path) -> None:
    bad = make_episode(episode_id=3)
    bad.rewards[2] = np.nan
    url = str(tmp_path / "bad-000000.tar")
    with open(url, "wb") as f, wds.TarWriter(f, encoder=False) as tw:
        tw.write(make_episode(episode_id=1).to_sample())
        tw.write(bad.to_sample())
    it = iter_episodes(url, shuffle_shards=False, spec=SPEC)
    assert next(it).episode_id == 1
    with pytest.raises(DataError, match=rf"{url}.*'ep000000003'.*'rewards' contains NaN"):
        next(it)


def test_front_pad() -> None:
    ep = make_episode(length=10)
    ep.expert[:] = True
    p = front_pad(ep, 4).validate(SPEC, "pad")
    assert len(p) == 14 and p.meta["front_pad"] == 4
    for g in ep.obs:
        np.testing.assert_array_equal(p.obs[g][:4], np.repeat(ep.obs[g][:1], 4, 0))
        np.testing.assert_array_equal(p.obs[g][4:], ep.obs[g])
    for k in ("actions", "commands", "rewards", "values"):
        assert not getattr(p, k)[:4].any()
        np.testing.assert_array_equal(getattr(p, k)[4:], getattr(ep, k))
    assert not p.expert[:4].any() and p.expert[4:].all()
    assert front_pad(ep, 0) is ep


def test_spec_and_migrate() -> None:
    assert DatasetSpec.from_dict(SPEC.to_dict()) == SPEC
    assert DatasetSpec.from_episode(make_episode()) == SPEC
    with pytest.raises(DataError, match="group name"):
        DatasetSpec(obs={"Bad.Name": (1,)}, action_dim=1)
    s = {"__key__": "ep000000001", "meta.json": {}}
    assert migrate(s, SCHEMA_VERSION) is s
    with pytest.raises(DataError, match="unknown schema version 99"):
        migrate(s, 99)
    sample = make_episode().to_sample()
    sample["meta.json"] = b'{"schema_version": 2, "episode_id": 7}'
    with pytest.raises(DataError, match="schema version 2"):
        Episode.from_sample(sample)
