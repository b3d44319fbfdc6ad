"""How much of the object's pose relative to the TCP does a model's latent z = E(o) hold? A ridge probe.

    python -m results.ur5e.analysis.latent_probe --model outputs/ur5e-peg/model --data outputs/ur5e/ur5e-peg-cpu

Steps of the first ``--episodes`` logged episodes are encoded with the model's per-step encoder; a ridge
regression from z to the peg's position in the TCP frame (``object[:, :3]``) is fitted on 80 % of the episodes
and scored (R² per axis) on the rest. The planner and the policy head see the object only through z.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch


def main() -> None:
    from simdist import load_agent
    from simdist.data import iter_episodes

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--episodes", type=int, default=400)
    args = p.parse_args()
    wm = load_agent(args.model).world_model.eval()
    zs, ys, ids = [], [], []
    for k, ep in enumerate(iter_episodes(args.data, shuffle_shards=False)):
        if k >= args.episodes:
            break
        obs = {g: torch.as_tensor(ep.obs[g]) for g in wm.config.obs_spec}
        with torch.no_grad():
            zs.append(wm.encode_latent(obs).numpy())
        ys.append(ep.obs["object"][:, :3])
        ids.append(np.full(ep.length, k))
    z, y, ep_id = np.concatenate(zs), np.concatenate(ys), np.concatenate(ids)
    train = ep_id % 5 != 0
    zt = np.c_[z, np.ones(len(z))]
    w = np.linalg.solve(zt[train].T @ zt[train] + 1e-3 * np.eye(zt.shape[1]), zt[train].T @ y[train])
    pred = zt[~train] @ w
    r2 = 1 - ((pred - y[~train]) ** 2).sum(0) / ((y[~train] - y[~train].mean(0)) ** 2).sum(0)
    rmse = np.sqrt(((pred - y[~train]) ** 2).mean(0))
    print(json.dumps({"model": args.model, "steps": int(len(z)), "r2_xyz": r2.round(3).tolist(),
                      "rmse_m_xyz": rmse.round(4).tolist(), "target_std_m": y[~train].std(0).round(4).tolist()}))


if __name__ == "__main__":
    main()
