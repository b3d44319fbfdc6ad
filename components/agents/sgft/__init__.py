"""The SGFT baseline (``sgft``): simulation-guided finetuning, SAC on rewards shaped by a value function
learned in simulation with the horizon cut to one step (BASELINES.md 4)."""

from simdist.components.agents.sgft.modeling import SGFTAgent

__all__ = ["SGFTAgent"]
