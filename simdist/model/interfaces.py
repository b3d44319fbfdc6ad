"""Abstract interfaces of the pluggable components.

A world model is assembled from one component of each kind. Components receive *normalised* inputs
(the :class:`~simdist.WorldModel` applies its normaliser) and work on arbitrary leading batch
dimensions where noted, so a planner can score ``(B, N, T, A)`` action sequences against ``B`` shared
contexts without copying them.
"""

from __future__ import annotations

import abc
from typing import Any

from torch import Tensor, nn

from simdist.model.types import Encoding


class Encoder(nn.Module, abc.ABC):
    """Maps observation/action history to context tokens and the current latent z_t."""

    latent_dim: int

    @abc.abstractmethod
    def encode_latent(self, obs: dict[str, Tensor]) -> Tensor:
        """Per-step latent E(o) of one observation; ``obs[g]`` is (..., *shape) → (..., D).

        These are the stop-gradient targets of the latent-consistency loss.
        """

    @abc.abstractmethod
    def forward(self, obs_hist: dict[str, Tensor], act_hist: Tensor) -> Encoding:
        """``obs_hist[g]`` (B, H+1, *shape) = o_{t-H..t}; ``act_hist`` (B, H, A) = a_{t-H..t-1}."""


class Dynamics(nn.Module, abc.ABC):
    """Predicts ẑ_{t+1..t+T} from the encoding and the future actions a_{t..t+T-1}.

    If ``uses_action_embedding`` the world model passes the actions through its (separately frozen)
    future-action embedding first, so ``actions`` is (..., T, D); otherwise raw normalised (..., T, A).
    """

    uses_action_embedding: bool = False

    def prepare(self, encoding: Encoding) -> Any:
        """Work that depends only on the encoding, done once per planning tick (default: nothing)."""
        return encoding

    @abc.abstractmethod
    def forward(self, prepared: Any, z0: Tensor, actions: Tensor) -> Tensor:
        """``z0`` (B, D) or broadcastable; ``actions`` (B, *S, T, ·) → latents (B, *S, T, D)."""


class SequenceHead(nn.Module, abc.ABC):
    """Reward or value head over the latent trajectory.

    ``latents`` (..., T+1, D) = [z_t, ẑ_{t+1}, …, ẑ_{t+T}]; ``actions`` (..., T, A) normalised;
    ``commands`` (..., T+1, C) normalised. Returns (..., T) in normalised units: rewards r̂_{t..t+T-1}
    for a reward head, values V̂ for ẑ_{t+1..t+T} for a value head.
    """

    @abc.abstractmethod
    def forward(self, latents: Tensor, actions: Tensor, commands: Tensor) -> Tensor: ...

    def forward_last(self, latents: Tensor, actions: Tensor, commands: Tensor) -> Tensor:
        """Only the last output, (..., 1): what a planner's bootstrap value needs. Heads that can
        skip the other positions override this."""
        return self(latents, actions, commands)[..., -1:]


class PolicyHead(nn.Module, abc.ABC):
    """Base policy: an action chunk â_{t..t+T-1} (normalised) from the encoding and future commands.

    If ``uses_command_embedding`` the world model embeds the commands first: (B, T, D).
    """

    uses_command_embedding: bool = False

    def prepare(self, encoding: Encoding) -> Any:
        return encoding

    @abc.abstractmethod
    def forward(self, prepared: Any, commands: Tensor) -> Tensor: ...
