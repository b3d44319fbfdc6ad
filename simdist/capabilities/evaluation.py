"""The :class:`EvaluationProtocol` capability: how a task scores an agent (trials, metric, success)."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np

from simdist.capabilities.envs import EnvFactory
from simdist.evaluation import EvaluationResult


class EvaluationProtocol(EnvFactory):
    """A task with an evaluation protocol, run on its own envs (``simdist evaluate``, ``simdist adapt``, the demo).

    ``metric``: the protocol's per-trial value, higher is better.
    """

    metric: ClassVar[str] = "return"

    @abc.abstractmethod
    def evaluate(self, agent: Any, trials: int, seed: int, num_envs: int = 8, log: Any = None) -> EvaluationResult:
        """Run the task's protocol with ``agent`` (``trials``: the protocol's trial count per condition; ``log``:
        a print-like callable for progress lines, or None)."""

    @abc.abstractmethod
    def success(self, result: Any) -> np.ndarray:
        """Per finished episode of a rollout result (:class:`~simdist.workflows.rollout.RolloutResult`): did it
        succeed?"""

    def evaluation_batch(self, trials: int, num_envs: int) -> int:
        """The most envs ``evaluate(agent, trials, seed, num_envs)`` runs at once (the memory check's count)."""
        return min(trials, num_envs)

    def evaluation_passes(self, trials: int, seed: int) -> list[tuple[int, int]] | None:
        """The protocol ``evaluate(agent, trials, seed)`` as independent passes, or None (the default) when it
        cannot be split (e.g. all trials run in one batch).

        A task returns ``(trials, seed)`` pairs such that the results of ``evaluate(agent, t, s)`` for each pair,
        concatenated in order (:meth:`EvaluationResult.concat`), equal ``evaluate(agent, trials, seed)`` for the
        same ``num_envs``: each pass builds its own env and reseeds the agent, so it depends on its own
        arguments only. ``simdist evaluate --workers N`` runs the passes in worker processes."""
        return None

    def describe(self) -> dict[str, Any]:
        """:meth:`Task.describe` and the protocol's ``metric``."""
        return {**super().describe(), "metric": self.metric}
