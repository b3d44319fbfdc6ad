"""Neural building blocks shared by the components, matching the official Flax modules.

Post-LayerNorm transformer blocks (``LN(x + attn(x))``), tanh-approximate GELU, LayerNorm eps 1e-6,
LeCun-normal kernels with zero biases, and attention-weight dropout whose mask is shared across batch
and heads (Flax ``broadcast_dropout=True``). Cross-attention accepts a context whose leading batch
dimensions broadcast against the queries, so a planner can score N action sequences per environment
against one shared context without copying it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

LN_EPS = 1e-6
_TRUNC_CORRECTION = 0.87962566103423978  # std of a unit normal truncated to [-2, 2]


def lecun_normal_(weight: Tensor) -> Tensor:
    """Flax's default kernel init: truncated normal with variance 1 / fan_in."""
    fan_in = weight[0].numel() if weight.dim() > 1 else weight.numel()
    std = math.sqrt(1.0 / fan_in) / _TRUNC_CORRECTION
    with torch.no_grad():
        return nn.init.trunc_normal_(weight, std=std, a=-2 * std, b=2 * std)


def init_linear_(module: nn.Module) -> None:
    """LeCun-normal weights and zero biases for every Linear/Conv inside ``module``."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            lecun_normal_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)


_GELU_A = 2.0 * math.sqrt(2.0 / math.pi)
_GELU_B = _GELU_A * 0.044715


def gelu_tanh(x: Tensor) -> Tensor:
    """tanh-approximate GELU. Without autograd it is evaluated as x·σ(2u), u = √(2/π)(x + 0.044715x³),
    in place on a scratch tensor: the same function, about twice as fast on CPU as ``F.gelu``'s tanh. With
    autograd on it is always ``F.gelu``: under ``torch.func.vmap`` (torchrl's critic and actor ensembles) a
    tensor that needs a gradient can report ``requires_grad`` False, and the in-place path would corrupt it."""
    if torch.is_grad_enabled() or x.device.type != "cpu":
        return F.gelu(x, approximate="tanh")
    u = x * x
    return u.mul_(_GELU_B).add_(_GELU_A).mul_(x).sigmoid_().mul_(x)


class GELU(nn.Module):
    """tanh-approximate GELU (``flax.nnx.gelu``)."""

    def forward(self, x: Tensor) -> Tensor:
        return gelu_tanh(x)


def mlp(in_dim: int, hidden: Sequence[int], out_dim: int) -> nn.Sequential:
    """Linear layers with GELU between them (none after the last)."""
    dims = [in_dim, *hidden, out_dim]
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(dims) - 2:
            layers.append(GELU())
    seq = nn.Sequential(*layers)
    init_linear_(seq)
    return seq


class MultiHeadAttention(nn.Module):
    """Multi-head attention with biased q/k/v/out projections and broadcastable key/value batches.

    Outside training-with-dropout it runs a fused path: self-attention projects q, k and v with one
    matrix product (weights concatenated on the fly, parameters unchanged) and folds every leading
    dimension into one batch; cross-attention against keys/values whose sample dimensions are 1
    (one context per env, N queries sequences) folds the samples into the query length, so the shared
    context is never expanded or copied.
    """

    def __init__(self, dim: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if dim % num_heads:
            raise ValueError(f"width {dim} is not divisible by {num_heads} heads")
        self.num_heads, self.head_dim, self.dropout = num_heads, dim // num_heads, dropout
        self.q, self.k, self.v, self.out = (nn.Linear(dim, dim) for _ in range(4))
        init_linear_(self)

    def split(self, x: Tensor) -> Tensor:
        """(..., L, D) -> (..., heads, L, head_dim)."""
        return x.unflatten(-1, (self.num_heads, self.head_dim)).transpose(-2, -3)

    def project_kv(self, context: Tensor) -> tuple[Tensor, Tensor]:
        """Key and value heads of a context; computed once and reused by a planner."""
        return self.split(self.k(context)), self.split(self.v(context))

    def forward(
        self,
        x: Tensor,
        context: Tensor | None = None,
        *,
        kv: tuple[Tensor, Tensor] | None = None,
        causal: bool = False,
    ) -> Tensor:
        if self.training and self.dropout > 0:
            return self._forward_dropout(x, context, kv, causal)
        if context is None and kv is None:
            return self._self_attention(x, causal)
        if kv is None:
            assert context is not None  # self-attention returned above
            kv = self.project_kv(context)
        k, v = kv
        q = self.q(x)
        lead, t, dim = q.shape[:-2], q.shape[-2], q.shape[-1]
        h, d = self.num_heads, self.head_dim
        klead = k.shape[:-3]
        if klead == lead:  # one context per query sequence
            out = _sdpa(q.reshape(-1, t, h, d).transpose(1, 2), k.reshape(-1, *k.shape[-3:]),
                        v.reshape(-1, *v.shape[-3:]), causal)
            out = out.transpose(1, 2)
        elif not causal and _foldable(klead, lead):  # shared context: samples join the query length
            b = klead[0] if klead else 1
            out = _sdpa(q.reshape(b, -1, h, d).transpose(1, 2), k.reshape(b, *k.shape[-3:]),
                        v.reshape(b, *v.shape[-3:]), False)
            out = out.transpose(1, 2)
        else:  # general broadcasting
            q = self.split(q)
            k, v = k.expand(*q.shape[:-2], *k.shape[-2:]), v.expand(*q.shape[:-2], *v.shape[-2:])
            out = _sdpa(q.reshape(-1, *q.shape[-3:]), k.reshape(-1, *k.shape[-3:]),
                        v.reshape(-1, *v.shape[-3:]), causal).transpose(1, 2)
        return self.out(out.reshape(*lead, t, dim))

    def _self_attention(self, x: Tensor, causal: bool) -> Tensor:
        lead, t, dim = x.shape[:-2], x.shape[-2], x.shape[-1]
        h, d = self.num_heads, self.head_dim
        weight = torch.cat([self.q.weight, self.k.weight, self.v.weight])
        bias = torch.cat([self.q.bias, self.k.bias, self.v.bias])
        qkv = F.linear(x.reshape(-1, t, dim), weight, bias).unflatten(-1, (3, h, d)).permute(2, 0, 3, 1, 4)
        out = _sdpa(qkv[0], qkv[1], qkv[2], causal)
        return self.out(out.transpose(1, 2).reshape(*lead, t, dim))

    def _forward_dropout(
        self, x: Tensor, context: Tensor | None, kv: tuple[Tensor, Tensor] | None, causal: bool,
    ) -> Tensor:
        """Training path with attention-weight dropout shared over batch and heads."""
        q = self.split(self.q(x))
        k, v = kv if kv is not None else self.project_kv(x if context is None else context)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        if causal:
            n_q, n_k = scores.shape[-2:]
            mask = torch.ones(n_q, n_k, dtype=torch.bool, device=x.device).tril()
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(-1)
        keep = torch.rand(weights.shape[-2:], device=x.device) >= self.dropout  # shared over batch/heads
        weights = weights * keep / (1.0 - self.dropout)
        return self.out((weights @ v).transpose(-2, -3).flatten(-2))


def _foldable(klead: torch.Size, lead: torch.Size) -> bool:
    """Whether keys with leading dims ``klead`` = (b, 1, …, 1) serve queries with leading dims ``lead``."""
    if not lead or len(klead) > len(lead):
        return False
    if len(klead) < len(lead):
        return all(s == 1 for s in klead)
    return all(s == 1 for s in klead[1:]) and klead[0] in (1, lead[0])


def _sdpa(q: Tensor, k: Tensor, v: Tensor, causal: bool) -> Tensor:
    """Scaled dot-product attention on 4-D (batch, heads, length, head_dim) tensors."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


class FeedForward(nn.Sequential):
    """Linear(D, factor·D) → GELU → Linear(factor·D, D)."""

    def __init__(self, dim: int, factor: int = 4) -> None:
        super().__init__(nn.Linear(dim, factor * dim), GELU(), nn.Linear(factor * dim, dim))
        init_linear_(self)


class EncoderLayer(nn.Module):
    """Post-LN self-attention block: ``LN(x + MHA(x))`` then ``LN(h + MLP(h))``."""

    def __init__(self, dim: int, num_heads: int, mlp_factor: int = 4, attn_dropout: float = 0.0) -> None:
        super().__init__()
        self.attn = MultiHeadAttention(dim, num_heads, attn_dropout)
        self.norm1 = nn.LayerNorm(dim, eps=LN_EPS)
        self.mlp = FeedForward(dim, mlp_factor)
        self.norm2 = nn.LayerNorm(dim, eps=LN_EPS)

    def forward(self, x: Tensor, causal: bool = False) -> Tensor:
        h = self.norm1(x + self.attn(x, causal=causal))
        return self.norm2(h + self.mlp(h))

    def forward_last(self, x: Tensor) -> Tensor:
        """The block's output at the last position only, (..., 1, D): the last query attends to every
        position (causal or not, the last token sees them all), so it equals ``forward(x)[..., -1:, :]``
        for about a fifth of the work at length 25."""
        last = x[..., -1:, :]
        h = self.norm1(last + self.attn(last, x))
        return self.norm2(h + self.mlp(h))


class DecoderLayer(nn.Module):
    """Post-LN decoder block: masked self-attention, unmasked cross-attention, MLP."""

    def __init__(self, dim: int, num_heads: int, mlp_factor: int = 4, attn_dropout: float = 0.0) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(dim, num_heads, attn_dropout)
        self.norm1 = nn.LayerNorm(dim, eps=LN_EPS)
        self.cross_attn = MultiHeadAttention(dim, num_heads, attn_dropout)
        self.norm2 = nn.LayerNorm(dim, eps=LN_EPS)
        self.mlp = FeedForward(dim, mlp_factor)
        self.norm3 = nn.LayerNorm(dim, eps=LN_EPS)

    def forward(
        self,
        x: Tensor,
        context: Tensor | None = None,
        *,
        kv: tuple[Tensor, Tensor] | None = None,
        causal: bool = True,
    ) -> Tensor:
        h = self.norm1(x + self.self_attn(x, causal=causal))
        h = self.norm2(h + self.cross_attn(h, context, kv=kv))
        return self.norm3(h + self.mlp(h))


class TransformerDecoder(nn.Module):
    """A stack of :class:`DecoderLayer`; ``prepare`` caches the context's key/value heads."""

    def __init__(
        self, dim: int, num_layers: int, num_heads: int, mlp_factor: int = 4,
        attn_dropout: float = 0.0, causal: bool = True,
    ) -> None:
        super().__init__()
        self.causal = causal
        self.layers = nn.ModuleList(
            DecoderLayer(dim, num_heads, mlp_factor, attn_dropout) for _ in range(num_layers)
        )

    def prepare(self, context: Tensor) -> list[tuple[Tensor, Tensor]]:
        """Per-layer cross-attention keys/values of ``context`` (B, L, D) → [(B, h, L, d)] * layers."""
        return [layer.cross_attn.project_kv(context) for layer in cast("list[DecoderLayer]", self.layers)]

    def forward(
        self, queries: Tensor, context: Tensor | None = None, *,
        prepared: list[tuple[Tensor, Tensor]] | None = None,
    ) -> Tensor:
        """``queries`` (..., T, D); context (B, L, D) or prepared keys/values broadcastable to them."""
        if prepared is None:
            if context is None:
                raise ValueError("TransformerDecoder needs a context or prepared keys/values")
            prepared = self.prepare(context)
        x = queries
        for layer, kv in zip(self.layers, prepared):
            x = layer(x, kv=kv, causal=self.causal)
        return x


class TransformerEncoder(nn.Module):
    """A stack of :class:`EncoderLayer` (bidirectional unless ``causal``)."""

    def __init__(
        self, dim: int, num_layers: int, num_heads: int, mlp_factor: int = 4,
        attn_dropout: float = 0.0, causal: bool = False,
    ) -> None:
        super().__init__()
        self.causal = causal
        self.layers = nn.ModuleList(
            EncoderLayer(dim, num_heads, mlp_factor, attn_dropout) for _ in range(num_layers)
        )

    def forward(self, x: Tensor, last_only: bool = False) -> Tensor:
        """(..., L, D) → (..., L, D), or (..., 1, D) for the last position if ``last_only``."""
        layers = cast("list[EncoderLayer]", list(self.layers))
        final = layers.pop() if last_only and layers else None
        for layer in layers:
            x = layer(x, causal=self.causal)
        return x if final is None else final.forward_last(x)


class SequenceEmbedding(nn.Module):
    """Linear projection of a sequence plus a learned positional embedding (init N(0, 1))."""

    def __init__(self, in_dim: int, dim: int, length: int) -> None:
        super().__init__()
        # With no input features (e.g. a task without commands) only the bias and positions remain.
        self.proj = nn.Linear(in_dim, dim) if in_dim > 0 else None
        self.bias = None if in_dim > 0 else nn.Parameter(torch.zeros(dim))
        self.pos = nn.Parameter(torch.randn(length, dim))
        if self.proj is not None:
            init_linear_(self.proj)

    def forward(self, x: Tensor) -> Tensor:
        length = x.shape[-2]
        if length > self.pos.shape[0]:
            raise ValueError(f"sequence of length {length} exceeds the embedding's {self.pos.shape[0]} positions")
        if self.proj is not None:
            base = self.proj(x)
        else:
            assert self.bias is not None  # no input features: bias and positions only
            base = self.bias.expand(*x.shape[:-1], -1)
        return base + self.pos[:length]
