"""Deprecated: the evaluation results and statistics moved to :mod:`simdist.evaluation` (so that ``simdist.tasks``
imports no workflow). This module re-exports them for one release, with a ``FutureWarning``."""

from __future__ import annotations

import warnings

from simdist.evaluation import (
    CONFIDENCE,
    RESAMPLES,
    Estimate,
    EvaluationResult,
    bootstrap_ci,
    compare,
    ratio_bootstrap_ci,
    seeds_bootstrap_ci,
)

__all__ = ["CONFIDENCE", "RESAMPLES", "Estimate", "EvaluationResult", "bootstrap_ci", "compare",
           "ratio_bootstrap_ci", "seeds_bootstrap_ci"]

warnings.warn("simdist.workflows.evaluation moved to simdist.evaluation; import it from there (this alias goes in "
              "the next release)", FutureWarning, stacklevel=2)
