"""The IQL baseline (``iql``): implicit Q-learning on SimDist's frozen encoder, pretrained offline on the
simulation data, then finetuned online (BASELINES.md 2)."""

from simdist.components.agents.iql.modeling import IQLAgent

__all__ = ["IQLAgent"]
