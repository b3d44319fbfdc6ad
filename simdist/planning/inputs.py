"""What every agent's ``act`` checks: observation histories of the shapes it reads, finite inputs and finite
actions. Nothing non-finite reaches an actuator; a mis-shaped or non-finite input is refused, naming the key."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from simdist.planning.history import ObservationHistory


class NonFiniteError(ValueError):
    """An agent got a non-finite input (observation, previous action, command) or would return a non-finite
    action; the message names the envs and the key. Nothing non-finite ever reaches an actuator."""


def nonfinite_rows(x: Tensor) -> list[int]:
    """Rows (envs) of ``x`` (B, ...) holding a NaN or an infinity."""
    bad = ~torch.isfinite(x.reshape(x.shape[0], -1)).all(dim=1)
    return torch.nonzero(bad).flatten().tolist()


def check_finite(x: Tensor, what: str) -> None:
    rows = nonfinite_rows(x)
    if rows:
        raise NonFiniteError(f"{what} is non-finite (NaN or Inf) for env(s) {rows[:10]}"
                             f"{' ...' if len(rows) > 10 else ''}; refusing to plan on it")


def finite_actions(actions: Tensor, who: str) -> Tensor:
    """``actions`` (B, A), or a NonFiniteError naming ``who`` and the envs whose action holds NaN or Inf."""
    rows = nonfinite_rows(actions)
    if rows:
        raise NonFiniteError(f"{who} computed non-finite actions for env(s) {rows[:10]}: its outputs are NaN or "
                             "Inf (check its weights and inputs)")
    return actions


def history_inputs(history: ObservationHistory | Mapping[str, Any], obs_spec: Mapping[str, Sequence[int]],
                   action_dim: int, command_dim: int, history_len: int, *, device: Any = None,
                   dtype: torch.dtype = torch.float32, command_steps: int | None = None,
                   ) -> tuple[dict[str, Tensor], Tensor, Tensor | None]:
    """``(obs_hist {g: (B, H+1, *shape)}, act_hist (B, H, A), command (B, C) or None when C = 0)`` of an
    :class:`ObservationHistory` or a dict with ``obs_hist``, ``act_hist`` and ``command``, checked against what
    the agent reads (H = ``history_len``) and finite, as ``dtype`` on ``device``. ``command_steps``: a command may
    also be given per step, (B, command_steps, C). A ValueError (NonFiniteError for NaN or Inf) names the key."""
    command: Tensor | None
    if isinstance(history, ObservationHistory):
        obs_hist, act_hist, command = history.as_inputs()
    elif isinstance(history, Mapping):
        missing = [k for k in ("obs_hist", "act_hist") if k not in history]
        if missing:
            raise KeyError(f"history dict is missing {missing}; expected obs_hist, act_hist, command")
        obs_hist, act_hist, command = history["obs_hist"], history["act_hist"], history.get("command")
    else:
        raise TypeError(f"history must be an ObservationHistory or a dict, got {type(history).__name__}")
    h, a, c = history_len, action_dim, command_dim

    def conv(x: Any) -> Tensor:
        return torch.as_tensor(np.asarray(x) if not isinstance(x, Tensor) else x).to(device=device, dtype=dtype)

    act_hist = conv(act_hist)
    if act_hist.dim() != 3 or tuple(act_hist.shape[1:]) != (h, a):
        raise ValueError(f"act_hist has shape {tuple(act_hist.shape)}, expected (B, {h}, {a}): {h} past actions of "
                         f"{a} dimensions (make the history with the agent's new_history)")
    check_finite(act_hist, "act_hist (the previous actions)")
    b = act_hist.shape[0]
    obs: dict[str, Tensor] = {}
    for key, shape in obs_spec.items():
        if key not in obs_hist:
            raise KeyError(f"obs_hist lacks group {key!r}; the model reads {list(obs_spec)}")
        obs[key] = conv(obs_hist[key])
        if tuple(obs[key].shape) != (b, h + 1, *shape):
            raise ValueError(f"obs_hist[{key!r}] has shape {tuple(obs[key].shape)}, expected {(b, h + 1, *shape)}")
        check_finite(obs[key], f"observation {key!r}")
    if c == 0:
        return obs, act_hist, None
    if command is None:
        raise ValueError(f"the model is command-conditioned (command_dim={c}); pass a command")
    command = conv(command)
    ok = (command.dim() == 2 and tuple(command.shape) == (b, c)) or (
        command_steps is not None and command.dim() == 3 and tuple(command.shape) == (b, command_steps, c))
    if not ok:
        steps = f" or ({b}, {command_steps}, {c})" if command_steps is not None else ""
        raise ValueError(f"command has shape {tuple(command.shape)}, expected ({b}, {c}){steps}")
    check_finite(command, "command")
    return obs, act_hist, command
