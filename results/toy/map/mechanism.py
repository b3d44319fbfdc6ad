"""Why control does not follow identification on a map cell: ``python -m results.toy.map mechanism --cells
CELL-sSEED,...`` (the cells' models from ``--runs``, once a cell's loop has finished; writes ``mechanism.json``
beside each and copies it to ``results/toy/map/mechanism/``).

The adapted model's planner drives the cell's profile (16 envs, MPPI of the demo, its seed); every 5 steps each
env's state is cloned with its history and 32 of the sequences the planner scored there are kept (40 states), as
``simdist mechanism`` does. On every tick the same history also goes to the zero-shot planner and to the adapted
planner reseeded, which never act. Per cell, for the zero-shot and the adapted model:

* **horizon against latency**: the planner's horizon T and the profile's latency L; the first L steps of a
  candidate's horizon are acted by actions already in flight, and its last L actions act after the horizon, where
  only the frozen value head sees them. Measured: the share of the candidates' true return spread (within a
  state) that lies after the horizon, ``tail_share``;
* **ranking** ρ of the whole predicted return against the true one (``simdist mechanism``'s quantity), and split in
  its two parts: the horizon's predicted rewards Σ_{k<T} γ^k r̂_k against the true Σ_{k<T} γ^k r_k (the dynamics
  and the **reward head**, ``rho_reward``), and the value term γ^T V̂(ẑ_T) against the true tail γ^T V^e(s_T) (the
  **frozen value head** on the new states, ``rho_value``); each part's error once the state's mean is removed
  (RMS, what ranking depends on);
* **planner reach**: RMS of the zero-shot planner's action minus the adapted one's over the adapted action's RMS,
  beside the same for the adapted planner reseeded (how much planning noise alone moves the action).

The same measurement of the zero-shot model in the simulator (``--runs``'s ``pretrain-sS/mechanism-sim.json``,
made once per seed) is the reference of a model that ranks well.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from results.runner import ROOT, write_json

HERE = Path(__file__).resolve().parent
STATES, CANDIDATES, EVERY, ENVS, GAMMA = 40, 32, 5, 16, 0.99


def planner(model: Any, seed: int) -> Any:
    """The demo's MPPI (128 samples × 4 iterations, 16 elites) keeping its candidates."""
    from simdist import create

    return create("planner", "mppi", world_model=model, num_samples=128, iterations=4, num_elites=16, seed=seed,
                  score_chunk=1024, keep_candidates=True)


def reach(actions: dict[str, np.ndarray]) -> dict[str, float]:
    """Each shadow's action minus the driver's, RMS over all ticks and envs, over the driver action's RMS."""
    scale = float(np.sqrt((actions["driver"] ** 2).mean()))
    return {name: float(np.sqrt(((a - actions["driver"]) ** 2).mean())) / max(scale, 1e-12)
            for name, a in actions.items() if name != "driver"} | {"driver_rms": scale}


def measure(profile: str, models: dict[str, Any], driver: str, seed: int) -> dict[str, Any]:
    """The whole measurement on ``profile`` with ``models[driver]``'s planner driving (module docstring)."""
    from simdist import bootstrap_ci, make_task
    from simdist.diagnostics import (
        MechanismConfig,
        drive_and_clone,
        predicted_parts,
        split_report,
        split_truth,
        true_return_parts,
    )
    from simdist.planning import ObservationHistory

    task = make_task("toy-reach", profile=profile)
    cfg = MechanismConfig(states=STATES, candidates=CANDIDATES, every=EVERY, num_envs=ENVS, gamma=GAMMA, seed=seed)
    shadows = {f"{name}_shadow": planner(m, seed) for name, m in models.items() if name != driver}
    shadows[f"{driver}_reseeded"] = planner(models[driver], seed + 1)
    history = ObservationHistory.for_model(models[driver], num_envs=ENVS)
    visited = drive_and_clone(task, planner(models[driver], seed), history, cfg, shadows)
    parts = true_return_parts(task, visited, cfg)
    model_cfg = models[driver].config
    out = {"profile": str(profile), "driver": driver, "seed": seed, "horizon": model_cfg.horizon,
           "latency": int(task.profile.latency) if task.profile is not None else 0,
           "true_return": asdict(bootstrap_ci(parts["total"].mean(1))),
           "true_spread": asdict(bootstrap_ci(np.ptp(parts["total"], axis=1))),
           "tail_share": split_truth(parts)["tail_share"], "reach": reach(visited.actions), "models": {}}
    for name, m in models.items():
        out["models"][name] = split_report(*predicted_parts(m, visited, GAMMA), parts)
    return out


def load(path: Path) -> Any:
    from simdist import WorldModel

    return WorldModel.from_pretrained(path).eval()


def main(args: Any) -> int:
    runs = Path(args.runs) if Path(args.runs).is_absolute() else ROOT / args.runs
    folders = [runs / name for name in args.cells.split(",")]
    for f in folders:
        if not (f / "run" / "toy-real" / "config.json").is_file():
            print(f"--cells: {f.name} has no adapted model in {runs} (its loop has not finished)", file=sys.stderr)
            return 2
    (HERE / "mechanism").mkdir(exist_ok=True)
    for folder in folders:
        seed = int(folder.name.rsplit("-s", 1)[1])
        pre = Path(args.pretrained_from) if args.pretrained_from else runs
        pre = pre / f"pretrain-s{seed}"
        zero_shot = load(pre / "toy-sim")
        sim_ref = pre / "mechanism-sim.json"
        if not sim_ref.is_file():
            write_json(sim_ref, measure("sim", {"zero_shot": zero_shot}, "zero_shot", seed + 5))
        shutil.copyfile(sim_ref, HERE / "mechanism" / f"sim-s{seed}.json")
        target = folder / "mechanism.json"
        if not target.is_file():
            models = {"zero_shot": zero_shot, "adapted": load(folder / "run" / "toy-real")}
            write_json(target, measure(str(folder / "profile.yaml"), models, "adapted", seed + 5))
        tag = f"{args.tag}-" if args.tag else ""
        shutil.copyfile(target, HERE / "mechanism" / f"{tag}{folder.name}.json")
        print(f"{folder.name}: {json.dumps(json.loads(target.read_text())['reach'])}", flush=True)
    return 0
