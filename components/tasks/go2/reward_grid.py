"""Table I's quadruped metric: the mean accumulated reward per episode over a grid of commanded forward speed ×
ground friction × terrain type × terrain difficulty (SIMDIST.md 13 §4.1, App. D).

Every grid cell is one episode of one env: the robot spawns on the first tile of a strip of its terrain type and
difficulty (:func:`~.terrain.make_grid` with per-column difficulties, tiles long enough that it never walks off
its strip), nominal dynamics except the cell's foot friction, commanded ``(speed, 0, 0)`` in the body frame
from the first step (the env's fixed command, so the env's reward tracks it). An episode ends after ``steps``
(1000) control steps or on failure (the env's terminations: base or thigh contact with the ground, tilt,
diverged physics); its score is the env's state-based reward (the expert's reward terms, dt-scaled) summed over
the steps it ran. A diverged episode keeps the reward it had before diverging and counts as a failure.

The paper's grid has 1080 cells, its values are lost (Table X); :class:`RewardGrid`'s default is a reduced
3 × 3 × 6 × 2 = 108 cells over the data engine's ranges (friction 0.2-1.2, the six official terrain types,
difficulty in [0, 1], the evaluation protocol's speeds).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from simdist.components.tasks.go2.robot import CONTROL_DT
from simdist.components.tasks.go2.terrain import OFFICIAL_PROPORTIONS, TERRAIN_TYPES
from simdist.evaluation import EvaluationResult

#: metres of strip kept beyond the furthest a cell's robot can walk in its episode
STRIP_MARGIN = 2.0


@dataclass(frozen=True)
class RewardGrid:
    """The cells: every combination of the four factors, in this nesting order (speed outermost)."""

    speeds: tuple[float, ...] = (0.3, 0.6, 0.9)
    frictions: tuple[float, ...] = (0.3, 0.7, 1.1)
    terrains: tuple[str, ...] = tuple(OFFICIAL_PROPORTIONS)
    difficulties: tuple[float, ...] = (0.25, 0.75)
    steps: int = 1000
    tile_size: float = 8.0

    def __post_init__(self) -> None:
        for name in ("speeds", "frictions", "terrains", "difficulties"):
            if not getattr(self, name):
                raise ValueError(f"reward grid: {name} is empty")
        if min(self.speeds) <= 0 or min(self.frictions) <= 0:
            raise ValueError(f"reward grid: speeds and frictions must be positive, got {self.speeds}, "
                             f"{self.frictions}")
        if not all(0.0 <= d <= 1.0 for d in self.difficulties):
            raise ValueError(f"reward grid: difficulties must lie in [0, 1], got {self.difficulties}")
        unknown = sorted(set(self.terrains) - set(TERRAIN_TYPES))
        if unknown:
            raise ValueError(f"reward grid: unknown terrain types {unknown}; known: {', '.join(TERRAIN_TYPES)}")
        if self.steps < 1:
            raise ValueError(f"reward grid: steps must be >= 1, got {self.steps}")

    @property
    def cells(self) -> list[tuple[float, float, str, float]]:
        """(speed, friction, terrain, difficulty) of every cell."""
        return list(itertools.product(self.speeds, self.frictions, self.terrains, self.difficulties))

    @property
    def strip_tiles(self) -> int:
        """Tiles per strip: from the first tile's centre, room for the fastest cell's whole episode."""
        reach = max(self.speeds) * self.steps * CONTROL_DT + STRIP_MARGIN
        return int(np.ceil(0.5 + reach / self.tile_size))

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def grid_env(grid: RewardGrid, *, seed: int = 0) -> Any:
    """One :class:`Go2Env` with an env per cell: a strip (column) per terrain type and difficulty, each env on
    the first tile of its strip, the cell's friction and commanded speed, nominal everything else."""
    from simdist.components.tasks.go2.env import Go2Env
    from simdist.components.tasks.go2.terrain import make_grid

    strips = list(itertools.product(grid.terrains, grid.difficulties))
    terrain = make_grid(num_rows=grid.strip_tiles, num_cols=len(strips), tile_size=grid.tile_size,
                        types=[t for t, _ in strips], difficulties=[d for _, d in strips], seed=seed)
    cells = grid.cells
    columns = np.array([strips.index((t, d)) for _, _, t, d in cells])
    command = np.array([[v, 0.0, 0.0] for v, _, _, _ in cells])
    return Go2Env(len(cells), terrain=terrain, terrain_mode="fixed",
                  tiles=np.stack([np.zeros_like(columns), columns], axis=1),
                  friction=np.array([f for _, f, _, _ in cells]), command_mode="fixed", fixed_command=command,
                  randomize=False, episode_length_s=grid.steps * CONTROL_DT, seed=seed)


def run_reward_grid(controller: Any, grid: RewardGrid | None = None, *, seed: int = 0, task: str = "go2",
                    log: Callable[[str], None] | None = None) -> EvaluationResult:
    """One episode per cell of ``grid`` with ``controller`` (a world-model planner or agent, or a
    ``policy(obs)`` callable); the result's values are the accumulated rewards, ``success`` is "did not fail",
    groups name the terrain type. Reseeds the controller with ``seed`` first, so a call is reproducible."""
    from simdist.components.tasks.go2.protocol import controller_actions, controller_history
    from simdist.workflows.rollout import reseed

    grid = grid or RewardGrid()
    env = grid_env(grid, seed=seed)
    b = env.num_envs
    reseed(controller, seed)
    try:
        obs = env.reset(seed=seed)
        cmd = env.commands.command.astype(np.float32)
        history = controller_history(controller, obs, cmd)
        total, active = np.zeros(b), np.ones(b, bool)
        failed, diverged, steps = np.zeros(b, bool), np.zeros(b, bool), np.zeros(b, np.int64)
        every = max(grid.steps // 10, 1)
        for t in range(grid.steps):
            actions = controller_actions(controller, history, obs, cmd)
            res = env.step(actions)
            obs = res.obs
            if history is not None:
                history.push(obs, actions, command=cmd if history.command_dim else None)
            blown = active & np.asarray(res.info["diverged"], bool)
            diverged |= blown
            total += np.where(active & ~blown, np.nan_to_num(res.reward.astype(np.float64)), 0.0)
            steps += active
            ended = active & (np.asarray(res.terminated, bool) | blown)
            failed |= ended
            active &= ~ended
            if log is not None and ((t + 1) % every == 0 or not active.any()):
                log(f"step {t + 1}/{grid.steps}: {int(active.sum())}/{b} still walking, "
                    f"mean reward so far {total.mean():.3f}")
            if not active.any():
                break
    finally:
        env.close()
    cells = grid.cells
    details = {"grid": grid.to_dict(), "seed": seed, "steps": steps.tolist(),
               "cells": [{"speed": v, "friction": f, "terrain": k, "difficulty": d} for v, f, k, d in cells]}
    return EvaluationResult(task=task, metric="episode_reward", values=total.tolist(), success=(~failed).tolist(),
                            diverged=diverged.tolist(), groups=[k for _, _, k, _ in cells], profile="reward-grid",
                            details=details)


def parse_floats(text: str | Sequence[float], name: str) -> tuple[float, ...]:
    """``"0.3,0.6"`` (or a sequence) as floats; a ValueError naming the option otherwise."""
    try:
        values = tuple(float(v) for v in (text.split(",") if isinstance(text, str) else text) if str(v).strip())
    except ValueError as err:
        raise ValueError(f"{name}: expected comma-separated numbers, got {text!r}") from err
    if not values:
        raise ValueError(f"{name}: no values in {text!r}")
    return values
