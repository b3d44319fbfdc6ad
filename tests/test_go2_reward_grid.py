"""Table I's quadruped metric: the reward grid's envs, scores and command-line checks."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from simdist.components.tasks.go2.reward_grid import RewardGrid, grid_env, run_reward_grid
from simdist.components.tasks.go2.task import Go2Task
from simdist.tasks import TaskError

SMALL = RewardGrid(speeds=(0.4, 0.8), frictions=(0.3, 1.0), terrains=("boxes", "pyramid_stairs"),
                   difficulties=(0.5,), steps=40)


def test_every_cell_gets_its_tile_friction_and_command():
    env = grid_env(SMALL)
    env.reset(seed=0)
    cells = SMALL.cells
    assert env.num_envs == len(cells) == 8
    x, y = env.terrain.tile_center(np.zeros(8, int), env.terrain_col)
    assert np.allclose(env.base_pos[:, :2], np.stack([x, y], 1))  # the first tile of its strip, no jitter
    for i, (speed, friction, terrain, _) in enumerate(cells):
        assert env.terrain.col_types[env.terrain_col[i]] == terrain
        assert env.params.friction[i] == pytest.approx(friction)
        assert np.allclose(env.commands.command[i], [speed, 0.0, 0.0])
    # the strip is long enough for the fastest cell: 0.8 m/s x 0.8 s from the first tile's centre
    assert SMALL.strip_tiles * SMALL.tile_size >= 0.5 * SMALL.tile_size + 0.8 * 40 * 0.02
    env.close()


def test_strips_keep_their_difficulty():
    """A strip's tiles all have its difficulty: harder pyramid stairs rise higher over the whole strip."""
    grid = RewardGrid(speeds=(0.5,), frictions=(0.8,), terrains=("pyramid_stairs",), difficulties=(0.1, 0.9),
                      steps=500)
    env = grid_env(grid)
    t, n = env.terrain, int(round(grid.tile_size / env.terrain.resolution))
    border = int(round(t._border() / t.resolution))
    spans = [np.ptp(t.heights[border + j * n: border + (j + 1) * n, border: border + grid.strip_tiles * n])
             for j in range(2)]
    assert spans[1] > 3 * spans[0] > 0
    env.close()


def test_scores_are_the_env_reward_summed_until_failure():
    """A zero-action policy's score equals the env's own reward summed while the episode runs."""
    grid = RewardGrid(speeds=(0.5,), frictions=(0.8,), terrains=("boxes", "random_rough"), difficulties=(0.3,),
                      steps=60)

    def stand(obs):
        return np.zeros((len(obs["proprio"]), 12), np.float32)

    result = run_reward_grid(stand, grid, seed=3)
    env = grid_env(grid, seed=3)
    env.reset(seed=3)
    total, active = np.zeros(env.num_envs), np.ones(env.num_envs, bool)
    for _ in range(grid.steps):
        res = env.step(np.zeros((env.num_envs, 12), np.float32))
        total += np.where(active, res.reward, 0.0)
        active &= ~res.terminated
    env.close()
    assert result.metric == "episode_reward" and result.trials == 2
    assert np.allclose(result.values, total)
    assert result.success == active.tolist()
    assert result.groups == ["boxes", "random_rough"]
    assert result.details["cells"][1] == {"speed": 0.5, "friction": 0.8, "terrain": "random_rough",
                                          "difficulty": 0.3}
    # standing still under a walking command earns less than the tracking terms' maximum
    assert max(result.values) < grid.steps * 0.02 * (1.5 + 0.75)


@pytest.mark.parametrize("kwargs, message", [
    ({"speeds": ()}, "speeds is empty"),
    ({"frictions": (0.0,)}, "positive"),
    ({"difficulties": (1.5,)}, r"\[0, 1\]"),
    ({"terrains": ("lava",)}, "unknown terrain"),
    ({"steps": 0}, "steps"),
])
def test_bad_grids_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RewardGrid(**kwargs)


def _args(**kw) -> argparse.Namespace:
    base = {"reward_grid": False, "grid_speeds": None, "grid_frictions": None, "grid_terrains": None,
            "grid_difficulties": None, "grid_steps": None}
    return argparse.Namespace(**{**base, **kw})


def test_command_line_grid_options():
    task = Go2Task.from_args(_args(reward_grid=True, grid_speeds="0.2,0.4", grid_terrains="boxes", grid_steps=50),
                             "evaluate")
    assert task.reward_grid.speeds == (0.2, 0.4) and task.reward_grid.terrains == ("boxes",)
    assert task.reward_grid.steps == 50 and task.profile is None
    with pytest.raises(TaskError, match="--grid-speeds"):
        Go2Task.from_args(_args(reward_grid=True, grid_speeds="fast"), "evaluate")
    with pytest.raises(TaskError, match="with --reward-grid only"):
        Go2Task.from_args(_args(grid_frictions="0.5"), "evaluate")
    with pytest.raises(TaskError, match="drop --profile"):
        Go2Task.from_args(_args(reward_grid=True), "evaluate", profile="foam")


def test_env_refuses_tiles_it_cannot_place():
    from simdist.components.tasks.go2.env import Go2Env

    with pytest.raises(ValueError, match="needs tiles"):
        Go2Env(2, terrain="rough", terrain_mode="fixed")
    with pytest.raises(ValueError, match="tile grid"):
        Go2Env(2, terrain="flat", terrain_mode="fixed", tiles=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="outside the 10 x 12 grid"):
        Go2Env(2, terrain="rough", terrain_mode="fixed", tiles=np.array([[0, 0], [0, 12]]))
    with pytest.raises(ValueError, match="friction must be"):
        Go2Env(2, friction=np.array([0.5, np.nan]))
