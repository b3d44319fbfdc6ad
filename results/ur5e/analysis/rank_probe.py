"""Where does the information that ranks the planner's candidates live? Probes on the world model's inputs.

``simdist value-rank fit`` trains the value head on the within-state order of the planner's own candidates; if
even that head cannot rank them, either the model's prediction lost what tells the candidates apart, or the head
could not learn it. This fits the same within-state loss (:func:`simdist.training.candidate_ranking.ranking_loss`,
no level term) with a fresh MLP on three feature sets of every candidate, frozen model throughout:

- ``final latent``: the predicted last latent ẑ_T (what the value head's last token mostly reads);
- ``predicted latents``: the current latent z_0 and every predicted ẑ_1..ẑ_T;
- ``current latent + actions``: z_0 and the candidate's normalised actions, no dynamics at all (a Q-function).

Each probe trains on the sets of ``--train`` and is scored on ``--heldout`` (other seeds): Spearman ρ per state
(mean, 95 % bootstrap interval), beside the model's own planning score, its five predicted rewards and the planning
score of every ``--score NAME=FOLDER`` model (e.g. one that ``simdist value-rank fit`` trained on ``--train``)::

    python -m results.ur5e.analysis.rank_probe --model results/ur5e/planner/ur5e-peg/value-mc-model \\
        --train A.safetensors,B.safetensors --heldout C.safetensors --json results/ur5e/analysis/rank-probe.json
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from torch import nn

from simdist import bootstrap_ci, load_agent
from simdist.data import atomic_write_json
from simdist.diagnostics import VisitedStates, predicted_parts, spearman
from simdist.training import CandidateSet, loss_scales, ranking_loss


@torch.no_grad()
def features(wm: nn.Module, data: CandidateSet) -> dict[str, torch.Tensor]:
    """(S, K, F) features of every candidate per probe."""
    encoding = wm.encode(data.obs_hist, data.act_hist)
    command = data.command if wm.config.command_dim else None
    im = wm.imagine(encoding, data.candidates, command, last_value_only=True)
    s, k = data.candidates.shape[:2]
    z0 = encoding.latent.reshape(s, 1, -1).expand(s, k, -1)
    actions = wm.normalizer.normalize("actions", data.candidates).reshape(s, k, -1)
    return {"final latent": im.latents[:, :, -1],
            "predicted latents": torch.cat([z0, im.latents.reshape(s, k, -1)], -1),
            "current latent + actions": torch.cat([z0, actions], -1)}


def fit_probe(x: torch.Tensor, y: torch.Tensor, *, steps: int, seed: int) -> nn.Module:
    """An MLP (2 x 256) from (S, K, F) features to scores whose within-state order matches ``y`` (S, K)."""
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(x.shape[-1], 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    within, level = loss_scales(y)
    mu, sd = x.mean((0, 1)), x.std((0, 1)).clamp_min(1e-6)
    xn = (x - mu) / sd
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        idx = torch.randint(len(xn), (min(64, len(xn)),), generator=gen)
        loss = ranking_loss(net(xn[idx]).squeeze(-1), y[idx], within_scale=within, level_scale=level,
                            level_weight=0.0)[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    return nn.Sequential(_Standardise(mu, sd), net)


class _Standardise(nn.Module):
    def __init__(self, mu: torch.Tensor, sd: torch.Tensor) -> None:
        super().__init__()
        self.mu, self.sd = mu, sd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mu) / self.sd


def rho(pred: np.ndarray, truth: np.ndarray) -> dict:
    """Per-state Spearman ρ, mean with its 95 % bootstrap interval."""
    return asdict(bootstrap_ci(np.array([spearman(p, t) for p, t in zip(pred, truth)])))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="the world model (agent folder) whose predictions are probed")
    p.add_argument("--train", required=True, help="comma-separated candidate sets (simdist value-rank collect)")
    p.add_argument("--heldout", required=True, help="comma-separated candidate sets of other seeds")
    p.add_argument("--score", action="append", default=[], metavar="NAME=FOLDER",
                   help="also rank with this model's planning score (repeat)")
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", required=True)
    args = p.parse_args()
    paths = {k: [Path(f) for f in getattr(args, k).split(",") if f] for k in ("train", "heldout")}
    missing = [str(f) for fs in paths.values() for f in fs if not f.is_file()]
    if missing:
        p.error(f"no candidate set at {', '.join(missing)}")
    scored = dict(spec.partition("=")[::2] for spec in args.score)
    if any(not k or not v for k, v in scored.items()):
        p.error(f"--score takes NAME=FOLDER, got {args.score}")
    sets = {k: CandidateSet.concat(CandidateSet.load(f) for f in fs) for k, fs in paths.items()}
    wm = load_agent(args.model).world_model.eval()
    feats = {k: features(wm, d) for k, d in sets.items()}
    truth = {k: d.returns.double().numpy() for k, d in sets.items()}
    rows = []
    for split in ("train", "heldout"):
        d = sets[split]
        v = VisitedStates(states=None, obs_hist=d.obs_hist, act_hist=d.act_hist, command=d.command,
                          candidates=d.candidates)
        rewards, value = predicted_parts(wm, v, 0.99)
        rows += [{"score": "the model's planning score", "split": split, "rho": rho(rewards + value, truth[split])},
                 {"score": "its five predicted rewards", "split": split, "rho": rho(rewards, truth[split])}]
        for name, folder in scored.items():
            r, val = predicted_parts(load_agent(folder).world_model.eval(), v, 0.99)
            rows.append({"score": f"{name}'s planning score", "split": split, "rho": rho(r + val, truth[split])})
    for name in feats["train"]:
        net = fit_probe(feats["train"][name], sets["train"].returns, steps=args.steps, seed=args.seed)
        with torch.no_grad():
            for split in ("train", "heldout"):
                pred = net(feats[split][name]).squeeze(-1).double().numpy()
                rows.append({"score": f"probe: {name}", "split": split, "rho": rho(pred, truth[split])})
    for r in rows:
        print(f"{r['score']:<40} {r['split']:<8} rho {r['rho']['mean']:.3f} [{r['rho']['low']:.3f}, "
              f"{r['rho']['high']:.3f}] ({r['rho']['n']} states)")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out, {"model": args.model, "train": [str(f) for f in paths["train"]],
                            "heldout": [str(f) for f in paths["heldout"]], "steps": args.steps,
                            "command": "python -m results.ur5e.analysis.rank_probe " + shlex.join(sys.argv[1:]),
                            "rows": rows})


if __name__ == "__main__":
    main()
