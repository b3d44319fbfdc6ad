"""Build the zoo's Go2 model folders from the training and adaptation runs (the command that made them).

    python hub/build_go2_models.py base      # hub/models/go2-slope and go2-foam from the pretraining run
    python hub/build_go2_models.py adapted   # hub/models/go2-slope-ptfe and go2-foam-adapted from `simdist adapt`

Metrics come from the files the runs wrote: Lightning's validation printout (held-out loss terms),
the `simdist evaluate --json` results in results/go2/ and the adaptation curves. Rerunning rebuilds
the folders (each written atomically by `save_pretrained`).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "go2"
CKPT = ROOT / "outputs" / "go2" / "pretrain-ws" / "checkpoints" / "last.ckpt"
VALIDATION_LOG = ROOT / "runs" / "validate_ws.log"
PROTOCOL_RESULTS = RESULTS / "walk-start"
RECIPE = "recipes/go2-slope/pretrain.yaml"
RECIPE_CONTINUE = "recipes/go2-slope/pretrain-continue.yaml"
RECIPE_WALK_STARTS = "recipes/go2-slope/pretrain-walk-starts.yaml"
DATA_CMD = ("mkdir old && git archive 872dbda hub/experts/go2 | tar -x -C old && simdist generate --task go2 "
            "--experts old/hub/experts/go2 --out data/go2/sim-cpu --preset cpu --seed 0 --walk-start-prob 0")
DATA_WS_CMD = "simdist generate --task go2 --experts hub/experts/go2 --out data/go2/sim-cpu-ws --preset cpu"
ADAPT_FLAGS = ("--envs 16 --samples 16 --iterations 1 --init-std 0.1 --warm-start policy --episodes-per-eval 5 "
               "--heldout-episodes 4 --epochs 3 --windows-per-epoch 12000")
SCHEDULE = "0,8,16,27,36"
ADAPT_RUNS = {  # name: (base model, run folder, profile, the command that made it)
    "go2-slope-ptfe": ("go2-slope", ROOT / "outputs" / "adapt" / "ptfe57", "ptfe-slope-5.7deg",
                       f"simdist adapt --model simdist/go2-slope --real ptfe-slope-5.7deg --schedule {SCHEDULE} "
                       f"--out outputs/adapt/ptfe57 {ADAPT_FLAGS}"),
    "go2-foam-adapted": ("go2-foam", ROOT / "outputs" / "adapt" / "foam", "foam",
                         f"simdist adapt --model simdist/go2-foam --real foam --schedule {SCHEDULE} "
                         f"--out outputs/adapt/foam {ADAPT_FLAGS}"),
}


def validation_metrics(log: Path) -> dict[str, float]:
    """Held-out loss terms from the table that `simdist validate` prints."""
    if not log.is_file():
        return {}
    found = re.findall(r"(val/\S+)\s*[│|]?\s*([-+0-9.eE]+)", log.read_text())
    names = {"loss": "held-out weighted total loss (1/1/1/4)"}
    return {names.get(key := name.split("/", 1)[1], f"held-out {key} loss"): float(value) for name, value in found}


def protocol_metrics() -> dict[str, Any]:
    """Forward progress of MPPI and of the base policy head in nominal simulation (10 m, 0.5 m/s)."""
    out: dict[str, Any] = {}
    labels = {"mppi": "MPPI 16+2x1, randomised", "policy": "policy head, randomised"}
    for key, label in labels.items():
        for terrain in ("flat", "slope"):
            path = PROTOCOL_RESULTS / f"{key}_{terrain}.json"
            if path.is_file():
                res = json.loads(path.read_text())
                out[f"{label}, {terrain}: progress of 10 m at 0.5 m/s"] = round(res["mean_progress"], 2)
    return out


def description(name: str, task: str) -> str:
    return (
        f"Simulation-pretrained SimDist world model for the Unitree Go2 ({task}), the official 667,758-parameter "
        "architecture (`WorldModel.from_preset(\"go2\")`).\n\n"
        "**Data**: two runs of the data engine's `cpu` preset (5.0 M simulated transitions each; expert with "
        "probability 0.5, else one of 10 sub-optimal checkpoints; perturbation windows as in the paper; random "
        "terrain with domain randomisation). Stages 1-2 trained on data from the expert set as of git commit "
        f"872dbda (expert iteration 1950): `{DATA_CMD}`. Stage 3 trained on data from the shipped set "
        "`hub/experts/go2` (expert iteration 2549, the same sub-optimal checkpoints) in which 30 % of episodes "
        "start standing still for 10-40 steps under zero actions and then walk straight, as the evaluation "
        f"does: `{DATA_WS_CMD}`.\n\n"
        f"**Training** (2 CPU cores, 128 windows a step): `simdist fit --config {RECIPE}` (10,500 steps, about "
        f"70 minutes), `simdist fit --config {RECIPE_CONTINUE} --ckpt_path "
        "outputs/go2/pretrain/checkpoints/last.ckpt` (to 20,000 steps, about 60 minutes), then "
        f"`simdist fit --config {RECIPE_WALK_STARTS} --ckpt_path outputs/go2/pretrain-cont/checkpoints/last.ckpt` "
        "(to 27,000 steps on the walk-start data, about 42 minutes); validation held out by episode (the "
        "metrics: stage 3's held-out episodes); the first 7,500 steps ran without the recipe's front padding, "
        "which was added for the rest. Both go2-slope and go2-foam carry these weights: the two tasks share the "
        "simulator, the expert and the data; they differ only in the proxy-real course they are adapted to.\n\n"
        f"**Adapt it**: `simdist adapt --model simdist/{name} --real <profile> --schedule 0,8,16 --out run/ "
        f"{ADAPT_FLAGS}`."
    )


def build_base() -> None:
    from simdist.hub import save_pretrained
    from simdist.training.module import world_model_from_checkpoint

    model, _ = world_model_from_checkpoint(str(CKPT))
    metrics = {**validation_metrics(VALIDATION_LOG), **protocol_metrics()}
    from simdist.components.planners.mppi import REALTIME

    planner = {"planner": "mppi", **REALTIME}
    for name, task in (("go2-slope", "PTFE slippery slope"), ("go2-foam", "memory foam")):
        out = save_pretrained(model, ROOT / "hub" / "models" / name, metrics=metrics,
                              train_config=ROOT / RECIPE_WALK_STARTS, planner_config=planner,
                              tags=["go2", "quadruped", "sim-pretrained"],
                              model_card_kwargs={"repo_id": f"simdist/{name}", "description": description(name, task)})
        print(f"built {out}")


def build_adapted() -> None:
    from simdist import WorldModel
    from simdist.hub import save_pretrained

    for name, (base, run, profile, command) in ADAPT_RUNS.items():
        curve_file = run / "curve.json"
        if not curve_file.is_file():
            print(f"skipped {name}: no {curve_file}")
            continue
        curve = json.loads(curve_file.read_text())
        model = WorldModel.from_pretrained(curve["models"][-1])
        metrics = {
            "proxy-real profile": profile, "real data (min)": round(curve["minutes"][-1], 2),
            "forward progress zero-shot (m)": round(curve["value"][0], 3),
            "forward progress adapted (m)": round(curve["value"][-1], 3),
            "held-out consistency zero-shot": round(curve["consistency_after"][0], 4),
            "held-out consistency adapted": round(curve["consistency_after"][-1], 4),
            "value AUC (frozen value head)": ("n/a (no successful episode)" if curve["value_auc"][-1] is None
                                              else round(curve["value_auc"][-1], 3)),
        }
        text = (f"`simdist/{base}` adapted to the proxy-real profile `{profile}` by finetuning the dynamics only "
                f"on {curve['minutes'][-1]:.1f} minutes of on-policy proxy-real data: `{command}`.")
        out = save_pretrained(model, ROOT / "hub" / "models" / name, base_model=f"simdist/{base}", metrics=metrics,
                              tags=["go2", "quadruped", "proxy-real-adapted"],
                              model_card_kwargs={"repo_id": f"simdist/{name}", "description": text})
        print(f"built {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", choices=["base", "adapted"])
    args = parser.parse_args()
    build_base() if args.which == "base" else build_adapted()


if __name__ == "__main__":
    main()
