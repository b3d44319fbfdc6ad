"""Evaluation results of any task: per-trial values, success flags and 95 % bootstrap intervals.

Every table simdist prints for an evaluation gives the mean, a 95 % confidence interval (percentile
bootstrap over trials, with a fixed seed so the same trials always give the same interval) and the trial
count. Two results whose intervals overlap are reported as no difference (:func:`compare`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: bootstrap resamples behind every interval (the interval's third digit is stable at this count)
RESAMPLES = 10_000
CONFIDENCE = 0.95
#: the detail :meth:`EvaluationResult.concat` records per-pass values under when a detail differs between passes
DIFFERS_BY_PASS = "differs_by_pass"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` trials with its ``confidence`` bootstrap interval [low, high]."""

    mean: float
    low: float
    high: float
    n: int
    confidence: float = CONFIDENCE

    def format(self, fmt: str = ".3g") -> str:
        if self.n == 0:
            return "n/a (0 trials)"
        return f"{self.mean:{fmt}} [{self.low:{fmt}}, {self.high:{fmt}}] (n={self.n})"

    def interval(self, fmt: str = ".3g") -> str:
        """``mean [low, high]`` (without the trial count)."""
        if self.n == 0:
            return "n/a"
        return f"{self.mean:{fmt}} [{self.low:{fmt}}, {self.high:{fmt}}]"

    def __str__(self) -> str:
        return self.format()

    def overlaps(self, other: Estimate) -> bool:
        """Whether the two intervals overlap (then the difference is reported as none)."""
        return self.low <= other.high and other.low <= self.high


def bootstrap_ci(values: Sequence[float] | np.ndarray, *, confidence: float = CONFIDENCE,
                 resamples: int = RESAMPLES, seed: int = 0) -> Estimate:
    """Mean of ``values`` with a percentile-bootstrap interval (deterministic for a given ``seed``).

    Non-finite values are refused: a diverged trial must be scored by the task, not averaged as NaN.
    """
    x = np.asarray(values, np.float64).ravel()
    if not np.isfinite(x).all():
        raise ValueError(f"bootstrap_ci got {int((~np.isfinite(x)).sum())} non-finite value(s) of {x.size}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if x.size == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0, confidence)
    if x.size == 1 or np.ptp(x) == 0.0:
        return Estimate(float(x.mean()), float(x.min()), float(x.max()), int(x.size), confidence)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Estimate(float(x.mean()), float(low), float(high), int(x.size), confidence)


def ratio_bootstrap_ci(numerator: Sequence[float] | np.ndarray, denominator: Sequence[float] | np.ndarray, *,
                       confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = 0) -> Estimate:
    """Σ numerator / Σ denominator over paired units (e.g. states) with a percentile-bootstrap interval, the units
    resampled in pairs (deterministic for a given ``seed``): a pooled ratio, which units whose denominator is
    near zero cannot blow up as a mean of per-unit ratios would. Non-finite values are refused."""
    num, den = np.asarray(numerator, np.float64).ravel(), np.asarray(denominator, np.float64).ravel()
    if num.shape != den.shape:
        raise ValueError(f"numerator and denominator must pair up, got {num.size} and {den.size} values")
    if not (np.isfinite(num).all() and np.isfinite(den).all()):
        raise ValueError("ratio_bootstrap_ci got non-finite value(s)")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if num.size == 0 or den.sum() == 0.0:
        return Estimate(float("nan"), float("nan"), float("nan"), int(num.size), confidence)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, num.size, size=(resamples, num.size))
    dens = den[idx].sum(axis=1)
    ratios = num[idx].sum(axis=1) / np.where(dens == 0.0, np.nan, dens)
    tail = (1.0 - confidence) / 2.0
    low, high = np.nanquantile(ratios, [tail, 1.0 - tail])
    return Estimate(float(num.sum() / den.sum()), float(low), float(high), int(num.size), confidence)


def seeds_bootstrap_ci(per_seed: Sequence[Sequence[float] | np.ndarray], *, confidence: float = CONFIDENCE,
                       resamples: int = RESAMPLES, seed: int = 0) -> Estimate:
    """Mean over training seeds (each seed's trials averaged, seeds weighted equally) with a two-level
    percentile-bootstrap interval: seeds resampled, then trials within each drawn seed, so the interval holds
    both the spread between training runs and the evaluation noise. ``n`` counts the trials."""
    groups = [np.asarray(g, np.float64).ravel() for g in per_seed]
    groups = [g for g in groups if g.size]
    if not groups:
        return Estimate(float("nan"), float("nan"), float("nan"), 0, confidence)
    if any(not np.isfinite(g).all() for g in groups):
        raise ValueError("seeds_bootstrap_ci got non-finite values")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    mean = float(np.mean([g.mean() for g in groups]))
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(groups), size=(resamples, len(groups)))
    means = np.empty(resamples)
    for r in range(resamples):
        means[r] = np.mean([groups[i][rng.integers(0, groups[i].size, groups[i].size)].mean() for i in picks[r]])
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Estimate(mean, float(min(low, mean)), float(max(high, mean)), int(sum(g.size for g in groups)), confidence)


def compare(before: Estimate, after: Estimate, what: str = "the metric", fmt: str = ".3g") -> str:
    """One sentence saying whether ``after`` differs from ``before`` beyond their intervals."""
    if before.n == 0 or after.n == 0:
        return f"{what}: no comparison (a side has no trials)"
    sides = f"{after.format(fmt)} vs {before.format(fmt)}"
    if before.overlaps(after):
        return f"{what}: no difference ({sides}: the {before.confidence:.0%} intervals overlap)"
    direction = "higher" if after.mean > before.mean else "lower"
    return f"{what}: {direction} ({sides}: the {before.confidence:.0%} intervals do not overlap)"


@dataclass
class EvaluationResult:
    """What a task's evaluation protocol returns.

    ``values`` holds the metric of every trial, ``success`` and ``diverged`` flags per trial (a diverged
    simulation never counts as progress or success: the task scores it as a failure with its worst value and
    flags it), ``groups`` an optional condition label per trial (e.g. the commanded speed), ``details``
    task-specific extras (the full protocol record).
    """

    task: str
    metric: str
    values: list[float]
    success: list[bool]
    diverged: list[bool] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    profile: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.values)
        self.values = [float(v) for v in self.values]
        self.success = [bool(s) for s in self.success]
        self.diverged = [bool(d) for d in self.diverged] or [False] * n
        for name in ("success", "diverged", "groups"):
            got = len(getattr(self, name))
            if got not in ((0, n) if name == "groups" else (n,)):
                raise ValueError(f"EvaluationResult.{name} has {got} entries for {n} trials")
        if not all(np.isfinite(self.values)):
            raise ValueError(f"{self.task}: non-finite {self.metric} in a trial; tasks must score diverged "
                             "trials explicitly (diverged=True)")

    @property
    def trials(self) -> int:
        """The number of trials."""
        return len(self.values)

    def estimate(self, group: str | None = None) -> Estimate:
        """Mean metric with its bootstrap interval, over all trials or one group's."""
        return bootstrap_ci(self._select(self.values, group))

    def success_estimate(self, group: str | None = None) -> Estimate:
        """Success rate with its bootstrap interval, over all trials or one group's."""
        return bootstrap_ci([float(s) for s in self._select(self.success, group)])

    @property
    def mean(self) -> float:
        """Mean metric over all trials (NaN without trials)."""
        return float(np.mean(self.values)) if self.values else float("nan")

    @property
    def success_rate(self) -> float:
        """Fraction of successful trials (NaN without trials)."""
        return float(np.mean(self.success)) if self.success else float("nan")

    @property
    def diverged_count(self) -> int:
        """How many trials' simulations diverged."""
        return int(sum(self.diverged))

    def _select(self, items: Sequence[Any], group: str | None) -> list[Any]:
        if group is None:
            return list(items)
        return [x for x, g in zip(items, self.groups) if g == group]

    def group_names(self) -> list[str]:
        """The trials' condition labels, each once, in order of first appearance."""
        return list(dict.fromkeys(self.groups))

    def table(self, fmt: str = ".3f") -> str:
        """Markdown table: per group (if any) and overall, the metric's mean [95 % CI], the trial count and the
        success rate [95 % CI]."""
        rows = [(g, self.estimate(g), self.success_estimate(g)) for g in self.group_names()]
        rows.append(("all", self.estimate(), self.success_estimate()))
        where = f"{self.task} on {self.profile}" if self.profile else self.task
        lines = [f"| {where} | {self.metric}: mean [95 % CI] | trials | success rate [95 % CI] |",
                 "|---|---|---|---|"]
        lines += [f"| {name} | {m.interval(fmt)} | {m.n} | {s.interval('.2f')} |" for name, m, s in rows]
        if self.diverged_count:
            lines.append(f"\n{self.diverged_count} of {self.trials} trials diverged (scored as failures).")
        return "\n".join(lines)

    def summary(self) -> dict[str, Any]:
        """Mean, interval and trial count of the metric and the success rate, as plain numbers."""
        m, s = self.estimate(), self.success_estimate()
        return {"metric": self.metric, "mean": m.mean, "ci95": [m.low, m.high], "trials": m.n,
                "success_rate": s.mean, "success_ci95": [s.low, s.high], "diverged": self.diverged_count}

    def to_dict(self) -> dict[str, Any]:
        """Every field plus the ``summary``, JSON-ready (what ``simdist evaluate --json`` writes)."""
        return {**asdict(self), "summary": self.summary()}

    @classmethod
    def concat(cls, results: Sequence[EvaluationResult]) -> EvaluationResult:
        """Consecutive passes of one protocol as one result
        (:meth:`~simdist.capabilities.EvaluationProtocol.evaluation_passes`).

        ``values``, ``success``, ``diverged`` and ``groups`` are concatenated in order; so is every detail that
        is a list with one entry per trial in every pass. Any other detail must be the same in every pass: where
        it is not, the first pass's value is kept and the values of all passes are recorded under
        ``details["differs_by_pass"][KEY]`` (with a warning). ``task``, ``metric`` and ``profile`` must agree.
        """
        results = list(results)
        if not results:
            raise ValueError("EvaluationResult.concat needs at least one result")
        first = results[0]
        for r in results[1:]:
            for name in ("task", "metric", "profile"):
                if getattr(r, name) != getattr(first, name):
                    raise ValueError(f"EvaluationResult.concat: the passes disagree on {name} "
                                     f"({getattr(first, name)!r} vs {getattr(r, name)!r})")
        if len({bool(r.groups) for r in results}) > 1:
            raise ValueError("EvaluationResult.concat: some passes label their trials with groups, others do not")
        missing = object()
        details: dict[str, Any] = {}
        differs: dict[str, list[Any]] = {}
        for key in dict.fromkeys(k for r in results for k in r.details):
            got = [r.details.get(key, missing) for r in results]
            if all(isinstance(v, list) and len(v) == r.trials for v, r in zip(got, results)):
                details[key] = [x for v in got for x in v]
            elif all(v is not missing and _same(v, got[0]) for v in got):
                details[key] = got[0]
            else:
                details[key] = None if got[0] is missing else got[0]
                differs[key] = [None if v is missing else v for v in got]
        if differs:
            logger.warning("%s: details %s differ between the %d passes; kept the first pass's (all under "
                           "details[%r])", first.task, sorted(differs), len(results), DIFFERS_BY_PASS)
            details[DIFFERS_BY_PASS] = differs
        return cls(task=first.task, metric=first.metric, profile=first.profile,
                   values=[v for r in results for v in r.values], success=[s for r in results for s in r.success],
                   diverged=[d for r in results for d in r.diverged], groups=[g for r in results for g in r.groups],
                   details=details)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvaluationResult:
        """The result back from :meth:`to_dict`'s dict (extra keys such as ``summary`` ignored)."""
        keys = {"task", "metric", "values", "success", "diverged", "groups", "profile", "details"}
        missing = sorted({"task", "metric", "values", "success"} - set(data))
        if missing:
            raise ValueError(f"not an evaluation result: missing {missing}")
        return cls(**{k: v for k, v in data.items() if k in keys})

    @classmethod
    def load(cls, path: str | Path) -> EvaluationResult:
        """Read a result saved by ``simdist evaluate --json`` (clear error for any other file)."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as err:
            raise ValueError(f"{path}: cannot read an evaluation result: {err}") from err
        try:
            return cls.from_dict(data)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{path}: {err}") from err


def _same(a: Any, b: Any) -> bool:
    """Equal values (also nested containers of arrays, compared by their JSON form)."""
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays compare elementwise
        return json.dumps(a, sort_keys=True, default=repr) == json.dumps(b, sort_keys=True, default=repr)
