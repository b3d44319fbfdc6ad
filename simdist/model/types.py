"""Small typed containers passed between the world model, its components and planners."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor


@dataclass
class Encoding:
    """What the encoder makes of one history window.

    ``context``: (B, L, D) tokens that dynamics and policy attend to.
    ``latent``: (B, D) current latent token as the reward head consumes it (official: z_t plus its
    temporal and type encodings).
    ``z``: (B, D) the bare per-step latent E(o_t), in the space of the consistency targets.
    ``actions``: (B, H, A) the normalised past actions a_{t-H..t-1}, for dynamics that read them directly
    (``dynamics/mlp`` with ``action_context``); None where an encoder does not pass them on.
    ``action_tokens``: (L,) bool, which context tokens carry a past action (None where an encoder does not
    say); ``policy_context``: (B, L', D) the tokens the policy head reads when the model's ``policy_input``
    restricts them (None: ``context``).
    ``obs_latents``: (B, H, D) the history's per-step latents E(o_{t-H..t-1}) where the encoder's observation
    tokens are those latents (``encoder/mlp``; None elsewhere): with ``z`` and ``actions`` what an encoding of an
    imagined later step is assembled from (``Encoder.from_latents``, the planner's value expansion).
    """

    context: Tensor
    latent: Tensor
    z: Tensor
    actions: Tensor | None = None
    action_tokens: Tensor | None = None
    policy_context: Tensor | None = None
    obs_latents: Tensor | None = None


@dataclass
class Prediction:
    """Training-time outputs, in normalised units: latents (B,T,D), rewards/values (B,T), actions (B,T,A).

    ``member_latents`` (K, B, T, D): each member's latents when the dynamics is an ensemble (``latents`` is
    their mean); None for a single dynamics. ``encoding``: the window encoding the prediction started from (the
    heads read it again on other latents: :meth:`~simdist.model.world_model.WorldModel.heads_on_latents`).
    """

    latents: Tensor
    rewards: Tensor | None
    values: Tensor | None
    actions: Tensor | None
    member_latents: Tensor | None = None
    encoding: Encoding | None = None


@dataclass
class Imagination:
    """Imagined futures for a batch of action sequences, rewards and values in environment units.

    ``latents`` (..., T, D) = ẑ_{t+1..t+T}; ``rewards`` (..., T) = r̂_{t..t+T-1}; ``values`` (..., T).
    ``disagreement`` (..., T): with an ensemble dynamics, the std across members of each predicted latent
    (population std), averaged over the latent dims; ``latents`` are then the members' mean, which the heads
    read. None for a single dynamics.
    """

    latents: Tensor
    rewards: Tensor
    values: Tensor
    disagreement: Tensor | None = None
