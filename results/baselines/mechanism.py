"""Why the model-free baselines move as they do: the collapse diagnostics of BASELINES.md 8.7 per stage.

    python -m results.baselines.mechanism --task toy-reach [--seeds 0,1,2]

For every stage model of each RL run (``iql``, ``rlpd``, ``sgft``): the actor's std and SAC temperature α, and
how far its mean action has moved from the single-step BC start on the run's own real states (RMS, normalised
action units). Then, per seed, the offline prior's effect on IQL (the advantage weights' effective sample size on
the simulation data) and SGFT's value function off the simulation (V_sim on simulation and on real states, and
the spread of the shaped reward against the sparse one). Writes ``results/baselines/<task>/mechanism.json`` and
``mechanism.md``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from results.runner import write_json, write_text

ROOT = Path(__file__).resolve().parents[2]
RL = ("iql", "rlpd", "sgft")


def _episodes(folder: Path) -> list:
    from simdist.data import iter_episodes

    return list(iter_episodes(str(folder), shuffle_shards=False, split_by_node=False, split_by_worker=False))


@torch.no_grad()
def drift(agent: Any, start: Any, features: torch.Tensor) -> float:
    """RMS distance between ``agent``'s and ``start``'s mean actions (normalised units) at ``features``."""
    return float((agent.model.mean_std(features)[0] - start.policy.policy(features)).pow(2).mean().sqrt())


def stage_rows(work: Path, name: str, seed: int) -> list[dict[str, Any]]:
    """Per stage of the run: the actor's std and α, its drift from the BC start on the run's real states (in the
    frozen encoder's feature space, which the run's agents share with the BC start they were built from)."""
    from simdist import load_agent

    run = work / f"seed-{seed}" / name
    state = json.loads((run / "state.json").read_text())
    start = load_agent(work / f"seed-{seed}" / "bc-start")
    feats = load_agent(work / f"seed-{seed}" / f"{name}-init").transitions(_episodes(run / "real-data"),
                                                                           rewards="sparse").features
    rows = []
    for k, stage in enumerate(state["stages"]):
        agent = load_agent(work / f"seed-{seed}" / f"{name}-init" if k == 0 else stage["model"])
        loss = agent.model.parts["loss"]
        alpha = float(loss.log_alpha.exp()) if hasattr(loss, "log_alpha") else None
        rows.append({"stage": k, "episodes": stage["episodes"], "std": float(agent.model.log_std.detach().exp().mean()),
                     "alpha": alpha, "drift_from_bc": drift(agent, start, feats),
                     "success": float(np.mean(stage["eval"]["success"]))})
    return rows


@torch.no_grad()
def iql_weights(work: Path, seed: int) -> dict[str, float]:
    """IQL's advantage weights exp(β(min Q − V)) (clipped at 100) on the simulation data after the offline phase:
    their effective sample size as a share of the batch (1: uniform, BC on every action; small: selective)."""
    from simdist import load_agent

    agent = load_agent(work / f"seed-{seed}" / "iql-init")
    data = agent.encoded_replay().load([work / "sim"])
    idx = torch.randperm(len(data), generator=torch.Generator().manual_seed(0))[:4096]
    w = agent.advantage_weights(data.take(idx))
    ess = float(w.sum() ** 2 / (w ** 2).sum() / len(w))
    expert = data.take(idx)["expert"]
    return {"ess_share": ess, "expert_share": float(expert.float().mean()),
            "mean_weight_expert": float(w[expert].mean()), "mean_weight_other": float(w[~expert].mean())}


@torch.no_grad()
def sgft_values(work: Path, seed: int) -> dict[str, float]:
    """V_sim on the simulation's and the real run's states, and the spread of the shaped reward on real data."""
    from simdist import load_agent

    agent = load_agent(work / f"seed-{seed}" / "sgft-init")
    sim = agent.transitions(_episodes(work / "sim"), rewards="sparse")
    real = agent.transitions(_episodes(work / f"seed-{seed}" / "sgft" / "real-data"), rewards="sparse")
    v_sim = agent.v_sim(sim.next_features).squeeze(-1)
    v_real = agent.v_sim(real.features).squeeze(-1)
    shaped = agent.rewards(real.take(torch.arange(len(real))))
    r2 = 1 - float(((v_sim - sim.values) ** 2).mean() / sim.values.var())
    return {"r2_on_sim": r2, "label_mean": float(sim.values.mean()), "label_std": float(sim.values.std()),
            "v_sim_on_sim": [float(v_sim.mean()), float(v_sim.std())],
            "v_sim_on_real": [float(v_real.mean()), float(v_real.std())],
            "shaped_reward_std": float(shaped.std()), "sparse_reward_std": float(real.rewards.std())}


def markdown(report: dict[str, Any]) -> str:
    lines = ["Per stage (mean over seeds): actor std / SAC α / RMS drift of the mean action from the BC start "
             "(normalised units) / success", "", "| agent | " + " | ".join(
                 f"stage {r['stage']}" for r in next(iter(report["stages"].values()))[0]) + " |"]
    lines.append("|---|" + "---|" * len(next(iter(report["stages"].values()))[0]))
    for name, seeds in report["stages"].items():
        cells = []
        for k in range(len(seeds[0])):
            rows = [s[k] for s in seeds if len(s) > k]
            alpha = [r["alpha"] for r in rows if r["alpha"] is not None]
            cells.append(f"{np.mean([r['std'] for r in rows]):.2f} / " + (f"{np.mean(alpha):.2f}" if alpha else "—")
                         + f" / {np.mean([r['drift_from_bc'] for r in rows]):.2f} / "
                         f"{np.mean([r['success'] for r in rows]):.2f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "IQL after its offline phase, per seed: " + "; ".join(
        f"ESS {w['ess_share']:.2f} of the batch, mean weight expert {w['mean_weight_expert']:.2f} vs other "
        f"{w['mean_weight_other']:.2f} ({w['expert_share']:.0%} expert)" for w in report["iql"]),
        "", "SGFT's V_sim, per seed: " + "; ".join(
            f"R² {v['r2_on_sim']:.2f} on simulation labels ({v['label_mean']:.1f} ± {v['label_std']:.2f}); "
            f"{v['v_sim_on_real'][0]:.1f} ± {v['v_sim_on_real'][1]:.1f} on real states; shaped reward std "
            f"{v['shaped_reward_std']:.2f} against the sparse reward's {v['sparse_reward_std']:.2f}"
            for v in report["sgft"])]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="toy-reach")
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args()
    torch.set_num_threads(1)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    work = ROOT / "outputs" / "baselines" / args.task
    out = ROOT / "results" / "baselines" / args.task
    runs = {n: [s for s in seeds if (work / f"seed-{s}" / n / "state.json").exists()] for n in RL}
    report = {"task": args.task, "seeds": seeds,
              "stages": {n: [stage_rows(work, n, s) for s in ss] for n, ss in runs.items() if ss},
              "iql": [iql_weights(work, s) for s in runs["iql"]],
              "sgft": [sgft_values(work, s) for s in runs["sgft"]]}
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "mechanism.json", report)
    text = markdown(report)
    write_text(out / "mechanism.md", text + "\n")
    print(text)


if __name__ == "__main__":
    main()
