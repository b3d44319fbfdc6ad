"""Lightning training: modules, schedule, CLI; held-out evaluation of a world model on logged episodes; the reward
and value heads trained on the planner's own candidates and the value head on the model's imagined returns
(``simdist value-rank``, loaded on first access)."""

from simdist.lazy import lazy_getattr
from simdist.training.evaluate import episode_batch
from simdist.training.module import FinetuneModule, PretrainModule, WorldModelModule

_LAZY = {name: "candidate_ranking" for name in (
    "CandidateSet", "CandidateRankingModule", "collect_candidate_set", "fit_candidate_ranking", "ranking_loss",
    "loss_scales", "listwise_loss", "parts_loss", "score_candidates", "train_on_states")} | {
    name: "imagined_value" for name in ("ImaginedValueModule", "fit_imagined_value", "lambda_returns")}

__all__ = ["FinetuneModule", "PretrainModule", "WorldModelModule", "episode_batch", *_LAZY]

__getattr__ = lazy_getattr(__name__, _LAZY, globals())
