"""Base class for encoders that interleave observation and action history tokens (SIMDIST.md 2.3)."""

from __future__ import annotations

import abc
from typing import ClassVar

import torch
from torch import Tensor, nn

from simdist.model.interfaces import Encoder
from simdist.model.nn import init_linear_
from simdist.model.types import Encoding

_OBS, _ACT, _LATENT = 0, 1, 2


class InterleavedHistoryEncoder(Encoder):
    """Context = [o_{t-H}, a_{t-H}, …, o_{t-1}, a_{t-1}, z_t] with learned temporal and type encodings.

    Subclasses define the per-step latent (:meth:`encode_latent`) and the observation tokens
    (:meth:`obs_tokens`, which may return ``None`` so only action tokens carry the history);
    ``latent_obs_tokens`` True says the observation tokens are the per-step latents themselves, so that an
    encoding can be assembled from imagined latents (:meth:`from_latents`).
    """

    latent_obs_tokens: ClassVar[bool] = False

    def __init__(self, latent_dim: int, action_dim: int, history: int) -> None:
        super().__init__()
        self.latent_dim, self.history = latent_dim, history
        self.act_proj = nn.Linear(action_dim, latent_dim)
        init_linear_(self.act_proj)
        self.temporal_enc = nn.Parameter(0.02 * torch.randn(history + 1, latent_dim))
        self.type_enc = nn.Parameter(0.02 * torch.randn(3, latent_dim))

    @abc.abstractmethod
    def obs_tokens(self, obs_hist: dict[str, Tensor]) -> Tensor | None:
        """Tokens (B, H, D) of o_{t-H..t-1}, or ``None`` to leave observations out of the history."""

    def forward(self, obs_hist: dict[str, Tensor], act_hist: Tensor) -> Encoding:
        h = act_hist.shape[-2]
        if h != self.history:
            raise ValueError(f"action history has {h} steps, the encoder was built for {self.history}")
        for key, value in obs_hist.items():
            if value.shape[1] != h + 1:
                raise ValueError(f"observation history {key!r} has {value.shape[1]} steps, expected {h + 1}")
        z = self.encode_latent({k: v[:, -1] for k, v in obs_hist.items()})
        return self._assemble(self.obs_tokens({k: v[:, :-1] for k, v in obs_hist.items()}), z, act_hist)

    def from_latents(self, obs_latents: Tensor, z: Tensor, act_hist: Tensor) -> Encoding:
        """The encoding of a window given as per-step latents (B, H, D) of o_{t-H..t-1}, z_t (B, D) and the
        actions (B, H, A) between them, as :meth:`forward` assembles it: for an imagined window, whose latents
        the dynamics predicted. Only for encoders whose observation tokens are the per-step latents
        (``latent_obs_tokens``); ValueError otherwise."""
        if not self.latent_obs_tokens:
            raise ValueError(f"{type(self).__name__} makes its observation tokens otherwise than its per-step "
                             "latents: an encoding cannot be assembled from imagined latents")
        return self._assemble(obs_latents, z, act_hist)

    def _assemble(self, obs_tok: Tensor | None, z: Tensor, act_hist: Tensor) -> Encoding:
        h = act_hist.shape[-2]
        raw = obs_tok if self.latent_obs_tokens else None
        tokens = self.act_proj(act_hist) + self.temporal_enc[:h] + self.type_enc[_ACT]
        if obs_tok is not None:
            obs_tok = obs_tok + self.temporal_enc[:h] + self.type_enc[_OBS]
            tokens = torch.stack([obs_tok, tokens], dim=2).flatten(1, 2)  # o_0, a_0, o_1, a_1, …
        latent = z + self.temporal_enc[h] + self.type_enc[_LATENT]
        is_action = torch.zeros(tokens.shape[1] + 1, dtype=torch.bool, device=tokens.device)
        is_action[(1 if obs_tok is not None else 0):-1:(2 if obs_tok is not None else 1)] = True
        return Encoding(context=torch.cat([tokens, latent[:, None]], dim=1), latent=latent, z=z, actions=act_hist,
                        action_tokens=is_action, obs_latents=raw)


def flat_concat(obs: dict[str, Tensor], keys: list[str], shapes: dict[str, list[int]]) -> Tensor:
    """Concatenate the named groups, each flattened over its own (per-step) shape."""
    parts = []
    for key in keys:
        if key not in obs:
            raise KeyError(f"observation group {key!r} missing; have {sorted(obs)}")
        x = obs[key]
        nd = len(shapes[key])
        parts.append(x.flatten(-nd) if nd > 1 else (x if nd == 1 else x[..., None]))
    return torch.cat(parts, dim=-1)
