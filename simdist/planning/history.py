"""``ObservationHistory``: the rolling model input (last H+1 observations, last H actions, command)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

ArrayLike = Tensor | np.ndarray | Sequence[float]


class ObservationHistory:
    """Per-env windows o_{t-H..t} and a_{t-H..t-1}, plus the current command, for ``num_envs`` envs.

    Usage per control step: ``push(o_t, a_{t-1})`` (``a_{t-1}`` is the action applied before ``o_t``
    was observed), then ``planner.act(history)``. ``reset(o_0)`` fills the window with copies of the
    first observation and zero actions, as the official controller does. Inputs may be numpy arrays or
    tensors; observation groups outside ``obs_spec`` are ignored.
    """

    def __init__(
        self, obs_spec: Mapping[str, Sequence[int]], action_dim: int, command_dim: int = 0, history: int = 25,
        num_envs: int = 1, device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32,
    ) -> None:
        if history < 1 or num_envs < 1:
            raise ValueError(f"history and num_envs must be >= 1, got {history} and {num_envs}")
        self.obs_spec = {str(k): tuple(int(s) for s in v) for k, v in obs_spec.items()}
        self.action_dim, self.command_dim = int(action_dim), int(command_dim)
        self.history, self.num_envs = int(history), int(num_envs)
        self.device, self.dtype = torch.device(device), dtype
        b, h = self.num_envs, self.history
        self.obs = {k: torch.zeros(b, h + 1, *s, device=self.device, dtype=dtype)
                    for k, s in self.obs_spec.items()}
        self.actions = torch.zeros(b, h, self.action_dim, device=self.device, dtype=dtype)
        self.command = torch.zeros(b, self.command_dim, device=self.device, dtype=dtype)
        self.initialized = torch.zeros(b, dtype=torch.bool, device=self.device)

    @classmethod
    def for_model(cls, world_model: Any, num_envs: int = 1, device: str | torch.device | None = None
                  ) -> ObservationHistory:
        """A history shaped for ``world_model`` (on its device unless ``device`` is given)."""
        cfg = world_model.config
        return cls(cfg.obs_spec, cfg.action_dim, cfg.command_dim, cfg.history, num_envs,
                   device if device is not None else world_model.device)

    # ------------------------------------------------------------------ conversion and checks
    def _tensor(self, x: ArrayLike, name: str, shape: tuple[int, ...], rows: int) -> Tensor:
        t = torch.as_tensor(np.asarray(x) if not isinstance(x, Tensor) else x)
        t = t.to(device=self.device, dtype=self.dtype)
        if tuple(t.shape) != (rows, *shape):
            raise ValueError(f"{name} has shape {tuple(t.shape)}, expected {(rows, *shape)} (envs, *shape)")
        return t

    def _ids(self, ids: ArrayLike | None) -> Tensor:
        if ids is None:
            return torch.arange(self.num_envs, device=self.device)
        idx = torch.as_tensor(np.asarray(ids) if not isinstance(ids, Tensor) else ids, device=self.device)
        if idx.dtype == torch.bool:
            idx = idx.nonzero().flatten()
        idx = idx.long().flatten()
        if idx.numel() and (idx.min() < 0 or idx.max() >= self.num_envs):
            raise IndexError(f"env ids {idx.tolist()} out of range for {self.num_envs} envs")
        return idx

    def _obs(self, obs: Mapping[str, ArrayLike], rows: int) -> dict[str, Tensor]:
        if not isinstance(obs, Mapping):
            raise TypeError(f"obs must be a mapping group -> array, got {type(obs).__name__}")
        missing = [k for k in self.obs_spec if k not in obs]
        if missing:
            raise KeyError(f"observation groups {missing} missing; the history holds {list(self.obs_spec)}")
        return {k: self._tensor(obs[k], f"obs[{k!r}]", s, rows) for k, s in self.obs_spec.items()}

    # ------------------------------------------------------------------ updates
    def reset(self, obs: Mapping[str, ArrayLike], ids: ArrayLike | None = None,
              command: ArrayLike | None = None) -> None:
        """Fill the windows of envs ``ids`` (all if None) with copies of ``obs`` (rows = len(ids)) and zero
        actions; their command becomes ``command`` or zero."""
        idx = self._ids(ids)
        values = self._obs(obs, idx.numel())
        for k, v in values.items():
            self.obs[k][idx] = v.unsqueeze(1).expand(-1, self.history + 1, *v.shape[1:])
        self.actions[idx] = 0.0
        self.command[idx] = 0.0 if command is None else self._tensor(
            command, "command", (self.command_dim,), idx.numel())
        self.initialized[idx] = True

    def command_of(self, obs: Mapping[str, ArrayLike]) -> ArrayLike | None:
        """``obs``'s ``command`` group when this history keeps commands, else None (what reset/push take)."""
        return obs["command"] if self.command_dim and "command" in obs else None

    def push(self, obs: Mapping[str, ArrayLike], prev_action: ArrayLike,
             command: ArrayLike | None = None) -> None:
        """Append o_t and the action a_{t-1} that led to it, for all envs; optionally set the command."""
        if not bool(self.initialized.all()):
            raise RuntimeError(f"envs {(~self.initialized).nonzero().flatten().tolist()} were never reset")
        values = self._obs(obs, self.num_envs)
        act = self._tensor(prev_action, "prev_action", (self.action_dim,), self.num_envs)
        for k, v in values.items():
            buf = self.obs[k]
            buf[:, :-1] = buf[:, 1:].clone()
            buf[:, -1] = v
        self.actions[:, :-1] = self.actions[:, 1:].clone()
        self.actions[:, -1] = act
        if command is not None:
            self.set_command(command)

    def set_command(self, command: ArrayLike, ids: ArrayLike | None = None) -> None:
        """Set the (constant over the horizon) command of envs ``ids``."""
        idx = self._ids(ids)
        self.command[idx] = self._tensor(command, "command", (self.command_dim,), idx.numel())

    # ------------------------------------------------------------------ output
    def as_inputs(self, ids: ArrayLike | None = None) -> tuple[dict[str, Tensor], Tensor, Tensor]:
        """``(obs_hist {g: (B, H+1, *shape)}, act_hist (B, H, A), command (B, C))``, float copies; of envs
        ``ids`` only (indices or a (B,) mask; rows in that order) if given."""
        if not bool(self.initialized.all()):
            raise RuntimeError(f"envs {(~self.initialized).nonzero().flatten().tolist()} were never reset")
        if ids is None:
            return {k: v.clone() for k, v in self.obs.items()}, self.actions.clone(), self.command.clone()
        idx = self._ids(ids)  # indexing with a tensor copies
        return {k: v[idx] for k, v in self.obs.items()}, self.actions[idx], self.command[idx]

    def as_dict(self, ids: ArrayLike | None = None) -> dict[str, Any]:
        """The same as :meth:`as_inputs`, keyed ``obs_hist``, ``act_hist``, ``command``."""
        obs_hist, act_hist, command = self.as_inputs(ids)
        return {"obs_hist": obs_hist, "act_hist": act_hist, "command": command}

    def __repr__(self) -> str:
        return (f"ObservationHistory(envs={self.num_envs}, history={self.history}, obs={self.obs_spec}, "
                f"action_dim={self.action_dim}, command_dim={self.command_dim})")


def history_for(controller: Any, num_envs: int) -> ObservationHistory | None:
    """The observation history ``controller`` acts on: an agent's own (``new_history``), a planner's world
    model's, or None for a plain ``policy(obs)`` callable."""
    if hasattr(controller, "new_history"):
        return controller.new_history(num_envs)
    model = getattr(controller, "world_model", None)
    return ObservationHistory.for_model(model, num_envs=num_envs) if model is not None else None
