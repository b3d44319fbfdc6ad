"""``simdist demo``: the whole SimDist loop on the toy point-mass task, before/after table included.

generate sim data (expert + sub-optimal mixture + perturbation windows) → pretrain the world model →
plan with MPPI in sim and on the "real" variant (different physics) → log real episodes → finetune
the dynamics only → plan again. Writes ``results.json``, ``results.md`` and ``progress.png``.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simdist.arguments import tool_parser


@dataclass
class ToyScale:
    """How much work each stage does; ``quick`` is for tests, ``default`` for the README demo."""

    sim_transitions: int = 40_000
    pretrain_epochs: int = 6
    windows_per_epoch: int = 24_000
    real_episodes: int = 24
    finetune_epochs: int = 3
    finetune_windows_per_epoch: int = 6_000
    eval_episodes: int = 32
    num_envs: int = 16
    samples: int = 128
    iterations: int = 4
    heldout_episodes: int = 4


QUICK = ToyScale(sim_transitions=6_000, pretrain_epochs=2, windows_per_epoch=4_000, real_episodes=8,
                 finetune_epochs=3, finetune_windows_per_epoch=1_500, eval_episodes=8, num_envs=8,
                 samples=48, iterations=2)
#: the end-to-end test's scale: every stage runs, on real components, in well under a minute
TEST = ToyScale(sim_transitions=3_000, pretrain_epochs=1, windows_per_epoch=2_000, real_episodes=2,
                finetune_epochs=2, finetune_windows_per_epoch=600, eval_episodes=2, num_envs=2,
                samples=32, iterations=2, heldout_episodes=2)


def _log(msg: str, started: float) -> None:
    print(f"[{time.perf_counter() - started:6.1f}s] {msg}", flush=True)


def _evaluate(planner: Any, variant: str, episodes: int, num_envs: int, seed: int,
              record: bool = False) -> Any:
    from simdist.components.tasks.toy_reach.pointmass import ToyReachEnv
    from simdist.data.schema import DatasetSpec
    from simdist.rollout import rollout

    env = ToyReachEnv(num_envs, variant=variant, seed=seed)
    spec = DatasetSpec.from_env(env) if record else None
    try:
        return rollout(env, planner, episodes=episodes, seed=seed, record_spec=spec,
                       meta={"source": "real" if variant == "real" else "sim", "task": "toy-reach"})
    finally:
        env.close()


def run_toy_pipeline(out: str | Path, scale: ToyScale | None = None, seed: int = 0,
                     progress: bool = True) -> dict[str, Any]:
    """Run the toy loop end to end in ``out``; returns the results dict (also written to disk)."""
    import lightning as L
    import torch

    from simdist import create
    from simdist.components.tasks.toy_reach.data import generate_toy_dataset
    from simdist.data import DatasetSpec, EpisodeWriter, TrajectoryDataModule
    from simdist.evaluation import bootstrap_ci, compare
    from simdist.training import FinetuneModule, PretrainModule
    from simdist.training.evaluate import consistency_loss
    from simdist.training.module import epoch_trainer

    warnings.filterwarnings("ignore", ".*(eval mode|does not have many workers|__len__).*")
    scale = scale or ToyScale()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    torch.manual_seed(seed)
    L.seed_everything(seed, verbose=False)

    _log(f"1/6 generating {scale.sim_transitions:,} simulated transitions (expert + sub-optimal mixture)", started)
    gen = generate_toy_dataset(str(out / "sim-data"), transitions=scale.sim_transitions, seed=seed,
                               num_envs=scale.num_envs, progress=progress)

    _log("2/6 pretraining the world model on simulation data (all components)", started)
    pre = PretrainModule(preset="toy", lr=1e-3, end_lr=3e-4, warmup_steps=100, decay_steps=4_000)
    cfg = pre.world_model.config
    dm = TrajectoryDataModule(str(out / "sim-data"), history=cfg.history, horizon=cfg.horizon, batch_size=128,
                              windows_per_epoch=scale.windows_per_epoch, heldout_fraction=0.0, seed=seed)
    epoch_trainer(out / "pretrain", scale.pretrain_epochs, progress).fit(pre, dm)
    sim_model = pre.world_model.save_pretrained(out / "toy-sim", metrics={"sim_transitions": gen["transitions"]})

    def planner_for(model: Any) -> Any:
        return create("planner", "mppi", world_model=model, num_samples=scale.samples,
                      iterations=scale.iterations, num_elites=16, seed=seed)

    _log("3/6 planning with MPPI in simulation and zero-shot on the 'real' variant", started)
    model = pre.world_model.eval()
    sim_eval = _evaluate(planner_for(model), "sim", scale.eval_episodes, scale.num_envs, seed + 1)
    real_before = _evaluate(planner_for(model), "real", scale.eval_episodes, scale.num_envs, seed + 2)

    _log(f"4/6 logging {scale.real_episodes} 'real' episodes with the planner (finetuning data)", started)
    heldout = _evaluate(planner_for(model), "real", scale.heldout_episodes, scale.num_envs, seed + 4,
                        record=True).episodes
    train_eps = _evaluate(planner_for(model), "real", scale.real_episodes, scale.num_envs, seed + 3,
                          record=True).episodes
    spec = DatasetSpec.from_episode(train_eps[0])
    with EpisodeWriter(out / "real-data", spec, max_episodes_per_shard=8) as writer:
        for ep in train_eps:
            writer.write(ep)
    minutes = sum(len(ep) for ep in train_eps) * cfg.dt / 60
    pad = cfg.history
    before_loss = consistency_loss(model, heldout, front_padding=pad)

    _log(f"5/6 finetuning only the dynamics on {minutes:.1f} min of 'real' data", started)
    ft = FinetuneModule(init_from=str(sim_model), lr=2e-4, end_lr=1e-4, warmup_steps=50, decay_steps=2_000)
    real_dm = TrajectoryDataModule(str(out / "real-data"), history=cfg.history, horizon=cfg.horizon,
                                   batch_size=32, windows_per_epoch=scale.finetune_windows_per_epoch,
                                   heldout_fraction=0.0, front_pad=pad, seed=seed)
    epoch_trainer(out / "finetune", scale.finetune_epochs, progress).fit(ft, real_dm)
    adapted = ft.world_model.eval()
    adapted.save_pretrained(out / "toy-real", base_model=str(sim_model))
    after_loss = consistency_loss(adapted, heldout, front_padding=pad)

    _log("6/6 planning on the 'real' variant with the adapted model", started)
    real_after = _evaluate(planner_for(adapted), "real", scale.eval_episodes, scale.num_envs, seed + 2)

    evals = (("sim", sim_eval), ("real_zero_shot", real_before), ("real_adapted", real_after))
    returns = {name: bootstrap_ci(r.returns) for name, r in evals}
    distances = {name: bootstrap_ci(_distances(r)) for name, r in evals}
    results = {
        "scale": asdict(scale),
        "sim_data": {k: gen[k] for k in ("episodes", "transitions", "expert_fraction", "noised_fraction")},
        "real_minutes": minutes,
        "return": {name: e.mean for name, e in returns.items()},
        "return_ci95": {name: [e.low, e.high] for name, e in returns.items()},
        "final_distance": {name: e.mean for name, e in distances.items()},
        "final_distance_ci95": {name: [e.low, e.high] for name, e in distances.items()},
        "trials": {name: e.n for name, e in returns.items()},
        "comparison": compare(returns["real_zero_shot"], returns["real_adapted"], "real return, adapted vs zero-shot",
                              ".3f"),
        "heldout_consistency": {"pretrained": before_loss, "adapted": after_loss},
    }
    seconds = time.perf_counter() - started
    (out / "results.json").write_text(json.dumps(results, indent=2))  # numbers only: rewritten byte for byte
    (out / "timing.json").write_text(json.dumps({"seconds": seconds}, indent=2))
    (out / "results.md").write_text(results_table(results))
    _plot(results, out / "progress.png")
    _log(f"done in {seconds:.0f}s; results in {out}", started)
    print(results_table(results))
    return results


def _distances(result: Any) -> np.ndarray:
    """Distance to the goal at the end of each episode (the state starts with p − g)."""
    return np.array([np.linalg.norm(info["final_obs"]["state"][:2]) for info in result.final_info])


def results_table(r: dict[str, Any]) -> str:
    """Mean [95 % bootstrap CI] and the trial count of each evaluation, the comparison, the consistency."""
    ret, dist, cons = r["return"], r["final_distance"], r["heldout_consistency"]
    ret_ci, dist_ci, trials = r["return_ci95"], r["final_distance_ci95"], r["trials"]

    def cell(means: dict[str, float], cis: dict[str, list[float]], key: str) -> str:
        return f"{means[key]:.3f} [{cis[key][0]:.3f}, {cis[key][1]:.3f}]"

    settings = (("sim", "sim (nominal physics)"), ("real_zero_shot", "real, zero-shot (pretrained model)"),
                ("real_adapted", f"real, adapted ({r['real_minutes']:.1f} min of real data)"))
    rows = ["| setting | return, mean [95 % CI] | final distance to goal (m), mean [95 % CI] | trials |",
            "|---|---|---|---|"]
    rows += [f"| {title} | {cell(ret, ret_ci, key)} | {cell(dist, dist_ci, key)} | {trials[key]} |"
             for key, title in settings]
    rows += [
        "",
        r["comparison"],
        "",
        "| held-out real consistency loss | value |",
        "|---|---|",
        f"| pretrained | {cons['pretrained']:.4f} |",
        f"| adapted (dynamics only) | {cons['adapted']:.4f} |",
        f"| reduction | {cons['pretrained'] / max(cons['adapted'], 1e-12):.2f}x |",
    ]
    return "\n".join(rows) + "\n"


def _plot(r: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    labels = ["sim", "real\nzero-shot", "real\nadapted"]
    axes[0].bar(labels, [r["return"]["sim"], r["return"]["real_zero_shot"], r["return"]["real_adapted"]],
                color=["#777", "#c44", "#48c"])
    axes[0].set_ylabel("mean episode return")
    cons = r["heldout_consistency"]
    axes[1].bar(["pretrained", "adapted"], [cons["pretrained"], cons["adapted"]], color=["#c44", "#48c"])
    axes[1].set_ylabel("held-out consistency loss")
    fig.suptitle("simdist toy-reach: zero-shot vs dynamics-only adaptation")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str]) -> int:
    parser = tool_parser("demo", "toy task end to end: generate, pretrain, plan, adapt the dynamics, plan again")
    parser.add_argument("--out", default="outputs/toy-demo")
    parser.add_argument("--quick", action="store_true", help="tiny scale (seconds), as the tests run it")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    run_toy_pipeline(args.out, QUICK if args.quick else ToyScale(), seed=args.seed,
                     progress=not args.no_progress)
    return 0
