"""``dynamics/transformer``: multi-step decoder whose causal queries are the future actions (SIMDIST 2.5)."""

from __future__ import annotations

from torch import Tensor

from simdist.model.interfaces import Dynamics
from simdist.model.nn import TransformerDecoder
from simdist.model.types import Encoding
from simdist.registry import register


@register("dynamics", "transformer")
class TransformerDynamics(Dynamics):
    """Queries = embedded actions a_{t..t+T-1}; keys/values = the context; output = ẑ_{t+1..t+T}.

    All T latents come out of one pass (no feedback of predictions). The context's key/value heads are
    computed once by :meth:`prepare` and broadcast over any number of action sequences.
    """

    uses_action_embedding = True

    def __init__(
        self, latent_dim: int = 64, num_layers: int = 2, num_heads: int = 8, mlp_factor: int = 4,
        attn_dropout: float = 0.05,
    ) -> None:
        super().__init__()
        self.decoder = TransformerDecoder(latent_dim, num_layers, num_heads, mlp_factor, attn_dropout)

    def prepare(self, encoding: Encoding) -> list[tuple[Tensor, Tensor]]:
        return self.decoder.prepare(encoding.context)

    def forward(self, prepared: list[tuple[Tensor, Tensor]], z0: Tensor, actions: Tensor) -> Tensor:
        extra = actions.dim() - 3  # sample dimensions between batch and time
        kv = [(k.reshape(k.shape[0], *([1] * extra), *k.shape[1:]),
               v.reshape(v.shape[0], *([1] * extra), *v.shape[1:])) for k, v in prepared]
        return self.decoder(actions, prepared=kv)
