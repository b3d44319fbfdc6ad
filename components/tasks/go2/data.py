"""The Go2 pretraining dataset (``simdist generate --task go2 --experts go2 --out DIR --preset cpu``).

Drives :func:`simdist.data.engine.generate` with the SimDist recipe (SIMDIST 4.3-4.4): per episode the
expert with p = 0.5, else a uniformly chosen sub-optimal checkpoint; the engine's default action
perturbation (σ_j ~ U[0.05, 2.5] per env and joint, noised windows randint(1, 50), clean windows
randint(25, 500), 2.5 % never noised); value labels V(s_{i+1}) from the expert's critic on the
post-step privileged observation; :class:`~simdist.components.tasks.go2.Go2Env` in data-collection mode (rough tile
grid at random difficulty, six-mode random commands, domain randomisation). Shards record only the
world-model groups ``proprio`` (35) and ``extero`` (315) plus the 3-d command; the 433-d privileged
group is used for the policies and the critic but never written.

The budget counts transitions of finished, written episodes. It is split into parts
(``out/part-NNNN``, each one engine run with its own seed, which also redraws the startup
randomisation: friction, restitution, mass); ``out/generate.json`` records the configuration and the
finished parts. Rerunning the same command resumes: finished parts are skipped and the interrupted
part is replayed deterministically, rewriting only what its shards lack. After every part
``out/dataset.json`` is rewritten as an index of the finished parts' shards (``part-NNNN/...tar``) with
their merged statistics, so ``out`` reads as one dataset folder (``data.train: out``). Every part has its
own range of episode ids (:func:`simdist.data.parts.first_episode_id`), so ids are unique in the dataset.
Parts can run in independent workers (``torchrun --nproc-per-node N -m simdist.cli generate ...``).

Walk starts (our addition; ``--walk-start-prob 0`` is the official data): by default 30 % of episodes
start with the evaluation's reset phase, 10-40 steps standing still under zero actions and a zero
command, then a straight walk at U(0.1, 1.0) m/s from where the robot stands (see
``simdist.components.tasks.go2.commands``). Without them the planner meets its first walking step, after the
protocol's 25 standing steps, in a state the data never holds: the world model's policy head errs there
10x more than while walking (results/go2/walk-start/).

Presets: ``cpu`` = 5,000,000 transitions with B = 256; ``paper`` = 4096 envs × 25,000 steps =
102,400,000 transitions.
"""

from __future__ import annotations

import logging
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from simdist.data.engine import TakeoverConfig
from simdist.data.parts import part_budgets, run_parts
from simdist.data.schema import DatasetSpec

logger = logging.getLogger(__name__)

#: Control steps per env per part (default part size = B × this): the episodes still running when a
#: part ends are discarded (<= one episode per env, ~5-10 %), and a resumed run replays <= one part.
PART_STEPS = 8000
#: fraction of episodes that start standing, as the evaluation does (0: the official data)
WALK_START_PROB = 0.3
DATA_ENV_KWARGS: dict[str, Any] = {"terrain": "rough", "terrain_mode": "random", "command_mode": "random",
                                   "randomize": True, "walk_start_prob": WALK_START_PROB}


def go2_dataset_spec() -> DatasetSpec:
    """The world-model dataset spec: proprio 35, extero 315, 12 actions, 3-d command, 50 Hz."""
    return DatasetSpec(obs={"proprio": (35,), "extero": (315,)}, action_dim=12, command_dim=3, dt=0.02)


class EpisodeMetaEnv:
    """A :class:`Go2Env` view adding ``episode_meta(ids)`` (the engine stores it in each episode's meta):
    terrain level/column/type, spawn position and the episode's domain-randomisation draw."""

    def __init__(self, env: Any) -> None:
        self.env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def episode_meta(self, ids: np.ndarray) -> list[dict[str, Any]]:
        env, p = self.env, self.env.params
        types = env.terrain.col_types
        out = []
        for e in np.asarray(ids, dtype=np.int64):
            col = int(env.terrain_col[e])
            out.append({
                "terrain_level": int(env.terrain_level[e]), "terrain_col": col,
                "terrain_type": types[col] if col < len(types) else "flat",
                "spawn_pos": [float(v) for v in env.spawn_pos[e]],
                "friction": float(p.friction[e]), "restitution": float(p.restitution[e]),
                "mass_delta": float(p.mass_delta[e]),
                "kp_scale": [float(v) for v in p.kp_scale[e]], "kd_scale": [float(v) for v in p.kd_scale[e]],
                "joint_friction": [float(v) for v in p.joint_friction[e]],
            })
        return out


def generate_go2(experts: Any, out_dir: str | os.PathLike, *, num_envs: int, transitions: int, seed: int = 0,
                 part_size: int | None = None, parts: int | None = None, rank: int = 0, world: int = 1,
                 env_kwargs: dict[str, Any] | None = None, preset: str = "custom", progress: bool = True,
                 log: Any = None, student: str | None = None, takeover: TakeoverConfig | None = None,
                 expert_only: bool = False) -> dict[str, Any]:
    """Generate (or resume) the Go2 dataset in ``out_dir``; returns the summary.

    ``student`` (a world model's hub id or folder) takes over expert-driven envs with its policy head in
    the windows of ``takeover`` (a :class:`~simdist.data.engine.TakeoverConfig`), so the expert's
    labelled recoveries start from the states that policy drives into (a project extension).

    ``experts`` is an expert-set folder or a loaded :class:`~simdist.experts.ExpertSet`. ``part_size``
    (transitions) defaults to ``num_envs × PART_STEPS``; 0 means one part; ``parts`` fixes the part count
    instead. ``rank``/``world``: this worker's share of the parts (:func:`simdist.data.parts.run_parts`).
    ``env_kwargs`` override the data-collection env settings (e.g. ``episode_length_s`` for tests).
    ``expert_only``: the expert alone, never perturbed (the paper's expert-only ablation data).
    """
    from simdist.components.tasks.go2.env import Go2Env
    from simdist.data.engine import generate
    from simdist.experts import ExpertSet, load_expert_set

    es: ExpertSet = experts if isinstance(experts, ExpertSet) else load_expert_set(experts)
    budgets = part_budgets(transitions, num_envs * PART_STEPS if part_size is None else part_size, parts)
    kwargs = {**DATA_ENV_KWARGS, **(env_kwargs or {})}
    experts_meta = {"expert_iteration": es.expert.iteration,
                    "suboptimal_iterations": [p.iteration for p in es.suboptimal],
                    "source": es.manifest.get("source"),
                    "dir": None if isinstance(experts, ExpertSet) else os.path.abspath(experts)}
    config: dict[str, Any] = {"task": "go2", "num_envs": num_envs, "transitions": transitions, "seed": seed,
                              "env_kwargs": kwargs, "expert_iteration": es.expert.iteration,
                              "suboptimal_iterations": experts_meta["suboptimal_iterations"]}
    takeover = takeover or TakeoverConfig()
    if student is not None:
        config["student"] = {"model": student, **asdict(takeover)}
    if expert_only:  # only then, so the folders of earlier runs keep matching their configuration
        config["expert_only"] = True
    spec = go2_dataset_spec()
    made: dict[str, Any] = {}

    def run_part(k: int, s: int, folder: Path, budget: int, first_id: int) -> dict[str, Any]:
        if not made:  # one env (and student) for all of this worker's parts; each part reseeds it
            made["env"] = EpisodeMetaEnv(Go2Env(num_envs, seed=seed, **kwargs))
            made["student"] = _student_policy(student, num_envs) if student is not None else None
        return generate(
            made["env"], es.expert, es.suboptimal, out_dir=str(folder), spec=spec, total_transitions=budget,
            expert_prob=0.5, value_fn=es.critic, seed=s, progress=progress, student=made["student"],
            takeover=takeover, first_episode_id=first_id, expert_only=expert_only,
            metadata={"task": "go2", "env": "Go2Env", "preset": preset, "part": k, "parts": len(budgets),
                      "part_seed": s, "base_seed": seed, "env_kwargs": kwargs, "experts": experts_meta},
        )

    try:
        extra = {"preset": preset, "experts": experts_meta}
        return run_parts(out_dir, config=config, spec=spec, budgets=budgets, run_part=run_part, seed=seed,
                         num_envs=num_envs, rank=rank, world=world, metadata=extra, state_extra=extra,
                         log=log or logger.info)
    finally:
        if made:
            made["env"].close()


def _student_policy(model: str, num_envs: int) -> Any:
    """The policy head of world model ``model`` as a data-engine policy over ``num_envs`` envs."""
    import simdist
    from simdist.model.world_model import WorldModel
    from simdist.planning import PlannerPolicy

    wm = WorldModel.from_pretrained(model)
    return PlannerPolicy(simdist.create("planner", "policy", world_model=wm), num_envs, name=f"student:{model}")


def parse_window(text: str) -> tuple[int, int]:
    """``"LOW,HIGH"`` → (LOW, HIGH): a window length drawn from randint(LOW, HIGH), steps."""
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts) or not 1 <= int(parts[0]) < int(parts[1]):
        raise ValueError(f"a window is LOW,HIGH with 1 <= LOW < HIGH (steps, HIGH exclusive), got {text!r}")
    return int(parts[0]), int(parts[1])
