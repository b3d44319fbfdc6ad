"""The baselines' shared body: the single-step policy on SimDist's encoder (:class:`BCPolicy`, its
:class:`BCConfig`), transitions in a frozen encoder's feature space, their replay, and :class:`LatentAgent` (an MLP
actor and critics on that encoder, trained offline and online). Agents import from here, never from each other."""

from simdist.components.agents.latent.agent import COMMON_SETTINGS, LatentAgent, LatentModel
from simdist.components.agents.latent.bc_config import BCConfig
from simdist.components.agents.latent.bc_policy import BCPolicy
from simdist.components.agents.latent.replay import EncodedFolders, mixed_batch, uniform_batch
from simdist.components.agents.latent.transitions import (
           REWARD_LABELS,
           Transitions,
           encode_transitions,
           episode_features,
)

__all__ = ["COMMON_SETTINGS", "REWARD_LABELS", "BCConfig", "BCPolicy", "EncodedFolders", "LatentAgent", "LatentModel",
           "Transitions", "encode_transitions", "episode_features", "mixed_batch", "uniform_batch"]
