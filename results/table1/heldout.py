"""What each Table I variant predicts on the same held-out data: the mechanism behind its closed-loop number.

    python -m results.table1.heldout --task go2 [--episodes 40]

Held-out data is a fresh dataset of the task's data engine with another seed (`simdist generate ... --seed 1`,
generated once into outputs/table1/<task>/heldout), so no variant has seen it, the expert-only one included. Per
variant, over every window of those episodes: R² of the reward and value heads against the labels (over all
predicted steps, scale-free, so comparable across variants whose normalisers differ), the policy head's RMS
error on the expert's actions (raw units), and the latent-consistency error (in the variant's own latent: not
comparable across variants, reported for completeness). The Go2 adds the zoo model. Writes
results/table1/<task>/heldout.{json,md}.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from results.runner import run_command, simdist_command, write_json, write_text
from results.table1.sweep import TASKS, VARIANTS, ZOO_MODEL

ROOT = Path(__file__).resolve().parents[2]


def _r2(pred: np.ndarray, target: np.ndarray) -> float:
    return float(1.0 - np.mean((pred - target) ** 2) / max(np.var(target), 1e-12))


@torch.no_grad()
def heldout_metrics(model, episodes) -> dict[str, float]:
    """The variant's head and dynamics errors over every window of ``episodes`` (front-padded as in training)."""
    from simdist.training import episode_batch

    model.eval()
    pad = model.config.history
    rewards, values, actions, consistency = [], [], [], []
    for ep in episodes:
        batch = episode_batch(model, ep, front_padding=pad)
        if batch is None:
            continue
        pred = model.predict(batch)
        norm = model.normalizer
        r = norm.denormalize("rewards", pred.rewards.unsqueeze(-1)).squeeze(-1)
        v = norm.denormalize("values", pred.values.unsqueeze(-1)).squeeze(-1)
        rewards.append((r.flatten().numpy(), batch["rewards"].flatten().numpy()))
        values.append((v.flatten().numpy(), batch["values"].flatten().numpy()))
        if pred.actions is not None:
            mask = torch.cumprod(batch["expert"].float(), dim=-1).bool()
            a = norm.denormalize("actions", pred.actions)
            actions.append(((a - batch["fut_acts"])[mask] ** 2).flatten().numpy())
        err = (pred.latents - model.target_latents(batch["fut_obs"])).pow(2).mean(dim=(-1, -2))
        consistency.append(err.numpy())
    if not rewards:
        raise ValueError("no held-out episode is long enough for a window")
    rp, rt = (np.concatenate(x) for x in zip(*rewards))
    vp, vt = (np.concatenate(x) for x in zip(*values))
    return {"reward_r2": _r2(rp, rt), "value_r2": _r2(vp, vt),
            "action_rmse": float(np.sqrt(np.concatenate(actions).mean())) if actions else float("nan"),
            "consistency": float(np.concatenate(consistency).mean()), "windows": int(len(rp))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=sorted(TASKS), required=True)
    parser.add_argument("--episodes", type=int, default=40, help="held-out episodes to read")
    parser.add_argument("--transitions", type=int, default=40000, help="size of the held-out dataset")
    args = parser.parse_args()
    torch.set_num_threads(1)
    work = ROOT / "outputs" / "table1" / args.task
    data = work / "heldout"
    if not (data / "dataset.json").exists():
        gen = list(TASKS[args.task]["generate"])
        if "--transitions" in gen:  # the task's own engine settings, a smaller budget
            i = gen.index("--transitions")
            del gen[i:i + 2]
        run_command(simdist_command("generate", "--task", args.task, *gen, "--transitions", str(args.transitions),
                                    "--seed", "1", "--out", str(data), "--no-progress"), work / "heldout.log", False)
    from itertools import islice

    from simdist import WorldModel
    from simdist.data import iter_episodes

    episodes = list(islice(iter_episodes(str(data), shuffle_shards=False, split_by_node=False,
                                         split_by_worker=False), args.episodes))
    rows = {}
    # every variant, then its other budgets and seeds (`sweep.py --steps`, `--train-seed`)
    folders = [(name, work / name / "model") for name in VARIANTS]
    folders += [(p.parent.name, p) for p in sorted(work.glob("*-*/model")) if p.parent.name not in VARIANTS]
    if args.task == "go2":
        folders.append(("zoo model (go2-slope)", ROOT / ZOO_MODEL))
    for name, folder in folders:
        if (folder / "config.json").exists():
            rows[name] = heldout_metrics(WorldModel.from_pretrained(str(folder)), episodes)
            print(name, rows[name], flush=True)
    out = ROOT / "results" / "table1" / args.task
    write_json(out / "heldout.json", {"episodes": len(episodes), "variants": rows})
    lines = ["| variant | reward R² | value R² | action RMS error (expert steps) | consistency (own latent) |",
             "|---|---|---|---|---|"]
    lines += [f"| {n} | {m['reward_r2']:.3f} | {m['value_r2']:.3f} | {m['action_rmse']:.3f} | {m['consistency']:.4f} |"
              for n, m in rows.items()]
    write_text(out / "heldout.md", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
