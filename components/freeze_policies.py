"""Registered freeze policies: ``all`` (pretraining), ``dynamics_only`` (SimDist's finetuning), ``heads_only`` and
``score_heads`` (the reward and value heads, for ranking distillation).
A comma-separated list of component names is a policy too (:meth:`simdist.model.freeze.FreezePolicy.parse`)."""

from __future__ import annotations

from simdist.model.freeze import ALL, FreezePolicy
from simdist.registry import register


@register("freeze_policy", "all")
class TrainAll(FreezePolicy):
    """Pretraining: every component trains."""

    def __init__(self, eval_frozen: bool = True) -> None:
        super().__init__(ALL, eval_frozen)


@register("freeze_policy", "dynamics_only")
class DynamicsOnly(FreezePolicy):
    """SimDist finetuning: only the dynamics trains; encoder, embeddings, heads, normaliser are frozen."""

    def __init__(self, eval_frozen: bool = True) -> None:
        super().__init__({"dynamics"}, eval_frozen)


@register("freeze_policy", "heads_only")
class HeadsOnly(FreezePolicy):
    """Reward, value and policy heads train; the representation and dynamics are frozen."""

    def __init__(self, eval_frozen: bool = True) -> None:
        super().__init__({"reward", "value", "policy"}, eval_frozen)


@register("freeze_policy", "score_heads")
class ScoreHeads(FreezePolicy):
    """The reward and value heads train, the two parts of the planner's score; the encoder, dynamics, policy head
    and embeddings are frozen (``simdist value-rank fit --train score_heads``: the heads learn to score the
    frozen dynamics' imagined latents)."""

    def __init__(self, eval_frozen: bool = True) -> None:
        super().__init__({"reward", "value"}, eval_frozen)
