"""The RLPD baseline (``rlpd``): SAC with symmetric prior/online sampling, LayerNorm critics and a REDQ-style
ensemble at a high update-to-data ratio, on SimDist's frozen encoder (BASELINES.md 3)."""

from simdist.components.agents.rlpd.modeling import RLPDAgent

__all__ = ["RLPDAgent"]
