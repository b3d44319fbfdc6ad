"""Value expansion (beyond the paper): after a candidate's T imagined steps the policy head acts K more from the
imagined window, the dynamics rolls those K steps, and the value is read there, so the score becomes
Σ_{k<T+K} γ^k r̂_k + γ^(T+K+offset) V̂(ẑ_{T+K}) (TD-MPC-style value expansion with the model's own policy).

The policy head reads an encoding of the history window, so the window at t+T is assembled from latents: the
history's real per-step latents and the candidate's imagined ones, with the actions between them
(``Encoder.from_latents``; encoders whose observation tokens are those latents only, ``encoder/mlp``). It then
gives a chunk of T actions from that imagined window, of which the first K run open loop. The reward and value heads
read the T-step window ending at ẑ_{T+K} (their trained length, its first token the latent token of ẑ_K): its last
K rewards extend the candidate's, its last value ends the score.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from simdist.model.types import Encoding, Imagination

__all__ = ["check_expansion", "expand_imagination", "extended_window"]


def check_expansion(world_model: Any, steps: int) -> int:
    """``steps`` K validated for ``world_model``: an integer 0..horizon, and for K > 0 a model whose policy head
    can act from an imagined window (a policy head reading the whole context, an encoder with ``from_latents``
    whose observation tokens are its latents). ValueError naming ``value_expansion`` otherwise."""
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= world_model.config.horizon:
        raise ValueError(f"value_expansion must be an integer 0 to the horizon ({world_model.config.horizon}), "
                         f"got {steps!r}")
    if not steps:
        return 0
    if world_model.policy is None:
        raise ValueError("value_expansion needs a policy head to act after the horizon; this model has none")
    if world_model.config.policy_input is not None:
        raise ValueError("value_expansion assembles the policy head's whole context; this model's policy_input "
                         "restricts it")
    if not getattr(world_model.encoder, "latent_obs_tokens", False):
        raise ValueError(f"value_expansion assembles the window from imagined latents; "
                         f"{type(world_model.encoder).__name__}'s observation tokens are not its latents")
    return steps


def _flat(x: Tensor, lead: torch.Size) -> Tensor:
    """(B, [N,] ...) with a per-env (B, ...) broadcast over the candidates → (B·N, ...)."""
    extra = len(lead) - 1
    x = x.reshape(x.shape[0], *([1] * extra), *x.shape[1:]).expand(*lead, *x.shape[1:])
    return x.reshape(lead.numel(), *x.shape[len(lead):])


def expand_imagination(world_model: Any, encoding: Encoding, imagination: Imagination, actions: Tensor,
                       commands: Tensor | None, steps: int) -> Imagination:
    """``imagination`` of ``actions`` (B, [N,] T, A) from ``encoding`` extended by ``steps`` K policy-head steps:
    latents and rewards (..., T+K) and values (..., 1), the value at ẑ_{T+K}; K = 0 returns it unchanged. Call
    :func:`check_expansion` first; ``encoding`` must carry ``obs_latents``."""
    if not steps:
        return imagination
    wm, norm = world_model, world_model.normalizer
    lead, t = actions.shape[:-2], actions.shape[-2]
    start, latents, acts_n, cmds_n, more = extended_window(wm, encoding, imagination.latents, actions, commands,
                                                           steps)
    rewards, values = wm._heads(start, latents, acts_n, cmds_n, last_value_only=True)
    new_r = norm.denormalize("rewards", rewards[:, t - steps:].unsqueeze(-1)).squeeze(-1)
    new_v = norm.denormalize("values", values.unsqueeze(-1)).squeeze(-1)
    return Imagination(
        latents=torch.cat([imagination.latents, more.reshape(*lead, steps, -1)], dim=-2),
        rewards=torch.cat([imagination.rewards, new_r.reshape(*lead, steps)], dim=-1),
        values=new_v.reshape(*lead, -1)[..., -1:],
        disagreement=imagination.disagreement,
    )


def extended_window(world_model: Any, encoding: Encoding, latents: Tensor, actions: Tensor, commands: Tensor | None,
                    steps: int) -> tuple[Encoding, Tensor, Tensor, Tensor, Tensor]:
    """The heads' inputs K = ``steps`` policy-head steps after the imagined ``latents`` (B, [N,] T, D) of
    ``actions`` (B, [N,] T, A) from ``encoding``, flattened to N' = B·N rows: the window's encoding at ẑ_K
    (assembled from latents), its T latents ẑ_{K+1..T+K} (N', T, D), the T normalised actions that led there
    (N', T, A), the normalised commands (N', T+1, C) and the K new latents ẑ_{T+1..T+K} (N', K, D). The policy
    head acts from the window assembled at ẑ_T; its first K actions (clipped to the bounds) run open loop."""
    wm = world_model
    if encoding.obs_latents is None or encoding.actions is None:
        raise ValueError("value_expansion needs an encoding with its history's latents and actions")
    lead, t, h = actions.shape[:-2], actions.shape[-2], encoding.obs_latents.shape[-2]
    norm = wm.normalizer
    cmds_n = norm.normalize("commands", wm._commands(commands, actions.shape[0], actions.device))
    cmds_n = _flat(cmds_n, lead) if cmds_n.dim() == 3 else cmds_n.reshape(lead.numel(), *cmds_n.shape[-2:])
    acts_n = norm.normalize("actions", actions).reshape(-1, t, actions.shape[-1])
    series = torch.cat([_flat(encoding.obs_latents, lead), _flat(encoding.z, lead)[:, None],
                        latents.reshape(-1, t, latents.shape[-1])], dim=1)  # t-H .. t+T
    past = torch.cat([_flat(encoding.actions, lead), acts_n], dim=1)  # a_{t-H} .. a_{t+T-1}
    window = wm.encoder.from_latents(series[:, t:t + h], series[:, t + h], past[:, t:t + h])
    chunk = wm._policy(window, cmds_n)[:, :steps]
    low, high = wm.config.action_low, wm.config.action_high
    if low is not None and high is not None:
        env = norm.denormalize("actions", chunk)
        bounds = [torch.as_tensor(b, dtype=env.dtype, device=env.device) for b in (low, high)]
        chunk = norm.normalize("actions", torch.clamp(env, *bounds))
    more = wm._rollout(window, chunk)[0]  # ẑ_{t+T+1} .. ẑ_{t+T+K}
    series = torch.cat([series, more], dim=1)
    past = torch.cat([past, chunk], dim=1)
    start = wm.encoder.from_latents(series[:, steps:steps + h], series[:, steps + h], past[:, steps:steps + h])
    return start, series[:, h + steps + 1:h + steps + t + 1], past[:, h + steps:h + steps + t], cmds_n, more
