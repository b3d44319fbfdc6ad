"""How far MPPI's executed action lies from its own policy prior's, tick by tick, on the UR5e.

The head-gate model's policy head alone picks the peg on every Narrow cell, and MPPI sampled tightly around it
(policy warm start, small initial std) on none (docs/ur5e-simdist.md 7.5). This runs the planner in closed loop
on the Narrow lattice and, at every tick, asks the policy head for its action on the same history, recording the
gap per action part (xyz, the wrist's rotation, the gripper), how each treats the gripper (closed fraction,
sign disagreement; MPPI's ``binary_mode`` given) and the cells that succeed. The control row ``--noise S``
executes the policy's action plus N(0, S²) on the arm's six dimensions (the gripper untouched): whether a gap of
MPPI's size, without MPPI's choices, already loses the insertion (``--noise 0``: the policy alone, the
harness's check against its 40/40). ``--noise-corr C`` makes that noise AR(1) over ticks with lag-1 correlation C
(the same marginal std): whether a gap that persists from tick to tick, as MPPI's warm-started one may, loses it.
Every row also reports the gap's lag-1 autocorrelation over ticks and its signed mean per arm dimension (a lean).
``--profile`` (default ``sim``, the training simulator) names the profile::

    python -m results.ur5e.analysis.prior_gap --model outputs/ur5e-peg-small-matched-w0 --init-std 0.1 \\
        --binary-modes hysteresis,mean --noise 0,0.05,0.1 --steps 90 \\
        --json results/ur5e/analysis/prior-gap-ur5e-peg-small-matched-w0.json
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

import simdist
from simdist import bootstrap_ci, build_controller
from simdist.data import atomic_write_json

GRIPPER = 6
PARTS = {"xyz": slice(0, 3), "rotation": slice(3, 6), "gripper": slice(6, 7)}


def lag1_autocorrelation(x: np.ndarray) -> float:
    """Lag-1 autocorrelation over ticks of (ticks, envs, dims) signed gaps, each env and dim centred on its mean."""
    c = x - x.mean(0, keepdims=True)
    denom = float((c ** 2).sum())
    return float((c[1:] * c[:-1]).sum() / denom) if denom > 0 else 0.0


def prior_gap(model: str, task: simdist.Task, *, init_std: float, binary_mode: str | None, noise: float, envs: int,
              steps: int, seed: int, noise_corr: float = 0.0) -> dict:
    """The per-tick gap between the executed action and the policy head's, over ``envs`` Narrow cells: MPPI's
    with ``binary_mode``, or (``binary_mode`` None) the policy's own plus AR(1) noise of std ``noise`` and lag-1
    correlation ``noise_corr`` on the arm (0: independent N(0, ``noise``²) per tick)."""
    policy = build_controller(model, planner="policy", task=task, seed=seed)
    planner = build_controller(model, task=task, seed=seed, init_std=init_std, warm_start="policy")
    if binary_mode is not None:
        planner.planner.binary_mode = binary_mode  # the output rule only; the sampling is the same
    rng = np.random.default_rng(seed)
    env = task.evaluation_env(envs, seed)
    hist = planner.new_history(envs)
    gaps: dict[str, list[np.ndarray]] = {k: [] for k in PARTS}
    closed_mppi, closed_policy, gripper_policy = [], [], []
    signed: list[np.ndarray] = []
    heads: list[np.ndarray] = []
    succeeded = np.zeros(envs, bool)
    eps = np.zeros((envs, GRIPPER))
    try:
        obs = env.reset(seed=seed)
        hist.reset(obs, command=hist.command_of(obs))
        for _ in range(steps):
            p = policy.act(hist).numpy().astype(np.float32)
            if binary_mode is None:
                a = p.copy()
                fresh = rng.normal(0, noise, eps.shape)
                eps = noise_corr * eps + np.sqrt(1 - noise_corr ** 2) * fresh if noise_corr else fresh
                a[:, :GRIPPER] = np.clip(a[:, :GRIPPER] + eps, -1, 1)
            else:
                a = planner.act(hist).numpy().astype(np.float32)
            for name, dims in PARTS.items():
                gaps[name].append(np.abs(a[:, dims] - p[:, dims]).mean(1))
            signed.append(a[:, :GRIPPER] - p[:, :GRIPPER])
            heads.append(p[:, :GRIPPER])
            closed_mppi.append(a[:, GRIPPER] > 0)
            closed_policy.append(p[:, GRIPPER] > 0)
            gripper_policy.append(p[:, GRIPPER])
            step = env.step(a)
            succeeded |= np.asarray(step.info.get("success", np.zeros(envs, bool)), bool)
            hist.push(step.obs, torch.from_numpy(a), command=hist.command_of(step.obs))
    finally:
        env.close()
    cm, cp, gp = np.stack(closed_mppi), np.stack(closed_policy), np.stack(gripper_policy)
    sg, hp = np.stack(signed), np.stack(heads)
    controller = (f"MPPI, binary_mode {binary_mode}" if binary_mode else
                  f"policy + N(0, {noise}²) on the arm" + (f", AR(1) {noise_corr}" if noise_corr else ""))
    return {"controller": controller, "init_std": init_std, "noise_corr": noise_corr, "episodes": envs, "steps": steps,
            "succeeded": int(succeeded.sum()),
            "gap": {k: asdict(bootstrap_ci(np.stack(v).mean(0))) for k, v in gaps.items()},
            "closed_fraction": {"executed": float(cm.mean()), "policy": float(cp.mean())},
            "gripper_sign_disagreement": asdict(bootstrap_ci((cm != cp).mean(0).astype(float))),
            "policy_gripper_abs_below_hysteresis": float((np.abs(gp) < planner.planner.hysteresis).mean()),
            "gap_lag1_autocorrelation": lag1_autocorrelation(sg),
            "signed_gap_per_dim": {"mean": sg.mean((0, 1)).round(4).tolist(),
                                   "over_abs": (sg.mean((0, 1)) / np.maximum(np.abs(sg).mean((0, 1)), 1e-12)
                                                ).round(3).tolist()},
            # the lean towards the bounds' interior: the gap along -sign(head's action), over the mean |gap|
            "inward_share": float((-np.sign(hp) * sg).mean() / max(float(np.abs(sg).mean()), 1e-12)),
            "head_saturated_fraction": float((np.abs(hp) > 0.95).mean())}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="a model folder whose planner.json MPPI acts with")
    p.add_argument("--task", default="ur5e-peg")
    p.add_argument("--profile", default="sim", help="the reality profile (default sim: the training simulator)")
    p.add_argument("--init-std", type=float, default=0.1)
    p.add_argument("--binary-modes", default="hysteresis,mean")
    p.add_argument("--noise", default="", help="comma-separated noise stds: also the control rows, the policy plus "
                                                "that noise on the arm (0: the policy alone)")
    p.add_argument("--noise-corr", type=float, default=0.0,
                   help="lag-1 correlation of the control rows' noise over ticks (AR(1), same std; default 0)")
    p.add_argument("--envs", type=int, default=8)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", required=True)
    args = p.parse_args()
    if not 0.0 <= args.noise_corr < 1.0:
        p.error(f"--noise-corr must be in [0, 1), got {args.noise_corr}")
    torch.manual_seed(args.seed)
    task = simdist.make_task(args.task, grid="narrow", profile=args.profile)
    runs: list[tuple[str | None, float]] = [(m, 0.0) for m in args.binary_modes.split(",") if m]
    runs += [(None, float(n)) for n in args.noise.split(",") if n]
    rows = [prior_gap(args.model, task, init_std=args.init_std, binary_mode=m, noise=n, envs=args.envs,
                      steps=args.steps, seed=args.seed, noise_corr=args.noise_corr) for m, n in runs]
    for r in rows:
        g = r["gap"]
        print(f"{r['controller']}: {r['succeeded']}/{r['episodes']} succeeded; |executed - policy| "
              f"xyz {g['xyz']['mean']:.3f}, rotation {g['rotation']['mean']:.3f}, "
              f"gripper {g['gripper']['mean']:.3f}; closed {r['closed_fraction']['executed']:.2f} / policy "
              f"{r['closed_fraction']['policy']:.2f}; sign disagreement {r['gripper_sign_disagreement']['mean']:.2f}; "
              f"lag-1 autocorrelation {r['gap_lag1_autocorrelation']:.2f}; lean/|gap| "
              f"{r['signed_gap_per_dim']['over_abs']}; inward share {r['inward_share']:.2f}; head's arm actions "
              f"beyond 0.95: {r['head_saturated_fraction']:.2f}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out, {"model": args.model, "task": task.describe(),
                            "command": "python -m results.ur5e.analysis.prior_gap "
                            + shlex.join(sys.argv[1:]), "rows": rows})


if __name__ == "__main__":
    main()
