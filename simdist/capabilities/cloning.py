"""The :class:`StateCloning` capability: copies of a task's simulation states and the true returns from them
(the plan-ranking and response diagnostics, :mod:`simdist.diagnostics`)."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from simdist.capabilities.envs import EnvFactory
from simdist.tasks import TaskError


class StateCloning(EnvFactory):
    """A task whose envs' full simulation states can be cloned, and whose expert can continue from a clone.

    :meth:`snapshot_states` and :meth:`true_returns` are required; :meth:`true_return_parts` (the return split into
    its parts) and :meth:`restore_states` (replaying actions from a clone, for the response diagnostic) are optional:
    a task that cannot give them says so in one line.
    """

    #: most cloned states restored into one env at a time (:func:`simdist.workflows.rollout.open_loop_observations`)
    clone_batch: ClassVar[int] = 256

    @abc.abstractmethod
    def snapshot_states(self, env: Any, rows: np.ndarray) -> Any:
        """Copies of the full simulation state of ``env``'s rows, for :meth:`true_returns`."""

    @abc.abstractmethod
    def true_returns(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                     progress: bool = False) -> np.ndarray:
        """The return, on this task's env (its profile), of executing ``actions[i]`` (N, T, A) open loop from
        state ``rows[i]`` of ``states`` and then following the task's expert: Σ_{k<T} γ^k r_k + γ^T V^e(s_T),
        the quantity a world model's planner predicts for the same sequence."""

    def merge_states(self, snapshots: Sequence[Any]) -> Any:
        """One set of states from several :meth:`snapshot_states` results, rows in order (default: snapshots
        that are row-first trees of arrays, :func:`simdist.rows.concat_rows`)."""
        from simdist.rows import concat_rows

        return concat_rows(list(snapshots))

    def true_return_parts(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                          progress: bool = False) -> dict[str, np.ndarray]:
        """:meth:`true_returns` split into its parts, each (N,): ``total`` (the return), ``horizon``
        (Σ_{k<T} γ^k r_k, the candidate's own steps), ``tail`` (γ^T V^e(s_T), the continuation after it;
        ``horizon + tail == total``), ``fell`` (1.0 where the candidate ended the episode within its T steps),
        and optionally ``reward/NAME`` per reward term. Tasks that can split their returns implement it."""
        raise TaskError(f"task {self.task_name!r} cannot split its true returns into their parts")

    def critic_return_parts(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                            progress: bool = False) -> dict[str, np.ndarray]:
        """A cheap stand-in for :meth:`true_return_parts`: ``actions[i]`` open loop from state ``rows[i]``, then
        the task's fitted expert critic at the end state instead of the expert's rollout, Σ_{k<T} γ^k r_k +
        γ^T V̂^e(s_T); parts ``total``, ``horizon`` and ``tail``, each (N,). Tasks whose critic is valid on their
        profile implement it (``simdist value-rank collect --truth critic``)."""
        raise TaskError(f"task {self.task_name!r} has no fitted expert critic to end its candidates with "
                        "(use the expert's continuation, --truth expert)")

    def restore_states(self, env: Any, states: Any, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Write the cloned states ``states`` (from :meth:`snapshot_states`, one per entry of ``rows``) into rows
        ``rows`` of ``env``, an env of this task's profile, and return ``env``'s observations. Tasks that can
        replay actions from their clones implement it
        (:func:`simdist.workflows.rollout.open_loop_observations` needs it)."""
        raise TaskError(f"task {self.task_name!r} cannot run open-loop candidates from cloned states")

    @classmethod
    def splits_returns(cls) -> bool:
        """Whether the task implements :meth:`true_return_parts`."""
        return cls.true_return_parts is not StateCloning.true_return_parts

    @classmethod
    def restores_states(cls) -> bool:
        """Whether the task implements :meth:`restore_states`."""
        return cls.restore_states is not StateCloning.restore_states
