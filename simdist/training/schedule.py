"""Learning-rate schedules."""

from __future__ import annotations

import math


def warmup_cosine(step: int, peak: float, warmup_steps: int, decay_steps: int, end: float) -> float:
    """optax ``warmup_cosine_decay_schedule`` with init 0: linear 0 → ``peak`` over ``warmup_steps``,
    cosine to ``end`` at ``decay_steps`` (the warmup counted inside), then constant."""
    if warmup_steps > 0 and step < warmup_steps:
        return peak * step / warmup_steps
    span = max(decay_steps - warmup_steps, 1)
    progress = min(max(step - warmup_steps, 0) / span, 1.0)
    return end + (peak - end) * 0.5 * (1.0 + math.cos(math.pi * progress))
