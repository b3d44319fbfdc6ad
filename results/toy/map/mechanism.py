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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from results.runner import ROOT, write_json

HERE = Path(__file__).resolve().parent
STATES, CANDIDATES, EVERY, ENVS, GAMMA = 40, 32, 5, 16, 0.99


@dataclass
class Visited:
    """The cloned states, their histories, the driver's candidates there, and every tick's three actions."""

    states: Any
    obs: dict[str, Any]
    act: Any
    command: Any
    candidates: Any
    actions: dict[str, np.ndarray]


def planner(model: Any, seed: int) -> Any:
    """The demo's MPPI (128 samples × 4 iterations, 16 elites) keeping its candidates."""
    from simdist import create

    return create("planner", "mppi", world_model=model, num_samples=128, iterations=4, num_elites=16, seed=seed,
                  score_chunk=1024, keep_candidates=True)


def visit(task: Any, driver: Any, shadows: dict[str, Any], seed: int) -> Visited:
    """Drive ``driver`` on the task's real env until :data:`STATES` states are cloned (every :data:`EVERY` steps
    of each episode), keeping :data:`CANDIDATES` of its scored sequences per state; every shadow plans on the
    same history each tick (never acting)."""
    import torch

    from simdist.planning import ObservationHistory

    env = task.make_env(ENVS, seed, real=True)
    rng = np.random.default_rng(seed)
    history = ObservationHistory.for_model(driver.world_model, num_envs=ENVS)
    snaps, obs_rows, act_rows, cmd_rows, cands = [], [], [], [], []
    ticks: dict[str, list[np.ndarray]] = {"driver": [], **{k: [] for k in shadows}}
    try:
        obs = env.reset(seed=seed)
        history.reset(obs, command=history.command_of(obs))
        for p in (driver, *shadows.values()):
            p.reset(seed=seed if p is driver else None)
        age, kept = np.zeros(ENVS, np.int64), 0
        while kept < STATES:
            result = driver.plan(history)
            ticks["driver"].append(result.action.detach().cpu().numpy())
            for name, p in shadows.items():
                ticks[name].append(p.plan(history).action.detach().cpu().numpy())
            take = np.flatnonzero(age % EVERY == 0)[: STATES - kept]
            kept += len(take)
            if len(take):
                snaps.append(task.snapshot_states(env, take))
                o, a, c = history.as_inputs(take)
                obs_rows.append(o)
                act_rows.append(a)
                cmd_rows.append(c)
                pool = result.diagnostics["candidates"][torch.as_tensor(take)]
                pick = np.stack([rng.choice(pool.shape[1], CANDIDATES, replace=False) for _ in take])
                cands.append(pool[torch.arange(len(take))[:, None], torch.as_tensor(pick)])
            actions = ticks["driver"][-1].astype(np.float32)
            step = env.step(actions)
            history.push(step.obs, actions, command=history.command_of(step.obs))
            age += 1
            done = np.flatnonzero(step.terminated | step.truncated)
            if len(done):
                sub = {k: v[done] for k, v in env.reset(ids=done).items()}
                history.reset(sub, ids=done, command=history.command_of(sub))
                for p in (driver, *shadows.values()):
                    p.reset(ids=done.tolist())
                age[done] = 0
    finally:
        env.close()
    return Visited(task.merge_states(snaps), {k: torch.cat([o[k] for o in obs_rows]) for k in obs_rows[0]},
                   torch.cat(act_rows), torch.cat(cmd_rows), torch.cat(cands),
                   {k: np.concatenate(v) for k, v in ticks.items()})


def true_parts(task: Any, v: Visited, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(S, K) true returns of the candidates on the profile, and their part inside the horizon (the candidate open
    loop alone: the task's expert continuation set to zero steps)."""
    s, k = v.candidates.shape[:2]
    rows = np.repeat(np.arange(s), k)
    actions = v.candidates.reshape(s * k, *v.candidates.shape[2:]).cpu().numpy()
    total = task.true_returns(v.states, rows, actions, gamma=GAMMA, seed=seed)
    steps = task.expert_steps
    try:
        task.expert_steps = 0
        horizon = task.true_returns(v.states, rows, actions, gamma=GAMMA, seed=seed)
    finally:
        task.expert_steps = steps
    return np.asarray(total, np.float64).reshape(s, k), np.asarray(horizon, np.float64).reshape(s, k)


def predicted_parts(model: Any, v: Visited) -> tuple[np.ndarray, np.ndarray]:
    """(S, K) the model's predicted reward part Σ_{k<T} γ^k r̂_k and value part γ^(T+offset) V̂ of each candidate
    from the same histories (their sum is what its planner ranks by)."""
    import torch

    with torch.no_grad():
        model.eval()
        enc = model.encode(v.obs, v.act)
        command = v.command if model.config.command_dim else None
        im = model.imagine(enc, v.candidates, command, last_value_only=True)
        t = im.rewards.shape[-1]
        rewards = (im.rewards * GAMMA ** torch.arange(t, dtype=im.rewards.dtype)).sum(-1)
        value = GAMMA ** (t + model.config.value_offset) * im.values[..., -1]
    return rewards.numpy().astype(np.float64), value.numpy().astype(np.float64)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ of two vectors (0 when either is constant)."""
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    if ra.std() == 0 or rb.std() == 0 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    return float(np.corrcoef(ra, rb)[0, 1])


def estimate(values: np.ndarray) -> dict[str, float]:
    from simdist import bootstrap_ci

    e = bootstrap_ci(values)
    return {"mean": e.mean, "low": e.low, "high": e.high, "n": e.n}


def centred_rms(pred: np.ndarray, true: np.ndarray) -> np.ndarray:
    """Per state: RMS of predicted minus true once each state's mean is removed."""
    err = (pred - pred.mean(1, keepdims=True)) - (true - true.mean(1, keepdims=True))
    return np.sqrt((err ** 2).mean(1))


def parts_report(pred_r: np.ndarray, pred_v: np.ndarray, total: np.ndarray, horizon: np.ndarray) -> dict[str, Any]:
    """Ranking of the whole and of each part, per state, with 95 % intervals over states."""
    tail = total - horizon
    per = {
        "rho": [spearman(p, t) for p, t in zip(pred_r + pred_v, total)],
        "rho_reward": [spearman(p, t) for p, t in zip(pred_r, horizon)],
        "rho_value": [spearman(p, t) for p, t in zip(pred_v, tail)],
        "reward_error": centred_rms(pred_r, horizon), "value_error": centred_rms(pred_v, tail),
        "value_offset": (pred_v - tail).mean(1),
    }
    return {k: estimate(np.asarray(v)) for k, v in per.items()}


def reach(actions: dict[str, np.ndarray]) -> dict[str, float]:
    """Each shadow's action minus the driver's, RMS over all ticks and envs, over the driver action's RMS."""
    scale = float(np.sqrt((actions["driver"] ** 2).mean()))
    return {name: float(np.sqrt(((a - actions["driver"]) ** 2).mean())) / max(scale, 1e-12)
            for name, a in actions.items() if name != "driver"} | {"driver_rms": scale}


def measure(profile: str, models: dict[str, Any], driver: str, seed: int) -> dict[str, Any]:
    """The whole measurement on ``profile`` with ``models[driver]``'s planner driving (module docstring)."""
    from simdist import make_task

    task = make_task("toy-reach", profile=profile)
    shadows = {f"{name}_shadow": planner(m, seed) for name, m in models.items() if name != driver}
    shadows[f"{driver}_reseeded"] = planner(models[driver], seed + 1)
    v = visit(task, planner(models[driver], seed), shadows, seed)
    total, horizon = true_parts(task, v, seed)
    tail = total - horizon
    spread = lambda x: (x - x.mean(1, keepdims=True)).var(1)  # noqa: E731
    cfg = models[driver].config
    out = {"profile": str(profile), "driver": driver, "seed": seed, "horizon": cfg.horizon,
           "latency": int(task.profile.latency) if task.profile is not None else 0,
           "true_return": estimate(total.mean(1)), "true_spread": estimate(np.ptp(total, axis=1)),
           "tail_share": estimate(spread(tail) / np.maximum(spread(horizon) + spread(tail), 1e-12)),
           "reach": reach(v.actions), "models": {}}
    for name, m in models.items():
        out["models"][name] = parts_report(*predicted_parts(m, v), total, horizon)
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
