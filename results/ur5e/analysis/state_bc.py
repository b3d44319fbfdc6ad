"""Is the state enough to act? A single-step behaviour-cloned MLP on the dataset's clean expert steps,
evaluated closed loop on the lattice: the bar a world model's policy head and planner should clear.

    python -m results.ur5e.analysis.state_bc --task ur5e-peg --data outputs/ur5e/ur5e-peg-cpu \
        --save outputs/state-bc.pt --out results/ur5e/analysis/state-bc-ur5e-peg.json
    python -m results.ur5e.analysis.state_bc --load outputs/state-bc.pt --profile peg-real --grids wide

Inputs: the observation keys the state encoder reads (``proprio`` and ``object``), standardised with the
training set's statistics; targets: the expert's actions, gripper included. Trains on the flagged (clean
expert) steps of ``--episodes`` episodes, holds out 2 % of them by episode, reports the held-out error, the
first-step action error on free starts and the closed-loop success with its 95 % interval on each grid (the
training simulator unless ``--profile`` is given).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from torch import nn

KEYS = ("proprio", "object")


def load(data: str, episodes: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Inputs, targets, episode ids and a first-step-of-a-free-start flag for the flagged expert steps."""
    from simdist.data import iter_episodes

    xs, ys, ids, first = [], [], [], []
    for n, ep in enumerate(iter_episodes(data.split(","), shuffle_shards=True, seed=seed)):
        if n >= episodes:
            break
        keep = ep.expert.astype(bool)
        if not keep.any():
            continue
        x = np.concatenate([ep.obs[k] for k in KEYS], axis=-1)
        xs.append(x[keep])
        ys.append(ep.actions[keep])
        ids.append(np.full(int(keep.sum()), ep.episode_id))
        start = np.zeros(ep.length, bool)
        start[0] = ep.meta.get("reset") == "free"
        first.append(start[keep])
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(ids), np.concatenate(first)


class StateBC(nn.Module):
    """obs -> action MLP with its input standardisation; ``__call__`` on an observation dict acts."""

    def __init__(self, mean: np.ndarray, std: np.ndarray, adim: int, hidden: int = 512) -> None:
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))
        d = len(mean)
        self.net = nn.Sequential(nn.Linear(d, hidden), nn.ELU(), nn.Linear(hidden, hidden), nn.ELU(),
                                 nn.Linear(hidden, hidden), nn.ELU(), nn.Linear(hidden, adim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.mean) / self.std)

    @torch.no_grad()
    def act_on(self, obs: dict) -> np.ndarray:  # type: ignore[type-arg]
        x = torch.as_tensor(np.concatenate([np.asarray(obs[k]) for k in KEYS], axis=-1), dtype=torch.float32)
        a = self(x).clamp(-1, 1)
        a[:, -1] = torch.where(a[:, -1] > 0, 1.0, -1.0)  # the binary gripper
        return a.numpy()


def load_saved(path: str) -> StateBC:
    """A model written by ``--save``."""
    saved = torch.load(path, weights_only=False)
    model = StateBC(saved["mean"], saved["std"], saved["adim"], saved["hidden"])
    model.load_state_dict(saved["state_dict"])
    return model.eval()


def train(args: argparse.Namespace) -> tuple[StateBC, dict]:  # type: ignore[type-arg]
    """The MLP fitted on the flagged steps, and its held-out report."""
    torch.manual_seed(args.seed)
    t0 = time.perf_counter()
    x, y, ids, first = load(args.data, args.episodes, args.seed)
    episodes = np.unique(ids)
    held = np.isin(ids, episodes[np.random.default_rng(args.seed).random(len(episodes)) < 0.02])
    mean, std = x[~held].mean(0), x[~held].std(0) + 1e-6
    model = StateBC(mean, std, y.shape[1], args.hidden)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.steps)
    xt, yt = torch.as_tensor(x[~held]), torch.as_tensor(y[~held])
    gen = torch.Generator().manual_seed(args.seed)
    for step in range(args.steps):
        idx = torch.randint(len(xt), (512,), generator=gen)
        loss = (model(xt[idx]) - yt[idx]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 1000 == 0:
            print(f"step {step}/{args.steps}: train mse {loss.item():.4f} ({time.perf_counter() - t0:.0f} s)",
                  flush=True)
    model.eval()
    with torch.no_grad():
        pred = model(torch.as_tensor(x[held])).numpy()
        pred0 = model(torch.as_tensor(x[first])).numpy()
    if args.save:
        torch.save({"mean": mean, "std": std, "adim": y.shape[1], "hidden": args.hidden,
                    "state_dict": model.state_dict()}, args.save)
    return model, {
        "flagged_steps": int(len(x)), "heldout_steps": int(held.sum()),
        "heldout_mse": float(((pred - y[held]) ** 2).mean()),
        "heldout_mae_xyz": float(np.abs(pred[:, :3] - y[held][:, :3]).mean()),
        "first_step_mae_xy": float(np.abs(pred0[:, :2] - y[first][:, :2]).mean()) if first.any() else None,
        "first_steps": int(first.sum()), "train_seconds": time.perf_counter() - t0,
    }


def main() -> None:
    from simdist import make_task

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--task", default="ur5e-peg")
    p.add_argument("--data", help="the dataset folder(s) to train on, comma-separated (or --load)")
    p.add_argument("--load", help="evaluate a model written by --save instead of training one")
    p.add_argument("--grids", default="narrow,wide")
    p.add_argument("--profile", help="a reality profile (unset: the training simulator)")
    p.add_argument("--episodes", type=int, default=3000)
    p.add_argument("--steps", type=int, default=8000)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--trials", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out")
    p.add_argument("--save", help="write the trained MLP here")
    args = p.parse_args()
    if (args.data is None) == (args.load is None):
        p.error("give exactly one of --data and --load")
    grids = args.grids.split(",")
    for g in grids:
        if g not in ("narrow", "wide"):
            p.error(f"--grids: unknown grid {g!r} (narrow, wide)")
    if args.load:
        model, report = load_saved(args.load), {}
    else:
        model, report = train(args)
    report["command"] = "python -m results.ur5e.analysis.state_bc " + " ".join(
        f"--{k} {v}" for k, v in vars(args).items() if v is not None and k != "out")
    report["profile"] = args.profile or "sim"
    for grid in grids:
        task = make_task(args.task, grid=grid, profile=args.profile)
        report[grid] = task.evaluate(model.act_on, trials=args.trials, seed=args.seed).summary()
        print(grid, report[grid], flush=True)
    text = json.dumps(report, indent=1, default=float)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
