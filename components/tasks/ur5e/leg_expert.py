"""The table leg's scripted expert: pick the leg off its rack, put its stud on the thread, twist it home.

:class:`LegExpert` is a :class:`~.expert.ScriptedExpert` with its own phase machine (same phase names, batched
numpy, observation groups only):

1. ``approach`` / ``descend`` / ``close`` / ``lift``: top-down grasp of the leg on the rack, the fingers on
   two faces (yaw aligned mod 90 degrees).
2. ``carry``: above the hole, the stud tip 15 mm over the entrance, correcting for the in-hand offset, while
   winding wrist 3 towards the end of its range that the tightening turn moves away from (the leg is round
   where it threads, so its yaw is free): one regrasp then covers a 2-turn thread.
3. ``insert``: down in steps (with the spiral search when the descent stalls) until the thread engages
   (object obs 28).
4. ``twist``: turn clockwise seen from above (TCP yaw decreasing, wrist 3 increasing) while pressing lightly,
   the TCP orbiting the leg's axis so an in-hand offset does not drag the leg sideways.
5. ``regrasp_open`` / ``regrasp_turn``: when wrist 3 nears its limit, open, turn back by a multiple of 90
   degrees that covers the remaining thread (or as far as the range allows), centre on the leg, close, and
   continue twisting.
6. ``release`` once the thread is in (object obs 27 >= 1 - 0.08 ``release_at`` / engagement; 0.2 mm by
   default), then ``done`` (up and away).

Parameters are :class:`~.expert.ExpertParams` (so every degraded variant applies: speed cap, aim bias,
spiral, early release, late close, a yaw offset on the grasp, hesitation, sluggish yaw, under-twisting /
no regrasp, integral action) plus the leg's :class:`LegExpertParams`. ``twist_turns`` is the wrist's turning
budget (turns of wrist 3 while twisting) before the expert gives up and lets go. A grasp that slips while
twisting (the fingers cammed open by the turning square, or closed on nothing) is regrasped in place.
:func:`leg_expert_variants` adds ``retuned``, the expert adjusted for ``table-leg-real``
(``make_expert(LegAssembly(), "retuned")``, ``--agent scripted:retuned``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from simdist.components.tasks.ur5e.expert import (
    APPROACH,
    CARRY,
    DESCEND,
    DONE,
    INSERT,
    REGRASP_OPEN,
    REGRASP_TURN,
    RELEASE,
    TWIST,
    ExpertParams,
    ScriptedExpert,
    _square_yaw,
    _yaw,
)
from simdist.components.tasks.ur5e.threading import ThreadParams

#: wrist 3's joint range is +-WRIST_LIMIT; pointing down, wrist 3 = shoulder pan - TCP yaw, so the tightening
#: turn (clockwise from above, TCP yaw decreasing) raises wrist 3 towards +WRIST_LIMIT
WRIST_LIMIT = 2 * np.pi
QUARTER = np.pi / 2


@dataclass(frozen=True)
class LegExpertParams(ExpertParams):
    """The leg expert's extra knobs (defaults: the expert)."""

    twist: bool = True
    twist_rate: float = 0.9  # twist per step as a fraction of the yaw action's scale
    press: float = 0.002  # the TCP target this far below the TCP while twisting (m; ~2 N at nominal gains)
    prewind: bool = True  # wind wrist 3 back during the carry
    limit_margin: float = 0.3  # regrasp this close to wrist 3's limit (rad)
    start_margin: float = 0.35  # wind (and turn back) to this far from the other limit (rad)
    slack: float = 0.6  # extra turn-back beyond the thread's remaining turn (rad)


def as_leg_params(params: ExpertParams) -> LegExpertParams:
    if isinstance(params, LegExpertParams):
        return params
    return LegExpertParams(**{f.name: getattr(params, f.name) for f in fields(ExpertParams)})


def leg_expert_variants() -> list[LegExpertParams]:
    """The leg's named policies beyond the degraded ladder: ``retuned``, the expert retuned for
    ``table-leg-real``: integral action on the position error while positioning (its sticky joints otherwise
    stall the arm short of the grasp and carry tolerances) and a 3-turn twisting budget (its pitch error
    needs more turns, and a slipping grasp turns the wrist more than the leg)."""
    return [LegExpertParams(name="retuned", twist_turns=3.0, integral=0.5)]


class LegExpert(ScriptedExpert):
    """Batched scripted expert for ``ur5e-table-leg`` (see the module docstring)."""

    centred_descent = True
    held_phases = (CARRY, INSERT)

    def __init__(self, params: ExpertParams, assembly: Any, control_hz: int = 5) -> None:
        super().__init__(as_leg_params(params), assembly, control_hz)
        self.p: LegExpertParams
        self.turn_rad = 2 * np.pi * float(assembly.thread_turns())  # the nominal thread, start to seat
        self.engagement = ThreadParams().engagement

    # ---- state --------------------------------------------------------------------------------------
    def _ensure(self, n: int) -> None:
        new = len(self.phase) != n
        super()._ensure(n)
        if new or not hasattr(self, "w_goal"):
            self.w_goal = np.zeros(n)
            self.close_t = np.zeros(n, np.int64)
            self.lost = np.zeros(n, np.int64)
            self.w_last = np.zeros(n)

    def reset(self, ids: np.ndarray | None = None, seed: int | None = None) -> None:
        super().reset(ids, seed)
        if len(self.phase) == 0 or not hasattr(self, "w_goal"):
            return
        ids = np.arange(len(self.phase)) if ids is None else np.asarray(ids, np.int64)
        self.w_goal[ids] = 0.0
        self.close_t[ids] = 0
        self.lost[ids] = 0
        self.w_last[ids] = np.inf  # no turn counted on an episode's first step

    # ---- acting -------------------------------------------------------------------------------------
    def __call__(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        sc = self._observe(obs)
        tcp, rot, obj, goal = sc.tcp, sc.rot, sc.obj, sc.goal
        n, p = len(tcp), self.p
        wrist3 = sc.proprio[:, 5]
        opening = sc.proprio[:, 21]
        depth = sc.objs[:, 27]
        engaged = sc.objs[:, 28] > 0.5
        obj_yaw, tcp_yaw = _yaw(sc.obj_rot), _yaw(rot)

        target = tcp.copy()
        yaw_t = tcp_yaw.copy()
        grip = np.ones(n)  # +1 close, -1 open
        ph = self.phase
        self.timer += 1
        g = self.grasp_offset
        self._grasp(ph, tcp, obj, obj_yaw + p.yaw_offset, tcp_yaw, target, yaw_t, grip)
        m = ph == CARRY
        if m.any():
            aim = goal[:, :2] + np.asarray(p.aim_bias)
            off = tcp[:, :2] - obj[:, :2]
            target[m, :2] = aim[m] + off[m]
            far = np.linalg.norm(obj[:, :2] - aim, axis=1)
            # the stud tip 15 mm above the entrance; higher while still far from the hole
            z_final = goal[:, 2] + self.insert_depth + 0.015 + (tcp[:, 2] - obj[:, 2])
            target[m, 2] = (z_final + np.clip(far - 0.01, 0.0, 0.05))[m]
            if p.prewind:
                w_start = -(WRIST_LIMIT - p.start_margin)
                yaw_t[m] = tcp_yaw[m] + self._w_to_yaw(w_start - wrist3[m])
                wound = np.abs(wrist3 - w_start) < 0.1
            else:
                wound = np.ones(n, bool)
            ok = m & (far < 0.0015) & (np.abs(tcp[:, 2] - z_final) < 0.005) & wound
            self._go(ok, INSERT)
        m = ph == INSERT
        if m.any():
            self._insert_leg(m, tcp, obj, goal, target)
            self._go(m & engaged, TWIST)
        m = ph == TWIST
        if m.any():
            self._twist_leg(m, tcp, obj, target, yaw_t, tcp_yaw, wrist3, depth, engaged, opening)
        m = ph == REGRASP_OPEN
        if m.any():
            grip[m] = -1
            opened = m & ((opening > self.held_opening + 0.15) | (self.timer > 4)) & (self.timer > 1)
            if opened.any():
                self._plan_turn_back(opened, wrist3, tcp_yaw, obj_yaw, depth)
            self._go(opened, REGRASP_TURN)
        m = ph == REGRASP_TURN
        if m.any():
            grip[m] = -1
            target[m, :2] = obj[m, :2]
            target[m, 2] = obj[m, 2] + g
            yaw_t[m] = tcp_yaw[m] + self._w_to_yaw(self.w_goal[m] - wrist3[m])
            there = m & (np.abs(wrist3 - self.w_goal) < 0.05) & (
                np.linalg.norm(tcp[:, :2] - obj[:, :2], axis=1) < 0.002) & (np.abs(tcp[:, 2] - obj[:, 2] - g) < 0.003)
            there |= m & (self.timer > 30)  # blocked: close where it is
            self.close_t = np.where(there | (m & (self.close_t > 0)), self.close_t + 1, self.close_t)
            closing = m & (self.close_t > 0)
            grip[closing] = 1
            self._go(m & (self.close_t > p.close_delay + 2), TWIST)
        m = ph == RELEASE
        if m.any():
            grip[m] = -1
            target[m, 2] = tcp[m, 2] + np.where(self.timer[m] > 1, 0.01, 0.0)
            self._go(m & (self.timer > 2), DONE)
        m = ph == DONE
        if m.any():
            grip[m] = -1
            target[m, 2] = np.minimum(tcp[m, 2] + 0.005, 0.2)

        self.w_last = wrist3.copy()
        return self._action(sc, target, yaw_t, tcp_yaw, grip)

    # ---- pieces -------------------------------------------------------------------------------------
    def _integral(self, err: np.ndarray) -> np.ndarray:
        """``err`` plus the integral action while positioning (reset on entering a phase), leaky and capped."""
        pos = np.isin(self.phase, (APPROACH, DESCEND, CARRY, REGRASP_TURN)) & (self.timer > 1)
        self.integ = np.where(pos[:, None], np.clip(0.85 * self.integ + self.p.integral * err, -0.01, 0.01), 0.0)
        return err + self.integ

    def _w_to_yaw(self, dw: np.ndarray) -> np.ndarray:
        """The TCP yaw change for a wrist-3 change ``dw`` (wrist 3 = pan - yaw), capped to one step's worth."""
        return np.clip(-dw, -self.scale[5], self.scale[5])

    def _spiral(self, run: np.ndarray) -> np.ndarray:
        """The leg's search offset: a spiral whose radius grows ``spiral_step`` and angle 1.2 rad per step."""
        p = self.p
        self.spiral_t = np.where(run, self.spiral_t + 1, self.spiral_t)
        radius = np.minimum(p.spiral_step * self.spiral_t, p.spiral_max)
        ang = 1.2 * self.spiral_t
        return np.column_stack([radius * np.cos(ang), radius * np.sin(ang)])

    def _insert_leg(self, m, tcp, obj, goal, target) -> None:
        self._servo_down(m, tcp, obj, goal, target)
        target[m, 2] = tcp[m, 2] - self.p.descend_step

    def _twist_leg(self, m, tcp, obj, target, yaw_t, tcp_yaw, wrist3, depth, engaged, opening) -> None:
        p = self.p
        step = p.twist_rate * self.scale[5]
        at_limit = wrist3 > WRIST_LIMIT - p.limit_margin
        turn = m & engaged & ~at_limit
        if turn.any():
            # tighten: TCP yaw down; the TCP orbits the leg's axis so the leg turns in place
            c, s = np.cos(-step), np.sin(-step)
            arm = tcp[turn, :2] - obj[turn, :2]
            target[turn, :2] = obj[turn, :2] + arm @ np.array([[c, s], [-s, c]])
            yaw_t[turn] = tcp_yaw[turn] - step
        target[m, 2] = tcp[m, 2] - p.press
        # the turning budget counts wrist 3's actual tightening turn (the leg turns less if the grasp slips)
        self.twisted[m] += np.clip(wrist3 - self.w_last, 0.0, 2 * step)[m] / (2 * np.pi)
        self.lost = np.where(m & ~engaged, self.lost + 1, np.where(m, 0, self.lost))
        home = 1.0 - 0.08 * p.release_at / self.engagement
        done = m & (depth >= home)
        self._go(done, RELEASE)
        lost = m & ~done & (self.lost > 2)
        self._go(lost, INSERT)
        gave_up = m & ~done & ~lost & ((self.twisted > p.twist_turns) | (at_limit & (not p.regrasp)))
        self._go(gave_up, RELEASE)
        # the grasp is gone when the fingers closed on nothing or the turning square cammed them open
        slipped = (opening < self.held_opening - 0.12) | (opening > self.held_opening + 0.05)
        if p.regrasp:
            self._go(m & ~done & ~lost & ~gave_up & (at_limit | (slipped & (self.timer > 2))), REGRASP_OPEN)

    def _plan_turn_back(self, m, wrist3, tcp_yaw, obj_yaw, depth) -> None:
        """Wrist-3 goal of the regrasp turn: the fingers square on the leg's faces again (a whole number of
        quarter turns from the alignment nearest to now), turned back just far enough that the rest of the
        thread (plus slack) fits before the limit, else as far back as the range allows; never past it."""
        p = self.p
        hi, lo = WRIST_LIMIT - p.limit_margin, -WRIST_LIMIT + p.start_margin
        need = (1.0 - depth) * self.turn_rad + p.slack
        base = wrist3 - _square_yaw(obj_yaw - tcp_yaw, np.zeros_like(tcp_yaw))
        k_need = np.ceil((base - (hi - need)) / QUARTER - 1e-9)  # fewest quarters back leaving `need` of travel
        k_hi = np.ceil((base - hi) / QUARTER - 1e-9)  # at least this many to be below the regrasp limit
        k_lo = np.floor((base - lo) / QUARTER + 1e-9)  # at most this many to stay above the other limit
        k = np.minimum(np.maximum(np.maximum(k_need, 0.0), k_hi), k_lo)
        self.w_goal[m] = np.clip(base - k * QUARTER, -WRIST_LIMIT + 0.1, WRIST_LIMIT - 0.1)[m]
        self.close_t[m] = 0


__all__ = ["LegExpert", "LegExpertParams", "as_leg_params", "leg_expert_variants"]
