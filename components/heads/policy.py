"""``policy_head/transformer``: action-chunk decoder queried by the future commands (SIMDIST 2.8)."""

from __future__ import annotations

from torch import Tensor, nn

from simdist.model.interfaces import PolicyHead
from simdist.model.nn import TransformerDecoder, init_linear_
from simdist.model.types import Encoding
from simdist.registry import register


@register("policy_head", "transformer")
class ChunkPolicyHead(PolicyHead):
    """Causal decoder over embedded commands c_{t..t+T-1}, cross-attending to the context → â_{t..t+T-1}.

    A command-conditioned behaviour-cloning head on the shared context; it never sees predicted latents.
    """

    uses_command_embedding = True

    def __init__(
        self, latent_dim: int, action_dim: int, num_layers: int = 4, num_heads: int = 8, mlp_factor: int = 4,
        attn_dropout: float = 0.05,
    ) -> None:
        super().__init__()
        self.decoder = TransformerDecoder(latent_dim, num_layers, num_heads, mlp_factor, attn_dropout)
        self.out = nn.Linear(latent_dim, action_dim)
        init_linear_(self.out)

    def prepare(self, encoding: Encoding) -> list[tuple[Tensor, Tensor]]:
        context = encoding.context if encoding.policy_context is None else encoding.policy_context
        return self.decoder.prepare(context)

    def forward(self, prepared: list[tuple[Tensor, Tensor]], commands: Tensor) -> Tensor:
        return self.out(self.decoder(commands, prepared=prepared))
