"""The policy's intent as a latent reference for a planner (beyond the paper).

A policy head trained in simulation proposes an action chunk π whose effect it learned under the simulator's
physics. Its *intent* is the latent trajectory ẑ^ref = f_ref(z, π) that the reference dynamics f_ref (the
pretrained, simulation-trained dynamics) imagines for that chunk. After dynamics-only adaptation the planner's
own dynamics f predicts the real physics; a candidate a whose imagined trajectory f(z, a) stays close to the
intent reaches, on the real system, what the policy meant to reach in simulation. :class:`IntentReference`
computes the intent and the candidates' distance to it, Σ_k mean_d (ẑ_k − ẑ^ref_k)², which MPPI's
``intent_weight`` subtracts from its ranking score.

Without adaptation (the reference is the planner's own model) the term is a prior around the policy measured in
latent space; with an adapted dynamics it asks for the actions that compensate the physics the simulator
lacked (a push against stiction, a longer step on a slippery slope), which a prior in action space penalises.
"""

from __future__ import annotations

from typing import Any

from torch import Tensor, nn


class IntentReference:
    """The reference world model whose dynamics imagines the policy's intent: ``source`` a folder or Hub id (loaded
    on first use, onto the planner's model's device and dtype), a world model, or None (the planner's own)."""

    def __init__(self, own: nn.Module, source: str | nn.Module | None = None) -> None:
        self.own, self.source = own, source
        self._model: Any = source if isinstance(source, nn.Module) else None

    @property
    def model(self) -> Any:
        """The reference world model (the planner's own when ``source`` is None)."""
        if self.source is None:
            return self.own
        if self._model is None:
            from simdist.model.world_model import WorldModel

            self._model = WorldModel.from_pretrained(str(self.source)).eval()
        param = next(self.own.parameters())
        return self._model.to(device=param.device, dtype=param.dtype)

    def check_compatible(self) -> None:
        """ValueError unless the reference imagines in the planner's latent space (same latent size, horizon and
        action size); it reads the planner's encoding, so its encoder must be the planner's (adaptation keeps it)."""
        ref, own = self.model.config, self.own.config
        name = repr(self.source) if isinstance(self.source, str) else "(the model given)"
        for key in ("latent_dim", "horizon", "action_dim"):
            if getattr(ref, key) != getattr(own, key):
                raise ValueError(f"intent_model {name} has {key}={getattr(ref, key)}, the planner's model "
                                 f"{getattr(own, key)}: the intent needs the model the planner's was adapted from")

    def latents(self, encoding: Any, chunk: Tensor) -> Tensor:
        """The intent ẑ^ref (B, T, D): the reference dynamics' latents for the policy chunk ``chunk`` (B, T, A)."""
        return self.model.imagine_latents(encoding, chunk)

    @staticmethod
    def distance(latents: Tensor, intent: Tensor) -> Tensor:
        """Σ_k mean_d (ẑ_k − ẑ^ref_k)² of candidates' latents (B, N, T, D) to the intent (B, T, D): (B, N)."""
        return (latents - intent[:, None]).pow(2).mean(-1).sum(-1)
