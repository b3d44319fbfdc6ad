"""Lightning training: modules, schedule, CLI; held-out evaluation of a world model on logged episodes."""

from simdist.training.evaluate import episode_batch
from simdist.training.module import FinetuneModule, PretrainModule, WorldModelModule

__all__ = ["FinetuneModule", "PretrainModule", "WorldModelModule", "episode_batch"]
