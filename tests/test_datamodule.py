"""Windows index arithmetic, episode-level held-out split and the TrajectoryDataModule."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from simdist.data import (
    DatasetSpec,
    Episode,
    EpisodeWriter,
    TrajectoryDataModule,
    compute_stats,
    gather_windows,
    iter_episodes,
    num_windows,
    window_at,
    window_starts,
)

H, T = 4, 3
SPEC = DatasetSpec(obs={"proprio": (3,), "extero": (2, 2)}, action_dim=2, command_dim=1, dt=0.02)


def index_episode(episode_id: int, length: int, command_dim: int = 1) -> Episode:
    """Every array encodes ``1000 * episode_id + step`` (plus a per-dimension offset)."""
    i = (1000 * episode_id + np.arange(length, dtype=np.float64))[:, None]
    return Episode(
        obs={"proprio": i + np.arange(3) / 10, "extero": (i + np.arange(4) / 10).reshape(length, 2, 2)},
        actions=i + np.arange(2) / 10,
        commands=np.repeat(i, command_dim, axis=1),
        rewards=i[:, 0],
        values=i[:, 0],
        expert=np.arange(length) % 2 == 0,
        episode_id=episode_id,
        meta={"dt": 0.02},
    )


@pytest.fixture(scope="module")
def shard_dir(tmp_path_factory) -> str:
    """40 episodes of length 20..39 in 5 shards."""
    d = tmp_path_factory.mktemp("wm_data")
    with EpisodeWriter(d, SPEC, max_episodes_per_shard=8) as w:
        for e in range(40):
            w.write(index_episode(e, 20 + e % 20))
    return str(d)


def expected_windows(ids, front: int = 0) -> set[tuple[int, int]]:
    """(episode id, current step t) of every window, t counted in the unpadded episode."""
    out = set()
    for e in ids:
        for s in window_starts(20 + e % 20 + front, H, T):
            out.add((e, int(s) + H - front))
    return out


def f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def batch_windows(batches) -> list[tuple[int, int]]:
    out = []
    for b in batches:
        cur = b["obs_hist"]["proprio"][:, -1, 0].numpy()
        out += [(int(round(c)) // 1000, int(round(c)) % 1000) for c in cur]
    return out


def test_window_starts_count() -> None:
    assert window_starts(100).tolist() == list(range(5, 45))
    for L in (0, 50, 59, 60, 61, 200):
        assert len(window_starts(L)) == max(0, L - 60) == num_windows(L)
    assert len(window_starts(10, 2, 3, beg_pad=0, end_pad=0)) == 5


@pytest.mark.parametrize("value_offset", [0, 1])
@pytest.mark.parametrize("end_pad", [5, 0])
def test_window_index_arithmetic(value_offset: int, end_pad: int) -> None:
    L = 30
    ep = index_episode(2, L)
    starts = window_starts(L, H, T, beg_pad=5, end_pad=end_pad)
    assert starts[0] == 5 and starts[-1] == L - (H + T + end_pad) - 1
    w = gather_windows(ep, starts, H, T, value_offset)
    base = 2000.0
    for n, s in enumerate(starts):
        t = s + H
        eq = np.testing.assert_array_equal
        eq(w["obs_hist"]["proprio"][n, :, 0], f32(base + np.arange(s, t + 1)))
        eq(w["obs_hist"]["extero"][n, :, 1, 1], f32(base + np.arange(s, t + 1) + 0.3))
        eq(w["act_hist"][n, :, 1], f32(base + np.arange(s, t) + 0.1))
        eq(w["fut_acts"][n, :, 0], f32(base + np.arange(t, t + T)))
        eq(w["fut_cmds"][n, :, 0], f32(base + np.arange(t, t + T + 1)))
        eq(w["fut_obs"]["proprio"][n, :, 0], f32(base + np.arange(t + 1, t + T + 1)))
        eq(w["fut_obs"]["extero"][n, :, 0, 0], f32(base + np.arange(t + 1, t + T + 1)))
        np.testing.assert_array_equal(w["rewards"][n], f32(base + np.arange(t, t + T)))
        off = value_offset
        np.testing.assert_array_equal(w["values"][n], f32(base + np.arange(t + off, t + T + off)))
        np.testing.assert_array_equal(w["expert"][n], np.arange(t, t + T) % 2 == 0)
        one = window_at(ep, s, H, T, value_offset)
        for k in ("act_hist", "fut_acts", "fut_cmds", "rewards", "values", "expert"):
            np.testing.assert_array_equal(one[k], w[k][n])
        for g in ep.obs:
            np.testing.assert_array_equal(one["obs_hist"][g], w["obs_hist"][g][n])
            np.testing.assert_array_equal(one["fut_obs"][g], w["fut_obs"][g][n])
    shapes = {k: v.shape for k, v in w.items() if not isinstance(v, dict)}
    n = len(starts)
    assert shapes == {
        "act_hist": (n, H, 2), "fut_acts": (n, T, 2), "fut_cmds": (n, T + 1, 1),
        "rewards": (n, T), "values": (n, T), "expert": (n, T),
    }
    assert w["obs_hist"]["extero"].shape == (n, H + 1, 2, 2) and w["fut_obs"]["proprio"].shape == (n, T, 3)


def test_windows_without_commands() -> None:
    ep = index_episode(0, 30, command_dim=0)
    w = gather_windows(ep, window_starts(30, H, T), H, T)
    assert w["fut_cmds"].shape == (len(window_starts(30, H, T)), T + 1, 0)


def test_heldout_split_is_by_episode(shard_dir) -> None:
    dm = TrajectoryDataModule(shard_dir, heldout_fraction=0.25, history=H, horizon=T)
    train, val = dm.train_episode_ids(), dm.val_episode_ids()
    assert train and val and not train & val and train | val == set(range(40))
    again = TrajectoryDataModule(shard_dir, heldout_fraction=0.25, seed=5)
    assert again.val_episode_ids() == val  # independent of the training seed
    dm.batch_size = 7
    got = batch_windows(dm.val_dataloader())
    assert len(got) == len(set(got)) and set(got) == expected_windows(val)
    got = batch_windows(dm.train_dataloader())
    assert len(got) == len(set(got)) and set(got) == expected_windows(train)


@pytest.mark.parametrize("num_workers", [0, 2])
def test_batches_one_pass(shard_dir, num_workers: int) -> None:
    dm = TrajectoryDataModule(
        shard_dir, heldout_fraction=0.0, history=H, horizon=T, batch_size=16, num_workers=num_workers,
        shuffle_buffer=50,
    )
    batches = list(dm.train_dataloader())
    b = batches[0]
    assert b["obs_hist"]["proprio"].shape == (16, H + 1, 3)
    assert b["obs_hist"]["extero"].shape == (16, H + 1, 2, 2)
    assert b["fut_obs"]["proprio"].shape == (16, T, 3)
    assert b["act_hist"].shape == (16, H, 2) and b["fut_acts"].shape == (16, T, 2)
    assert b["fut_cmds"].shape == (16, T + 1, 1)
    for k in ("rewards", "values", "expert"):
        assert b[k].shape == (16, T) and b[k].dtype == torch.float32
    assert set(b["expert"].unique().tolist()) <= {0.0, 1.0}
    got = batch_windows(batches)
    assert len(got) == len(set(got)) and set(got) == expected_windows(range(40))  # every window once
    assert dm.val_dataloader() == []
    # a single shard and two workers: episodes are split by index instead of by shard
    one = TrajectoryDataModule(
        [f"{shard_dir}/episodes-000001.tar"], heldout_fraction=0.0, history=H, horizon=T, batch_size=8,
        num_workers=num_workers,
    )
    got = batch_windows(one.train_dataloader())
    assert len(got) == len(set(got)) and set(got) == expected_windows(range(8, 16))


def test_determinism_and_epochs(shard_dir) -> None:
    def first_batches(seed: int, num_workers: int = 0):
        dm = TrajectoryDataModule(
            shard_dir, history=H, horizon=T, batch_size=32, num_workers=num_workers, seed=seed,
            shuffle_buffer=100, windows_per_epoch=96,
        )
        loader = dm.train_dataloader()
        assert len(loader) == 3
        return [batch_windows(loader) for _ in range(2)]  # two epochs

    a = first_batches(0)
    assert a == first_batches(0)
    assert a != first_batches(1)
    assert a[0] != a[1]  # each epoch draws a new order
    assert all(len(e) == 96 for e in a)
    w = first_batches(0, num_workers=2)
    assert all(len(e) == 96 for e in w) and w == first_batches(0, num_workers=2)
    # attached to a trainer, the epoch comes from trainer.current_epoch (a resumed run continues)
    dm = TrajectoryDataModule(
        shard_dir, history=H, horizon=T, batch_size=32, windows_per_epoch=96, shuffle_buffer=100
    )
    dm.trainer = SimpleNamespace(current_epoch=1)
    assert batch_windows(dm.train_dataloader()) == a[1]


def test_spec_stats_and_front_pad(shard_dir) -> None:
    dm = TrajectoryDataModule(shard_dir, history=H, horizon=T)
    assert dm.spec == SPEC
    all_eps = list(iter_episodes(shard_dir, shuffle_shards=False))
    ref = compute_stats(all_eps)
    np.testing.assert_allclose(dm.stats.mean["obs/proprio"], ref.mean["obs/proprio"], rtol=1e-6)
    # no dataset.json for a url list: stats computed from the training episodes only
    pat = TrajectoryDataModule(f"{shard_dir}/episodes-{{000000..000004}}.tar", heldout_fraction=0.25)
    train_ids = pat.train_episode_ids()
    train = [e for e in all_eps if e.episode_id in train_ids]
    np.testing.assert_allclose(pat.stats.std["actions"], compute_stats(train).std["actions"], rtol=1e-5)
    padded = TrajectoryDataModule(
        shard_dir, heldout_fraction=0.0, history=H, horizon=T, batch_size=64, front_pad=8
    )
    batches = list(padded.train_dataloader())
    assert len(batch_windows(batches)) == sum(num_windows(20 + e % 20 + 8, H, T) for e in range(40))
    # windows starting at padded steps 5, 6, 7 begin with a copy of the first observation, zero action
    first = torch.cat([b["obs_hist"]["proprio"][:, 0, 0] for b in batches]) % 1000 == 0
    zero_act = torch.cat([b["act_hist"][:, 0, 1] for b in batches]) == 0
    assert int((first & zero_act).sum()) == 3 * 40


def test_data_fraction_is_drawn_by_episode(shard_dir) -> None:
    """Table I's data-scale switch: a seeded fraction of the training episodes; validation unchanged."""
    full = TrajectoryDataModule(shard_dir, heldout_fraction=0.2)
    half = TrajectoryDataModule(shard_dir, heldout_fraction=0.2, data_fraction=0.5, data_fraction_seed=1)
    tenth = TrajectoryDataModule(shard_dir, heldout_fraction=0.2, data_fraction=0.1, data_fraction_seed=1)
    other = TrajectoryDataModule(shard_dir, heldout_fraction=0.2, data_fraction=0.5, data_fraction_seed=2)
    ids = full.train_episode_ids()
    assert tenth.train_episode_ids() <= half.train_episode_ids() < ids  # nested for one seed
    assert 0.25 * len(ids) <= len(half.train_episode_ids()) <= 0.75 * len(ids)
    assert other.train_episode_ids() != half.train_episode_ids()
    assert half.val_episode_ids() == full.val_episode_ids() and not half.val_episode_ids() & ids
    assert half.train_episode_ids() == TrajectoryDataModule(shard_dir, heldout_fraction=0.2, data_fraction=0.5,
                                                            data_fraction_seed=1).train_episode_ids()
    with pytest.raises(ValueError, match="data_fraction"):
        TrajectoryDataModule(shard_dir, data_fraction=0.0)
