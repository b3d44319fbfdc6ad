"""History/horizon windows over an episode (SIMDIST.md 2.1, 3.5, 4.5).

A window starting at ``s`` has current step ``t = s + H``:

=============  ==============================  ===========
key            indices                         length
=============  ==============================  ===========
``obs_hist``   ``obs[g][s : t+1]``             H + 1
``act_hist``   ``actions[s : t]``              H
``fut_acts``   ``actions[t : t+T]``            T
``fut_cmds``   ``commands[t : t+T+1]``         T + 1
``fut_obs``    ``obs[g][t+1 : t+T+1]``         T (consistency targets)
``rewards``    ``rewards[t : t+T]``            T
``values``     ``values[t+off : t+T+off]``     T
``expert``     ``expert[t : t+T]``             T
=============  ==============================  ===========

``values[i]`` holds V(s_{i+1}), so with ``value_offset=0`` the label paired with the predicted
latent ẑ_{t+k} (k = 1..T) is V(s_{t+k}); ``value_offset=1`` reproduces the official one-step shift.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdist.data.schema import Episode


def _check(history: int, horizon: int, value_offset: int) -> None:
    if history < 0 or horizon < 1:
        raise ValueError(f"need history >= 0 and horizon >= 1, got {history}, {horizon}")
    if value_offset not in (0, 1):
        raise ValueError(f"value_offset must be 0 or 1, got {value_offset}")


def window_starts(
    length: int,
    history: int = 25,
    horizon: int = 25,
    beg_pad: int = 5,
    end_pad: int = 5,
) -> np.ndarray:
    """Valid window starts ``range(beg_pad, length - (history + horizon + end_pad))``.

    An episode of length L yields ``L - H - T - beg_pad - end_pad`` windows (none if shorter).
    Every window, including ``fut_obs`` and ``values`` with ``value_offset=1``, stays inside the
    episode for any ``end_pad >= 0``.
    """
    if beg_pad < 0 or end_pad < 0:
        raise ValueError(f"paddings must be >= 0, got beg_pad={beg_pad}, end_pad={end_pad}")
    _check(history, horizon, 0)
    stop = length - (history + horizon + end_pad)
    return np.arange(beg_pad, max(stop, beg_pad), dtype=np.int64)


def num_windows(length: int, history: int = 25, horizon: int = 25, beg_pad: int = 5, end_pad: int = 5) -> int:
    """``len(window_starts(...))`` without building it."""
    return max(0, length - (history + horizon + end_pad) - beg_pad)


def gather_windows(
    ep: Episode,
    starts: np.ndarray,
    history: int = 25,
    horizon: int = 25,
    value_offset: int = 0,
) -> dict[str, Any]:
    """Stack the windows at ``starts`` (vectorised); arrays have a leading ``(N,)`` dimension."""
    _check(history, horizon, value_offset)
    s = np.asarray(starts, dtype=np.int64).reshape(-1, 1)
    t = s + history
    hist_obs = s + np.arange(history + 1)
    hist_act = s + np.arange(history)
    fut = t + np.arange(horizon)
    return {
        "obs_hist": {g: v[hist_obs] for g, v in ep.obs.items()},
        "act_hist": ep.actions[hist_act],
        "fut_acts": ep.actions[fut],
        "fut_cmds": ep.commands[t + np.arange(horizon + 1)],
        "fut_obs": {g: v[fut + 1] for g, v in ep.obs.items()},
        "rewards": ep.rewards[fut],
        "values": ep.values[fut + value_offset],
        "expert": ep.expert[fut],
    }


def window_at(
    ep: Episode,
    start: int,
    history: int = 25,
    horizon: int = 25,
    value_offset: int = 0,
) -> dict[str, Any]:
    """One window as slices (views, no copy) of the episode arrays; same keys as :func:`gather_windows`."""
    s = int(start)
    t = s + history
    return {
        "obs_hist": {g: v[s : t + 1] for g, v in ep.obs.items()},
        "act_hist": ep.actions[s:t],
        "fut_acts": ep.actions[t : t + horizon],
        "fut_cmds": ep.commands[t : t + horizon + 1],
        "fut_obs": {g: v[t + 1 : t + horizon + 1] for g, v in ep.obs.items()},
        "rewards": ep.rewards[t : t + horizon],
        "values": ep.values[t + value_offset : t + horizon + value_offset],
        "expert": ep.expert[t : t + horizon],
    }


def check_perturbed_repeat(repeat: int, windows_per_chunk: int = 1, prefix: str = "") -> None:
    """``perturbed_repeat`` must be an integer >= 1, and > 1 only with single windows (no chunks)."""
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"{prefix}perturbed_repeat must be an integer >= 1, got {repeat!r}")
    if repeat > 1 and windows_per_chunk > 1:
        raise ValueError(f"{prefix}perturbed_repeat > 1 needs single windows ({prefix}windows_per_chunk 1)")


def noised_steps(ep: Episode) -> np.ndarray:
    """(len(ep),) bool: the steps whose action the data engine perturbed (``meta["noised_windows"]``, shifted by
    any ``front_pad``); all False for an episode that records none."""
    mask = np.zeros(len(ep), bool)
    shift = int(ep.meta.get("front_pad", 0))
    for start, end in ep.meta.get("noised_windows", []):
        mask[shift + int(start): shift + int(end)] = True
    return mask


def perturbed_starts(ep: Episode, starts: np.ndarray, span: int, repeat: int) -> np.ndarray:
    """``starts`` with every window that holds a perturbed action among its ``span`` actions (history and
    horizon, from its start) listed ``repeat`` times in all, next to its first listing."""
    if repeat <= 1 or len(starts) == 0:
        return starts
    noised = np.concatenate([[0], np.cumsum(noised_steps(ep), dtype=np.int64)])
    ends = np.minimum(starts + span, len(ep))
    holds = noised[ends] - noised[starts] > 0
    return np.repeat(starts, np.where(holds, repeat, 1))
