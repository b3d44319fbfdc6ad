"""Lightning training: modules, schedule, CLI."""

from simdist.training.module import FinetuneModule, PretrainModule, WorldModelModule

__all__ = ["FinetuneModule", "PretrainModule", "WorldModelModule"]
