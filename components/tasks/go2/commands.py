"""Velocity-command generators: the official six-mode mixture, a fixed command, and the
straight-walk PD command used for evaluation (SIMDIST 4.2, 6.7).

Commands are (v_x, v_y, w_z) in the body/heading frame, float32, shape (B, 3).

Six-mode mixture (``mode="random"``), redrawn per env every ``resample_s`` seconds
with weights [0.3, 0.3, 0.01, 0.1, 0.1, 0.2] (normalised; they sum to 1.01):

0. constant: uniform v_x, v_y, w_z in the ranges, held;
1. heading: uniform v_x, v_y and heading; w_z = clip(0.5 * wrap(heading - yaw));
2. stand: zero;
3. constant acceleration: a ~ U(-(0.5, 0.25, 0.25), +) integrated; a component flips
   sign when its command hits a range bound (our choice, so it keeps moving);
4. random acceleration: a ~ N(0, s) every step, s ~ U([0.5, 0.25, 0.25], [2, 1, 1]);
5. random jerk: j ~ N(0, s) every step, s ~ U([2, 1, 1], [10, 5, 5]); the acceleration
   is clipped to +-(2, 1, 1) (our choice: the official bound is not documented).

All commands are clipped to v_x in [-0.5, 1.5], v_y in [-0.5, 0.5], w_z in [-1, 1].

Walk starts (``walk_start_prob``; our addition, 0 is the official mixture): at an episode start an env
draws, with this probability, mode 6 instead of the mixture (or of the straight walk): a zero command for
``hold_steps`` steps, during which :attr:`CommandGenerator.holding` asks the caller for zero actions (the
evaluation protocol's reset phase: the robot settles under the default joint targets), then the
straight-walk PD command from the pose where walking starts, at a speed drawn from ``walk_speed``
(straight mode: its own speed), until the next resample. The official mixture never holds a settled
stance under a zero command (``stand`` has weight 0.01 and the policy acts throughout), so every
evaluated walk starts from a state the official data does not contain.
"""

from __future__ import annotations

import numpy as np

from simdist.components.tasks.go2.kinematics import wrap_angle

#: Official weights sum to 1.01; they are normalised.
MODE_WEIGHTS = np.array([0.3, 0.3, 0.01, 0.1, 0.1, 0.2])
MODE_PROBS = MODE_WEIGHTS / MODE_WEIGHTS.sum()
MODE_NAMES = ("constant", "heading", "stand", "const_accel", "random_accel", "random_jerk", "walk_start")
WALK_START = 6
#: walk-start defaults: hold randint(10, 41) steps (the protocol holds 25), then walk at U(0.1, 1.0) m/s
WALK_HOLD_STEPS = (10, 41)
WALK_SPEED = (0.1, 1.0)
CMD_LOW = np.array([-0.5, -0.5, -1.0])
CMD_HIGH = np.array([1.5, 0.5, 1.0])
HEADING_STIFFNESS = 0.5
ACC_MAX = np.array([0.5, 0.25, 0.25])
ACC_STD = (np.array([0.5, 0.25, 0.25]), np.array([2.0, 1.0, 1.0]))
JERK_STD = (np.array([2.0, 1.0, 1.0]), np.array([10.0, 5.0, 5.0]))
JERK_ACC_CLIP = np.array([2.0, 1.0, 1.0])


class CommandGenerator:
    """Batched command state; ``mode`` is "random", "fixed" or "straight".

    In "straight" mode ``speed`` is the walking speed, or a (low, high) range drawn per env at each reset.
    """

    def __init__(self, num_envs: int, dt: float, mode: str = "random",
                 fixed: tuple[float, float, float] | np.ndarray = (0.5, 0.0, 0.0),
                 speed: float | tuple[float, float] = 0.5,
                 gains: tuple[float, float, float] = (1.0, 1.0, 1.0), resample_s: float = 10.0,
                 walk_start_prob: float = 0.0, hold_steps: tuple[int, int] = WALK_HOLD_STEPS,
                 walk_speed: tuple[float, float] = WALK_SPEED) -> None:
        if mode not in ("random", "fixed", "straight"):
            raise ValueError(f"unknown command mode {mode!r}; use 'random', 'fixed' or 'straight'")
        self.num_envs, self.dt, self.mode = num_envs, dt, mode
        self.fixed = np.asarray(fixed, dtype=np.float64)
        if self.fixed.shape not in ((3,), (num_envs, 3)):
            raise ValueError(f"fixed command must be (3,) or ({num_envs}, 3), got shape {self.fixed.shape}")
        low, high = (speed, speed) if np.isscalar(speed) else speed
        if not 0.0 <= low <= high:
            raise ValueError(f"straight speed must be >= 0 or a (low, high) range, got {speed!r}")
        self.speed_range = (float(low), float(high))
        if not 0.0 <= walk_start_prob <= 1.0:
            raise ValueError(f"walk_start_prob must be in [0, 1], got {walk_start_prob}")
        if walk_start_prob > 0 and mode == "fixed":
            raise ValueError("walk_start_prob applies to the random and straight command modes")
        if not 0 < hold_steps[0] < hold_steps[1] or not 0.0 <= walk_speed[0] <= walk_speed[1]:
            raise ValueError(f"bad walk-start ranges: hold_steps {hold_steps}, walk_speed {walk_speed}")
        self.walk_start_prob = float(walk_start_prob)
        self.hold_steps, self.walk_speed = (int(hold_steps[0]), int(hold_steps[1])), walk_speed
        self.speed = np.full(num_envs, float(low))
        self.gains = np.asarray(gains, dtype=np.float64)
        self.resample_steps = max(int(round(resample_s / dt)), 1)
        self.command = np.zeros((num_envs, 3))
        self.kind = np.zeros(num_envs, dtype=np.int64)
        self.heading = np.zeros(num_envs)
        self.acc = np.zeros((num_envs, 3))
        self.std = np.zeros((num_envs, 3))
        self.timer = np.zeros(num_envs, dtype=np.int64)
        self.origin = np.zeros((num_envs, 2))  # straight mode: start xy and heading
        self.yaw0 = np.zeros(num_envs)
        self.elapsed = np.zeros(num_envs)
        self.hold = np.zeros(num_envs, dtype=np.int64)  # walk-start steps left to stand still

    # ------------------------------------------------------------------------------
    def reset(self, ids: np.ndarray, rng: np.random.Generator, pos: np.ndarray, yaw: np.ndarray) -> None:
        """Start new commands for ``ids`` given their base xy ``pos`` (n, 2) and ``yaw`` (n,)."""
        self.origin[ids] = pos
        self.yaw0[ids] = yaw
        self.elapsed[ids] = 0.0
        self.hold[ids] = 0
        if self.mode == "random":
            self._resample(ids, rng)
            if self.walk_start_prob > 0:
                self._draw_walk_starts(ids, rng)
        elif self.mode == "fixed":
            self.command[ids] = self.fixed[ids] if self.fixed.ndim == 2 else self.fixed
        else:
            self.command[ids] = 0.0
            low, high = self.speed_range
            self.speed[ids] = rng.uniform(low, high, size=len(ids)) if high > low else low
            self.kind[ids] = 0
            self._straight(ids, pos, yaw)
            if self.walk_start_prob > 0:
                self._draw_walk_starts(ids, rng, draw_speed=False)

    def step(self, rng: np.random.Generator, pos: np.ndarray, yaw: np.ndarray) -> None:
        """Advance all envs by one control period; ``pos`` (B, 2) and ``yaw`` (B,) of every env."""
        self.elapsed += self.dt
        if self.mode == "fixed":
            return
        if self.mode == "straight":
            self._step_walk_starts(pos, yaw)
            rest = np.flatnonzero(self.kind != WALK_START)
            self._straight(rest, pos[rest], yaw[rest])
            return
        self.timer -= 1
        due = np.flatnonzero(self.timer <= 0)
        if len(due):
            self._resample(due, rng)
        self._step_walk_starts(pos, yaw)
        c, k = self.command, self.kind
        m = k == 1
        if m.any():
            c[m, 2] = HEADING_STIFFNESS * wrap_angle(self.heading[m] - yaw[m])
        m = k == 3
        if m.any():
            c[m] += self.acc[m] * self.dt
            a = np.where(c[m] <= CMD_LOW, np.abs(self.acc[m]), self.acc[m])
            self.acc[m] = np.where(c[m] >= CMD_HIGH, -np.abs(a), a)
        m = k == 4
        if m.any():
            c[m] += rng.normal(size=(int(m.sum()), 3)) * self.std[m] * self.dt
        m = k == 5
        if m.any():
            jerk = rng.normal(size=(int(m.sum()), 3)) * self.std[m]
            self.acc[m] = np.clip(self.acc[m] + jerk * self.dt, -JERK_ACC_CLIP, JERK_ACC_CLIP)
            c[m] += self.acc[m] * self.dt
        np.clip(c, CMD_LOW, CMD_HIGH, out=c)

    @property
    def holding(self) -> np.ndarray:
        """(B,) envs in a walk start's standing phase: the next action should be zero."""
        return (self.kind == WALK_START) & (self.hold > 0)

    # ------------------------------------------------------------------------------
    def _draw_walk_starts(self, ids: np.ndarray, rng: np.random.Generator, draw_speed: bool = True) -> None:
        ids = ids[rng.random(len(ids)) < self.walk_start_prob]
        if len(ids):
            self.kind[ids] = WALK_START
            self.hold[ids] = rng.integers(*self.hold_steps, size=len(ids))
            if draw_speed:  # random mode; straight mode keeps its own speed
                self.speed[ids] = rng.uniform(*self.walk_speed, size=len(ids))
            self.command[ids] = 0.0
            self.acc[ids] = 0.0
            self.std[ids] = 0.0

    def _step_walk_starts(self, pos: np.ndarray, yaw: np.ndarray) -> None:
        """Count down the standing phase; walking starts from the pose where it ends."""
        m = self.kind == WALK_START
        if not m.any():
            return
        standing = m & (self.hold > 0)
        self.hold[standing] -= 1
        start = np.flatnonzero(standing & (self.hold == 0))
        self.origin[start], self.yaw0[start], self.elapsed[start] = pos[start], yaw[start], 0.0
        walking = np.flatnonzero(m & (self.hold == 0))
        self.command[standing] = 0.0
        if len(walking):
            self._straight(walking, pos[walking], yaw[walking])

    def _resample(self, ids: np.ndarray, rng: np.random.Generator) -> None:
        n = len(ids)
        self.timer[ids] = self.resample_steps
        kind = rng.choice(len(MODE_PROBS), size=n, p=MODE_PROBS)
        self.kind[ids] = kind
        cmd = rng.uniform(CMD_LOW, CMD_HIGH, size=(n, 3))
        cmd[kind == 2] = 0.0
        self.command[ids] = cmd
        self.heading[ids] = rng.uniform(-np.pi, np.pi, size=n)
        self.acc[ids] = np.where((kind == 3)[:, None], rng.uniform(-ACC_MAX, ACC_MAX, size=(n, 3)), 0.0)
        std = np.zeros((n, 3))
        std[kind == 4] = rng.uniform(*ACC_STD, size=(int((kind == 4).sum()), 3))
        std[kind == 5] = rng.uniform(*JERK_STD, size=(int((kind == 5).sum()), 3))
        self.std[ids] = std

    def _straight(self, ids: np.ndarray, pos: np.ndarray, yaw: np.ndarray) -> None:
        """c = (kx (x_des - x), ky (-y), kyaw (-dpsi)) in the initial-heading frame."""
        d = pos - self.origin[ids]
        c0, s0 = np.cos(self.yaw0[ids]), np.sin(self.yaw0[ids])
        x = c0 * d[:, 0] + s0 * d[:, 1]
        y = -s0 * d[:, 0] + c0 * d[:, 1]
        x_des = self.speed[ids] * self.elapsed[ids]
        self.command[ids, 0] = self.gains[0] * (x_des - x)
        self.command[ids, 1] = self.gains[1] * (-y)
        self.command[ids, 2] = self.gains[2] * (-wrap_angle(yaw - self.yaw0[ids]))
