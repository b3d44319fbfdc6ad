"""Shards (writer, resume, dataset.json, reader), statistics and the episode recorder."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from simdist.data import (
    DataError,
    DatasetSpec,
    Episode,
    EpisodeRecorder,
    EpisodeWriter,
    RunningStats,
    Stats,
    compute_stats,
    iter_episodes,
    load_stats,
    read_dataset_info,
    resolve_urls,
)

SPEC = DatasetSpec(obs={"proprio": (3,), "extero": (2, 2)}, action_dim=2, command_dim=1, dt=0.02)


def make_episode(episode_id: int, length: int | None = None) -> Episode:
    rng = np.random.default_rng(episode_id)
    n = length if length is not None else int(rng.integers(10, 30))
    return Episode(
        obs={"proprio": 5 + 3 * rng.normal(size=(n, 3)), "extero": rng.normal(size=(n, 2, 2))},
        actions=rng.normal(size=(n, 2)),
        commands=rng.normal(size=(n, 1)),
        rewards=rng.normal(size=n),
        values=100 + rng.normal(size=n),
        expert=rng.random(n) < 0.5,
        episode_id=episode_id,
        meta={"source": "sim", "seed": episode_id, "dt": 0.02},
    )


def assert_same(a: Episode, b: Episode) -> None:
    assert a.episode_id == b.episode_id and a.meta == b.meta
    for k, v in a.arrays().items():
        np.testing.assert_array_equal(b.arrays()[k], v)
        assert b.arrays()[k].dtype == v.dtype


def test_round_trip_several_shards(tmp_path) -> None:
    eps = [make_episode(i) for i in range(10)]
    with EpisodeWriter(tmp_path, SPEC, max_episodes_per_shard=4, metadata={"task": "toy"}) as w:
        for ep in eps:
            assert w.write(ep)
        assert not w.write(make_episode(99, length=0)) or True
    names = sorted(os.listdir(tmp_path))
    assert names == ["dataset.json", "episodes-000000.tar", "episodes-000001.tar", "episodes-000002.tar"]
    info = read_dataset_info(tmp_path)
    assert [s["episodes"] for s in info["shards"]] == [4, 4, 2]
    assert info["shards"][1]["episode_ids"] == [4, 5, 6, 7]
    assert info["num_episodes"] == 10 and info["num_steps"] == sum(len(e) for e in eps)
    assert info["spec"] == SPEC.to_dict() and info["metadata"] == {"task": "toy"}
    assert info["schema_version"] == 1 and info["dropped_episodes"] == 1
    back = list(iter_episodes(tmp_path, shuffle_shards=False))
    assert len(back) == 10
    for a, b in zip(eps, back):
        assert_same(a, b)
    # brace pattern and list of urls give the same shards
    assert resolve_urls(str(tmp_path / "episodes-{000000..000002}.tar")) == resolve_urls(tmp_path)
    assert len(list(iter_episodes([str(tmp_path / "episodes-000001.tar")], shuffle_shards=False))) == 4
    # shard shuffling is a deterministic permutation
    a = [e.episode_id for e in iter_episodes(tmp_path, shuffle_shards=True, seed=3)]
    b = [e.episode_id for e in iter_episodes(tmp_path, shuffle_shards=True, seed=3)]
    assert a == b and sorted(a) == list(range(10))


def test_split_by_node(tmp_path, monkeypatch) -> None:
    with EpisodeWriter(tmp_path, SPEC, max_episodes_per_shard=2) as w:
        for i in range(8):
            w.write(make_episode(i))
    seen = []
    monkeypatch.setenv("WORLD_SIZE", "2")
    for rank in (0, 1):
        monkeypatch.setenv("RANK", str(rank))
        seen.append({e.episode_id for e in iter_episodes(tmp_path, shuffle_shards=True, seed=1)})
    assert not seen[0] & seen[1] and seen[0] | seen[1] == set(range(8))


def test_resume_after_interrupted_write(tmp_path) -> None:
    w = EpisodeWriter(tmp_path, SPEC, max_episodes_per_shard=3, metadata={"run": 1})
    for i in range(5):  # one complete shard (0, 1, 2) and an open one (3, 4)
        w.write(make_episode(i))
    assert os.path.exists(tmp_path / "episodes-000001.tar.tmp")
    del w  # "crash": the open shard is never closed
    w = EpisodeWriter(tmp_path, SPEC, max_episodes_per_shard=3, metadata={"run": 2})
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert w.completed_episode_ids == {0, 1, 2}
    with w:
        for i in range(8):
            if i not in w.completed_episode_ids:
                w.write(make_episode(i))
        with pytest.raises(DataError, match="already written"):
            w.write(make_episode(1))
    info = read_dataset_info(tmp_path)
    assert [s["name"] for s in info["shards"]] == [f"episodes-00000{i}.tar" for i in range(3)]
    assert info["metadata"] == {"run": 2} and info["num_episodes"] == 8
    ids = sorted(e.episode_id for e in iter_episodes(tmp_path, shuffle_shards=False))
    assert ids == list(range(8))
    # stats survive the resume: equal to stats computed from scratch
    ref = compute_stats(make_episode(i) for i in range(8))
    for k in ref.keys():
        np.testing.assert_allclose(load_stats(tmp_path).mean[k], ref.mean[k], rtol=1e-6, atol=1e-6)


def test_recover_shard_missing_from_info(tmp_path) -> None:
    with EpisodeWriter(tmp_path, SPEC, max_episodes_per_shard=2) as w:
        for i in range(4):
            w.write(make_episode(i))
    info = json.loads((tmp_path / "dataset.json").read_text())
    info["shards"] = info["shards"][:1]  # crash between rename and dataset.json rewrite
    (tmp_path / "dataset.json").write_text(json.dumps(info))
    w = EpisodeWriter(tmp_path, SPEC, max_episodes_per_shard=2)
    assert w.completed_episode_ids == {0, 1, 2, 3} and w.num_shards == 2
    w.write(make_episode(4))
    w.close()
    assert os.path.exists(tmp_path / "episodes-000002.tar")


def test_dropped_and_spec_mismatch(tmp_path) -> None:
    bad = make_episode(2)
    bad.actions[0, 0] = np.nan
    with EpisodeWriter(tmp_path, SPEC, min_length=15, drop_invalid=True) as w:
        assert w.write(make_episode(0, length=20))
        assert not w.write(make_episode(1, length=5))
        with pytest.warns(UserWarning, match="NaN"):
            assert not w.write(bad)
    info = read_dataset_info(tmp_path)
    assert info["dropped_episodes"] == 2 and info["dropped_episode_ids"] == [1, 2]
    assert EpisodeWriter(tmp_path, SPEC).completed_episode_ids == {0, 1, 2}
    other = DatasetSpec(obs={"state": (4,)}, action_dim=1)
    with pytest.raises(DataError, match="existing spec"):
        EpisodeWriter(tmp_path, other)
    with pytest.raises(DataError, match="NaN"), EpisodeWriter(tmp_path / "strict", SPEC) as w:
        w.write(bad)


def test_stats_against_numpy(tmp_path) -> None:
    eps = [make_episode(i) for i in range(7)]
    with EpisodeWriter(tmp_path, SPEC, max_episodes_per_shard=3) as w:
        for ep in eps:
            w.write(ep)
    stored = Stats.from_dict(read_dataset_info(tmp_path)["stats"])
    computed = compute_stats(eps)
    cat = {
        "obs/proprio": np.concatenate([e.obs["proprio"] for e in eps]),
        "obs/extero": np.concatenate([e.obs["extero"] for e in eps]),
        "actions": np.concatenate([e.actions for e in eps]),
        "commands": np.concatenate([e.commands for e in eps]),
        "rewards": np.concatenate([e.rewards for e in eps])[:, None],
        "values": np.concatenate([e.values for e in eps])[:, None],
    }
    assert set(stored.keys()) == set(cat)
    for k, x in cat.items():
        x64 = x.astype(np.float64)
        std = np.sqrt(np.maximum(x64.var(axis=0), 1e-8))
        for s in (stored, computed):
            assert s.mean[k].shape == x.shape[1:]
            np.testing.assert_allclose(s.mean[k], x64.mean(axis=0), rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(s.std[k], std, rtol=1e-6)
    assert stored.mean["rewards"].shape == (1,)
    # constant dimension: std floored at sqrt(1e-8); no data: mean 0, std 1
    acc = RunningStats()
    acc.update("c", np.ones((5, 2)))
    acc.update("e", np.zeros((0, 3)))
    st = acc.finalize()
    np.testing.assert_allclose(st.std["c"], 1e-4)
    np.testing.assert_array_equal(st.std["e"], np.ones(3))
    back = Stats.from_dict(json.loads(json.dumps(st.to_dict())))
    np.testing.assert_array_equal(back.mean["c"], st.mean["c"])


def test_recorder_staggered_episodes(tmp_path) -> None:
    spec = DatasetSpec(obs={"state": (2,)}, action_dim=1, command_dim=0, dt=0.01)
    rec = EpisodeRecorder(3, spec, first_episode_id=100)
    for t in range(10):
        obs = {"state": np.stack([np.full(2, 10 * e + t) for e in range(3)])}
        rec.record(obs, np.arange(3)[:, None] + t, rewards=np.full(3, t), expert=np.ones(3, bool))
        if t == 3:
            (ep,) = rec.finish([1], [{"policy": "expert"}])
            assert ep.episode_id == 100 and len(ep) == 4 and ep.meta["env_id"] == 1
            np.testing.assert_array_equal(ep.obs["state"][:, 0], 10 + np.arange(4))
    assert rec.lengths.tolist() == [10, 6, 10]
    eps = rec.finish(np.array([0, 1]), {"policy": "noisy"})
    assert [e.episode_id for e in eps] == [101, 102] and [len(e) for e in eps] == [10, 6]
    np.testing.assert_array_equal(eps[1].obs["state"][:, 1], 10 + np.arange(4, 10))
    np.testing.assert_array_equal(eps[1].rewards, np.arange(4, 10))
    assert eps[0].commands.shape == (10, 0) and not eps[0].values.any() and eps[0].expert.all()
    assert rec.finish([0]) == []
    with EpisodeWriter(tmp_path, spec) as w:
        for e in eps:
            w.write(e)
    assert [e.meta["policy"] for e in iter_episodes(tmp_path, shuffle_shards=False)] == ["noisy"] * 2


@pytest.mark.parametrize("damage", ["truncate", "garbage", "noise"])
def test_corrupt_shard_names_the_shard_and_the_last_good_episode(tmp_path, damage: str) -> None:
    with EpisodeWriter(tmp_path, SPEC, max_episodes_per_shard=10) as w:
        for i in range(4):
            w.write(make_episode(i, length=200))
    shard = tmp_path / "episodes-000000.tar"
    data = shard.read_bytes()
    if damage == "truncate":
        shard.write_bytes(data[: len(data) * 3 // 5])
    elif damage == "garbage":
        shard.write_bytes(data[: len(data) // 2] + os.urandom(4096) + data[len(data) // 2 + 4096:])
    else:
        shard.write_bytes(os.urandom(len(data)))
    with pytest.raises(DataError, match=r"shard .*episodes-000000\.tar(: unreadable| key 'ep\d+')"):
        list(iter_episodes(str(tmp_path), shuffle_shards=False, split_by_node=False, split_by_worker=False))


def test_folder_without_index_says_what_is_missing(tmp_path) -> None:
    with pytest.raises(DataError, match="not a dataset"):
        resolve_urls(str(tmp_path))
    with EpisodeWriter(tmp_path / "part-0000", SPEC) as w:
        w.write(make_episode(0))
    with pytest.raises(DataError, match="part folders \\(part-0000\\).*rerun the same `simdist generate`"):
        resolve_urls(str(tmp_path))
    from simdist.data import TrajectoryDataModule

    with pytest.raises(DataError, match="part folders"):
        TrajectoryDataModule(str(tmp_path), history=2, horizon=2, batch_size=2).setup("fit")
