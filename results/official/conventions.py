"""Which foot-wrench convention the official expert reads, and what the official actuator changes.

The official expert (``hub/experts/go2-official``, policy_4999) walks the 10 m flat course at 0.5 m/s for 20 s
(randomised trials) while it reads the foot term of its privileged observation in one of four conventions:

* ``official`` (the default, the ``privileged_official`` group): IsaacLab's incoming joint wrench on the foot
  link, in the foot's frame (what the official environment delivers);
* ``contact-base``: simdist's own term, the ground's contact wrench on the foot in the base frame;
* ``negated-base``: minus that (the sign fixed, the frame not);
* ``zero``: no foot term.

Then both experts walk with and without the official DC-motor torque-speed limit (``velocity_limit: 30``) on
a nominal flat course profile. One JSON per row in ``results/official/conventions/``; existing rows are kept::

    python -m results.official.conventions --trials 20
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from results.runner import ROOT, write_json
from simdist import build_controller, create, make_task

OUT = Path("results/official/conventions")
OFFICIAL, OURS = "hub/experts/go2-official", "hub/experts/go2"
WRENCH = slice(365, 389)  # the foot wrenches inside the 433-D privileged vector


def reading(expert: Any, convention: str) -> Callable[[Mapping[str, np.ndarray]], np.ndarray]:
    """``expert`` (reading ``privileged_official``) fed the foot term in ``convention``."""
    if convention == "official":
        return expert

    def policy(obs: Mapping[str, np.ndarray]) -> np.ndarray:
        priv = obs["privileged_official"].copy()
        ours = obs["privileged"][:, WRENCH]
        priv[:, WRENCH] = {"contact-base": ours, "negated-base": -ours, "zero": 0.0 * ours}[convention]
        return expert({**obs, "privileged_official": priv})

    return policy


def flat_profile(velocity_limit: float | None) -> dict[str, Any]:
    """The nominal 10 m flat course as a profile (so that the actuator option rides on it), speed 0.5 m/s."""
    return {"name": "flat-10m" + ("-dc" if velocity_limit else ""), "course": "flat", "course_length": 10.0,
            "friction": 0.8, "eval_speeds": [0.5], "velocity_limit": velocity_limit}


def row(name: str, agent: Any, trials: int, seed: int, **task: Any) -> None:
    out = ROOT / OUT / f"{name}.json"
    if out.is_file():
        return
    result = make_task("go2", randomize=True, time_factor=1.0, speeds=(0.5,), **task).evaluate(agent, trials, seed)
    progress = np.asarray(result.values, float)
    write_json(out, {"row": name, "seed": seed, "setting": {k: str(v) for k, v in task.items()},
                     "summary": result.summary(), **result.to_dict()})
    print(name, f"{progress.mean():.2f} m over {len(progress)}", flush=True)


def binding(expert: Any, name: str, envs: int = 8, steps: int = 500, seed: int = 0) -> None:
    """Why the limit matters or not: ``expert`` walks 10 s straight at 0.5 m/s on flat ground with the limit on;
    per control step and joint, the joint speed and whether the torque sits on the speed-dependent bound."""
    out = ROOT / OUT / f"binding_{name}.json"
    if out.is_file():
        return
    env = create("env", "go2", num_envs=envs, command_mode="fixed", fixed_command=(0.5, 0.0, 0.0), seed=seed,
                 velocity_limit=30.0, nthread=1)
    obs = env.reset()
    speed, on_bound = [], []
    for _ in range(steps):
        obs = env.step(expert(obs)).obs
        lo, hi = env.m_forcerange[:, :, 0], env.m_forcerange[:, :, 1]
        tau = env.actuator_force
        speed.append(np.abs(env.qvel[:, 6:18]))
        on_bound.append((tau >= hi - 1e-6) | (tau <= lo + 1e-6))
    speed_a = np.stack(speed)
    write_json(out, {"expert": name, "envs": envs, "steps": steps, "seed": seed,
                     "joint_speed_p50": float(np.percentile(speed_a, 50)),
                     "joint_speed_p99": float(np.percentile(speed_a, 99)), "joint_speed_max": float(speed_a.max()),
                     "torque_on_bound_fraction": float(np.mean(on_bound))})
    print(out.read_text(), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    (ROOT / OUT).mkdir(parents=True, exist_ok=True)
    official = build_controller(f"expert:{ROOT / OFFICIAL}")
    for convention in ("official", "contact-base", "negated-base", "zero"):
        row(f"wrench_{convention}", reading(official, convention), args.trials, args.seed, terrain="flat",
            course_length=10.0)
    ours = build_controller(f"expert:{ROOT / OURS}")
    for name, agent in (("official", official), ("ours", ours)):
        for limit in (None, 30.0):
            row(f"actuator_{name}_{'dc' if limit else 'clip'}", agent, args.trials, args.seed,
                profile=flat_profile(limit))
        binding(agent, name)


if __name__ == "__main__":
    main()
