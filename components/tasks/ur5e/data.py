"""The UR5e pretraining data: the generic data engine with the paper's manipulation settings.

At each episode start the scripted expert drives with probability 0.5, otherwise one of its ten degraded
variants; the manipulation perturbation windows (noised U[1, 5] steps, clean U[5, 10], σ ~ U[0.05, 1.0]
per env and dimension, 2.5 % of envs never noised) lie on top; the training simulator randomises the
physics and mixes the four reset kinds. Values are V^e of the fitted expert critic (:mod:`.value`), which
is fitted once per dataset folder and saved there (``critic.safetensors``, ``critic.json``), so a resumed
run labels with the same critic. Images are not rendered here: the ``physics`` group keeps what
:func:`.render.render_states` needs to render them afterwards.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from simdist.fsutil import atomic_path, atomic_write_json

logger = logging.getLogger(__name__)

EXPERT_PROB = 0.5
#: the value-label options of :func:`generate_ur5e` (``critic``: the default)
VALUE_LABELS = ("critic", "continuation")
CRITIC_WEIGHTS, CRITIC_REPORT = "critic.safetensors", "critic.json"


class PolicyMixture:
    """``mixture(env, obs) -> actions``: the data engine's mixture and perturbation, for collecting critic
    states outside the engine (the same policies, probabilities and noise windows)."""

    def __init__(self, expert: Any, suboptimal: list[Any], num_envs: int, action_dim: int, seed: int,
                 expert_prob: float = EXPERT_PROB) -> None:
        from simdist.data.engine import ActionPerturber, PerturbationConfig

        self.policies = [expert, *suboptimal]
        self.rng = np.random.default_rng(seed)
        self.expert_prob = expert_prob
        self.assign = self._draw(num_envs)
        self.perturber = ActionPerturber(PerturbationConfig.manipulation(), num_envs, action_dim, self.rng)

    def _draw(self, n: int) -> np.ndarray:
        expert = self.rng.random(n) < self.expert_prob
        return np.where(expert, 0, 1 + self.rng.integers(0, len(self.policies) - 1, n))

    def reset(self, ids: np.ndarray) -> None:
        self.assign[ids] = self._draw(len(ids))
        for p in self.policies:
            p.reset(ids)

    def __call__(self, env: Any, obs: dict[str, np.ndarray]) -> np.ndarray:
        actions = np.zeros((env.num_envs, 7), np.float32)
        for k in np.unique(self.assign):
            rows = self.assign == k
            actions[rows] = self.policies[k](obs)[rows]
        return np.clip(self.perturber(actions)[0], -1.0, 1.0)


def load_or_fit_critic(task: Any, out_dir: Path, *, seed: int, num_envs: int, steps: int, every: int = 10,
                       epochs: int = 200, progress: bool = False) -> tuple[Any, dict[str, Any]]:
    """The dataset's V^e critic: loaded from ``out_dir`` when a run already fitted it, else fitted and saved."""
    from safetensors.torch import load_file, save_file

    from simdist.components.tasks.ur5e.expert import make_expert, suboptimal_experts
    from simdist.components.tasks.ur5e.value import ArmCritic, fit_expert_critic
    from simdist.fsutil import read_json_object
    from simdist.tasks import TaskError

    weights, report_path = out_dir / CRITIC_WEIGHTS, out_dir / CRITIC_REPORT
    if weights.is_file() and report_path.is_file():
        stored = read_json_object(report_path)
        if stored.get("contacts", "noslip") != task.contacts:  # critics from before the option are noslip
            raise TaskError(f"{out_dir}: its critic was fitted with --contacts {stored.get('contacts', 'noslip')}, "
                            f"not {task.contacts}")
        return ArmCritic.from_state_dict(load_file(str(weights))), stored
    asm = task.assembly()

    def make_env(n: int, s: int) -> Any:
        return task.make_env(n, s, real=False)

    mixture = PolicyMixture(make_expert(asm, control_hz=task.control_hz),
                            suboptimal_experts(asm, task.control_hz, seed), num_envs, 7, seed)
    critic, report = fit_expert_critic(make_env, mixture, lambda: make_expert(asm, control_hz=task.control_hz),
                                       num_envs=num_envs, steps=steps, every=every, seed=seed, epochs=epochs,
                                       progress=progress)
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_path(weights) as tmp:
        save_file({k: v.contiguous() for k, v in critic.state_dict().items()}, str(tmp))
    saved = {**report.to_dict(), "contacts": task.contacts}
    atomic_write_json(report_path, saved)
    return critic, saved


def generate_ur5e(task: Any, out_dir: str, *, num_envs: int, transitions: int, seed: int = 0,
                  progress: bool = True, preset: str = "custom", critic_envs: int = 32, critic_steps: int = 300,
                  critic_epochs: int = 200, parts: int | None = None, rank: int = 0, world: int = 1,
                  expert_only: bool = False, values: str = "critic", value_horizon: int | None = None
                  ) -> dict[str, Any]:
    """Generate (or resume) a UR5e task's pretraining dataset in ``out_dir``; returns the engine's summary
    plus the critic's report and the trajectory count.

    ``parts`` splits the run into parts (a fresh env per part, seeded by the part) of which this worker
    (``rank`` of ``world``) runs its share (:func:`simdist.data.parts.run_parts`); the critic is fitted once,
    by the first worker to take the folder's lock, and loaded by the others. ``expert_only``: the expert
    alone, never perturbed (the paper's expert-only ablation data; the critic is the same).

    ``values``: ``critic`` labels every step with the fitted critic (:mod:`.value`); ``continuation`` with the
    expert's own continuation from a clone of the state (:class:`~.value.ContinuationValue`): ``value_horizon``
    steps and then the critic, or until the episode ends when None (about ``value_horizon`` times the
    generation's simulation; the ranking each gives is measured by :mod:`.labels`)."""
    from simdist.components.tasks.ur5e.expert import make_expert, suboptimal_experts
    from simdist.components.tasks.ur5e.value import ContinuationValue
    from simdist.data.engine import PerturbationConfig, generate
    from simdist.data.parts import folder_lock, run_in_parts_or_once

    if values not in VALUE_LABELS:
        raise ValueError(f"values must be one of {VALUE_LABELS}, got {values!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with folder_lock(out):
        critic, report = load_or_fit_critic(task, out, seed=seed, num_envs=critic_envs, steps=critic_steps,
                                            epochs=critic_epochs, progress=progress)
    asm = task.assembly()
    label = "V^e critic fitted on expert continuations" if values == "critic" else (
        f"V^e by the expert's continuation from each state ({value_horizon or 'all'} steps"
        + (", then the critic)" if value_horizon else ")"))
    metadata = {"task": task.task_name, "preset": preset, "control_hz": task.control_hz, "contacts": task.contacts,
                "values": label, "critic": report}

    def run(folder: Path, budget: int, s: int, first_id: int) -> dict[str, Any]:
        env = task.make_env(num_envs, s, real=False)
        value_fn = critic if values == "critic" else ContinuationValue(
            env, lambda n, seed: task.make_env(n, seed, real=False),
            lambda: make_expert(asm, control_hz=task.control_hz), horizon=value_horizon, critic=critic, seed=s)
        try:
            return generate(
                env, make_expert(asm, control_hz=task.control_hz), suboptimal_experts(asm, task.control_hz, seed),
                out_dir=str(folder), total_transitions=budget, expert_prob=EXPERT_PROB,
                perturbation=PerturbationConfig.manipulation(), value_fn=value_fn, seed=s, progress=progress,
                metadata=metadata, first_episode_id=first_id, expert_only=expert_only)
        finally:
            if value_fn is not critic:
                value_fn.close()
            env.close()

    config = {"task": task.task_name, "num_envs": num_envs, "transitions": transitions, "seed": seed,
              "control_hz": task.control_hz, "expert_only": expert_only,
              "critic": {"envs": critic_envs, "steps": critic_steps, "epochs": critic_epochs}}
    if values != "critic":  # folders from before the option record none: they are critic-labelled
        config["values"] = {"kind": values, "horizon": value_horizon}
    if task.contacts != "noslip":  # folders from before the option record none: they are noslip
        config["contacts"] = task.contacts
    summary = run_in_parts_or_once(out, run, parts=parts, transitions=transitions, seed=seed, num_envs=num_envs,
                                   config=config, rank=rank, world=world,
                                   metadata={"preset": preset, "critic": report}, log=logger.info)
    summary["critic"] = report
    summary["trajectories"] = summary["episodes"]
    logger.info("%s: %d trajectories, %d transitions, clean expert fraction %.3f", task.task_name,
                summary["episodes"], summary["transitions"], summary["expert_fraction"])
    return summary
