"""``RLPDAgent``: RL with Prior Data (Ball et al., 2023) with torchrl's ``REDQLoss``.

Plain SAC plus RLPD's three changes (BASELINES.md 3.1): every batch half prior data, half online data
(``online_fraction`` 0.5; the prior is the simulation data and the demos, never mixed into the online buffer);
LayerNorm in the critics; ``utd`` 20 critic updates per real transition with an ensemble of 10 critics whose
target is the minimum over a random subset of 2 (torchrl's ``REDQLoss``). The actor (mean over all critics) and
the temperature step once per ``utd`` critic steps; target entropy −|A|/2, α₀ 1, MSE critic loss and no α
floor (torchrl's REDQ defaults of smooth-L1 and α ≥ 0.1 are not RLPD's). The actor starts from the
single-step BC policy (the paper's start, instead of RLPD's random-action warm-up); the critics start fresh.

Deviations, said: the Gaussian actor has a state-independent log-std on an unsquashed mean (it is the BC
head; actions are clipped to the bounds when executed); torchrl's REDQ keeps the entropy term in the backup,
which RLPD switches off for sparse tasks.
"""

from __future__ import annotations

from simdist.components.agents.latent.redq import REDQSACAgent
from simdist.registry import register

__all__ = ["RLPDAgent"]


@register("agent", "rlpd")
class RLPDAgent(REDQSACAgent):
    """RLPD on frozen SimDist features: the shared REDQ-SAC body with RLPD's settings; see the module docstring."""
