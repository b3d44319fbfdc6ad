"""``dynamics/ensemble``: K independently initialised dynamics whose mean is the prediction and whose spread is
the model's disagreement (beyond the paper: SimDist has a single dynamics)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor, nn

from simdist.model.config import ComponentSpec, ConfigError
from simdist.model.interfaces import Dynamics
from simdist.model.types import Encoding
from simdist.model.world_model import build_component
from simdist.registry import register


@register("dynamics", "ensemble")
class EnsembleDynamics(Dynamics):
    """``members`` K >= 2 copies of the ``member`` spec (any registered dynamics, default ``mlp``), each built
    with the world model's standard arguments and its own random initialisation.

    ``forward`` is the members' mean, so code that only knows the :class:`Dynamics` interface keeps working;
    :meth:`forward_members` gives every member's prediction, (K, ..., T, D), which the world model uses for the
    per-member consistency loss and the disagreement MPPI can penalise. :meth:`prepare` keeps one prepared value
    per member (a transformer member's context keys/values are its own). Members that read embedded actions
    share the world model's one future-action embedding.
    """

    def __init__(
        self, latent_dim: int, action_dim: int, members: int, member: Mapping[str, Any] | str | None = None,
        obs_spec: Mapping[str, Any] | None = None, command_dim: int = 0, history: int | None = None,
        horizon: int | None = None,
    ) -> None:
        super().__init__()
        if isinstance(members, bool) or not isinstance(members, int) or members < 2:
            raise ValueError(f"dynamics ensemble: members must be an integer >= 2, got {members!r}")
        try:
            spec = ComponentSpec.parse(dict(member) if isinstance(member, Mapping) else (member or "mlp"))
        except ConfigError as err:
            raise ConfigError(f"dynamics ensemble: member: {err}") from err
        if spec.name == "ensemble":
            raise ValueError("dynamics ensemble: member must name a single dynamics, not 'ensemble'")
        standard = {"obs_spec": obs_spec, "action_dim": action_dim, "command_dim": command_dim,
                    "latent_dim": latent_dim, "history": history, "horizon": horizon}
        standard = {k: v for k, v in standard.items() if v is not None}
        self.members = nn.ModuleList(build_component("dynamics", spec, standard) for _ in range(members))
        self.uses_action_embedding = bool(self.members[0].uses_action_embedding)

    def prepare(self, encoding: Encoding) -> list[Any]:
        """One prepared value per member."""
        return [m.prepare(encoding) for m in self.members]

    def forward_members(self, prepared: list[Any], z0: Tensor, actions: Tensor) -> Tensor:
        """Every member's latents: (K, B, *S, T, D)."""
        if not isinstance(prepared, list) or len(prepared) != len(self.members):
            raise ValueError(f"dynamics ensemble: expected the list of {len(self.members)} prepared values that "
                             f"prepare() returns, got {type(prepared).__name__}")
        return torch.stack([m(p, z0, actions) for m, p in zip(self.members, prepared)])

    def forward(self, prepared: list[Any], z0: Tensor, actions: Tensor) -> Tensor:
        """The members' mean latents (B, *S, T, D)."""
        return self.forward_members(prepared, z0, actions).mean(0)
