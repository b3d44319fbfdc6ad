"""The :class:`DataGeneration` capability: a task's pretraining data generator and its defaults."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

from simdist.capabilities.envs import EnvFactory


class DataGeneration(EnvFactory):
    """A task with a data generator (``simdist generate --task NAME``).

    ``data_defaults``: the data engine's settings, e.g. ``{"presets": {NAME: {"num_envs": B, "transitions": N}}}``
    (``simdist generate --preset``); ``scripted_experts``: the generator's experts are scripted, so
    ``simdist generate --experts`` does not apply.
    """

    data_defaults: ClassVar[dict[str, Any]] = {}
    scripted_experts: ClassVar[bool] = False

    @abc.abstractmethod
    def generate(self, out: str, *, experts: str | None, num_envs: int, transitions: int, seed: int,
                 progress: bool = True, **options: Any) -> dict[str, Any]:
        """Generate (or resume) a pretraining dataset in ``out``; returns its summary.

        ``options`` may hold ``parts``, ``rank`` and ``world`` (``simdist generate --parts``): the run split into
        parts, of which this worker runs its share (:func:`simdist.data.parts.run_parts`)."""
