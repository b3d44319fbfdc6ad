"""The model-free baselines' shared body: transitions in a frozen SimDist encoder's feature space, their replay,
and :class:`LatentAgent` (an MLP actor and critics on that encoder, trained offline and online)."""

from simdist.components.agents.latent.agent import COMMON_SETTINGS, LatentAgent, LatentModel
from simdist.components.agents.latent.replay import EncodedFolders, mixed_batch, uniform_batch
from simdist.components.agents.latent.transitions import (
           REWARD_LABELS,
           Transitions,
           encode_transitions,
           episode_features,
)

__all__ = ["COMMON_SETTINGS", "REWARD_LABELS", "EncodedFolders", "LatentAgent", "LatentModel", "Transitions",
           "encode_transitions", "episode_features", "mixed_batch", "uniform_batch"]
