"""``planner/policy``: the world model's base-policy head alone, behind the planner interface."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from torch import Tensor, nn

from simdist.planning.base import Planner, PlanResult, discounted_return
from simdist.registry import register
from simdist.schema import Validated, bounds


@dataclass
class PolicyConfig(Validated):
    """The settings of :class:`PolicyPlanner` (``--planner policy --planner.score true``)."""

    discount: float = field(default=0.99, metadata=bounds(gt=0, le=1))
    score: bool = False
    action_low: Any = None
    action_high: Any = None
    seed: int | None = None


@register("planner", "policy")
class PolicyPlanner(Planner):
    """Executes the first action of the policy head's chunk; ``plan`` is the whole chunk (clipped).

    ``score=True`` also imagines the chunk and reports its return (one extra ``imagine`` per tick). ``seed`` is
    accepted and unused (the head is deterministic), so the acting settings every tool passes (``--seed``) build
    any planner.
    """

    config_class = PolicyConfig  # the schema of its settings

    def __init__(self, world_model: nn.Module, config: PolicyConfig | None = None, **settings: Any) -> None:
        cfg = replace(config or PolicyConfig(), **settings)
        if world_model.policy is None:
            raise ValueError("PolicyPlanner needs a world model with a policy head (config.policy_head)")
        super().__init__(world_model, cfg.action_low, cfg.action_high)
        self.config = cfg
        self.discount, self.score = cfg.discount, cfg.score

    def _plan(self, obs_hist: dict[str, Tensor], act_hist: Tensor, command: Tensor | None) -> PlanResult:
        wm = self.world_model
        encoding = wm.encode(obs_hist, act_hist)
        chunk = self.clip(wm.policy_actions(encoding, command))
        returns = None
        if self.score:
            im = wm.imagine(encoding, chunk, command)
            returns = discounted_return(im.rewards, im.values, self.discount, wm.config.value_offset)
        return PlanResult(action=chunk[:, 0].clone(), plan=chunk, returns=returns)
