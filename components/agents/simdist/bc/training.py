"""``DemoBCModule``: SimDist's finetuning module for the BC phase of SimDist+BC (imported only to train, so that
registering the agent does not import Lightning)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from simdist.training import FinetuneModule

#: the BC phase's loss: the action (behaviour-cloning) term alone
BC_LOSS_WEIGHTS = {"dynamics": 0.0, "reward": 0.0, "value": 0.0, "action": 1.0}


class DemoBCModule(FinetuneModule):
    """A :class:`~simdist.training.FinetuneModule` whose action term counts every demonstration step.

    :class:`~simdist.WorldModelLoss` masks the BC term by the expert flags (simulation data flags the
    uncorrupted expert steps); demonstrations logged by a rollout flag none, yet every one of their actions is
    the demonstrator's, so this module sets the flags of each training batch to 1 (the datasets stay as they
    are). Future steps of a window never reach the front padding, so no padded action is cloned.
    """

    def _augment(self, batch: Mapping[str, Any]) -> dict[str, Any]:
        batch = super()._augment(batch)
        batch["expert"] = torch.ones_like(batch["expert"])
        return batch
