"""The ``toy-reach`` task: a MuJoCo point mass pushed to a goal; the ``real`` profile is a heavier puck on a
slippery slope the simulator does not model (profiles: :mod:`.profiles`). Metric: the mean episode return."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from simdist.capabilities import DataGeneration, EvaluationProtocol, StateCloning
from simdist.components.tasks.toy_reach.constants import SUCCESS_RADIUS
from simdist.data.schema import DatasetSpec
from simdist.evaluation import EvaluationResult
from simdist.registry import register
from simdist.tasks import TaskError

#: success: the puck ends within this distance (m) of the goal
TOY_SUCCESS_RADIUS = SUCCESS_RADIUS


@register("task", "toy-reach")
@dataclass
class ToyReachTask(EvaluationProtocol, StateCloning, DataGeneration):
    """``profile``: ``real`` (the proxy-real variant), ``sim`` or None (both: the training simulator), or any
    toy-reach profile (a YAML path or a dict; keys in :data:`.profiles.PROFILE_SCHEMA`)."""

    profile: Any = "real"

    metric: ClassVar[str] = "return"
    dt: ClassVar[float] = 0.1
    planner_defaults: ClassVar[dict[str, Any]] = {"num_elites": 16}
    scripted_experts: ClassVar[bool] = True
    default_demo: ClassVar[bool] = True  # its lag demo shows adaptation beating zero-shot (docs/plan-ranking.md)
    demo_hook: ClassVar[str | None] = "simdist.components.tasks.toy_reach.demo:ToyDemo"
    profile_module: ClassVar[str | None] = "simdist.components.tasks.toy_reach.profiles"
    preset: ClassVar[str | None] = "toy"
    #: V^e's rollout length after a candidate in :meth:`true_returns` (the tail of the critic's label returns)
    expert_steps: ClassVar[int] = 400

    def __post_init__(self) -> None:
        if self.profile is not None:  # parsed once (a bad profile is refused before any env is built); it travels
            self.profile = self.load_profile(self.profile)

    def variant(self, real: bool) -> Any:
        """The env's profile: this task's on the real env, ``sim`` on the training simulator."""
        return (self.profile or "sim") if real else "sim"

    def make_env(self, num_envs: int, seed: int, real: bool = True) -> Any:
        from simdist.components.tasks.toy_reach.pointmass import ToyReachEnv

        return ToyReachEnv(num_envs, variant=self.variant(real), seed=seed)

    def dataset_spec(self) -> DatasetSpec:
        env = self.make_env(1, 0)
        try:
            return DatasetSpec.from_env(env)
        finally:
            env.close()

    def evaluate(self, agent: Any, trials: int, seed: int, num_envs: int = 8, log: Any = None) -> EvaluationResult:
        from simdist.workflows.rollout import rollout

        env = self.make_env(num_envs, seed)
        try:
            result = rollout(env, agent, episodes=trials, seed=seed)
        finally:
            env.close()
        distances = final_distances(result)
        return EvaluationResult(task=self.task_name, metric=self.metric, profile=self.profile_name,
                                values=result.returns.tolist(), success=(distances < TOY_SUCCESS_RADIUS).tolist(),
                                details={"final_distance": distances.tolist()})

    def success(self, result: Any) -> np.ndarray:
        return final_distances(result) < TOY_SUCCESS_RADIUS

    def builtin_agent(self, spec: str) -> Any | None:
        """``expert``: the scripted PD expert of the data generator, a ``policy(obs)`` callable on this task's
        observations (on ``real`` some of its attempts fail); ``retuned``: the PD expert retuned for this task's
        profile's actuators (:func:`.expert.expert_for`: a Smith predictor for its latency and gain); None
        otherwise."""
        from simdist.components.tasks.toy_reach.expert import expert_for, expert_policy

        if spec == "expert":
            return expert_policy()
        if spec == "retuned":
            return expert_for(self.load_profile(self.profile or "sim"))
        return None

    # -- cloned states (the planner-ranking analysis, simdist.diagnostics.mechanism) -----------------------
    def snapshot_states(self, env: Any, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Copies of the point masses of ``env``'s rows (MuJoCo integration state, mass, friction, goal, step)."""
        from simdist.components.tasks.toy_reach.clone import snapshot

        return snapshot(env, rows)

    def true_returns(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                     progress: bool = False) -> np.ndarray:
        """The candidates open loop on this task's profile from cloned states, then the PD expert for
        :attr:`expert_steps` steps on the same profile: Σ_{k<T} γ^k r_k + γ^T V^e(s_T), V^e the expert's
        discounted return with no time limit and leaving the arena absorbing, as the critic that labels the
        toy's values is fitted (:mod:`.clone` says why it is rolled rather than read off that critic)."""
        return self._continued(states, rows, actions, gamma, seed, self.expert_steps, progress)

    def true_return_parts(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                          progress: bool = False) -> dict[str, np.ndarray]:
        """:meth:`true_returns` and its part inside the horizon (the candidate open loop alone, the expert given no
        steps); ``tail`` is their difference (``fell``, leaving the arena within the horizon, is not reported)."""
        total = self._continued(states, rows, actions, gamma, seed, self.expert_steps, progress)
        horizon = self._continued(states, rows, actions, gamma, seed, 0, progress)
        return {"total": total, "horizon": horizon, "tail": total - horizon}

    def critic_return_parts(self, states: Any, rows: np.ndarray, actions: np.ndarray, *, gamma: float, seed: int,
                            progress: bool = False) -> dict[str, np.ndarray]:
        """The candidates open loop, then the toy's expert critic V̂^e at the end state (fitted as the one that
        labels the pretraining data's values, :func:`.critic.fit_expert_critic`, seed 0, 300 epochs) instead of
        the expert's 400-step rollout: T env steps a candidate instead of T + 400. Only on the training
        simulator, where the critic is fitted; another profile is refused."""
        from simdist.components.tasks.toy_reach.clone import critic_continuation_parts
        from simdist.rows import take_rows

        if self.profile_name not in (None, "sim"):
            raise TaskError(f"the toy's critic is fitted on the training simulator; profile {self.profile_name!r} "
                            "needs the expert's continuation (--truth expert)")
        return critic_continuation_parts(lambda n, s: self.make_env(n, s, real=True),
                                         take_rows(states, np.asarray(rows, np.int64)), actions, _critic(),
                                         gamma=gamma, seed=seed)

    def restore_states(self, env: Any, states: Any, rows: np.ndarray) -> dict[str, np.ndarray]:
        """:func:`.clone.restore`: the point masses written into ``env``'s ``rows``; their observations."""
        from simdist.components.tasks.toy_reach.clone import restore

        return restore(env, states, rows)

    def _continued(self, states: Any, rows: np.ndarray, actions: np.ndarray, gamma: float, seed: int,
                   expert_steps: int, progress: bool) -> np.ndarray:
        from simdist.components.tasks.toy_reach.clone import expert_continuation_returns
        from simdist.rows import take_rows

        return expert_continuation_returns(lambda n, s: self.make_env(n, s, real=True),
                                           take_rows(states, np.asarray(rows, np.int64)), actions, gamma=gamma,
                                           seed=seed, expert_steps=expert_steps, progress=progress)

    def generate(self, out: str, *, experts: str | None, num_envs: int, transitions: int, seed: int,
                 progress: bool = True, **options: Any) -> dict[str, Any]:
        """The scripted PD expert / sub-optimal mixture on the training simulator (``experts`` unused)."""
        from simdist.components.tasks.toy_reach.data import generate_toy_dataset

        options.pop("args", None)
        options.pop("preset", None)
        return generate_toy_dataset(out, variant="sim", num_envs=num_envs, transitions=transitions, seed=seed,
                                    progress=progress, **options)


@functools.lru_cache(maxsize=1)
def _critic() -> Any:
    """The toy's expert critic of seed 0, fitted once per process (a few seconds)."""
    from simdist.components.tasks.toy_reach.critic import fit_expert_critic

    return fit_expert_critic(seed=0)


def final_distances(result: Any) -> np.ndarray:
    """Distance to the goal at the end of each episode of a rollout result (the state starts with p − g)."""
    return np.array([np.linalg.norm(info["final_obs"]["state"][:2]) for info in result.final_info])
