"""Build the zoo's Go2 model folders from the training and adaptation runs (the command that made them).

    python hub/build_go2_models.py base      # hub/models/go2-slope and go2-foam from the pretraining run
                                             # (--candidate: which run; default ZOO_CANDIDATE)
    python hub/build_go2_models.py adapted   # hub/models/go2-slope-ptfe and go2-foam-adapted from `simdist adapt`

Metrics come from the files the runs wrote: Lightning's validation printout (held-out loss terms),
the `simdist evaluate --json` results in results/go2/ and the adaptation curves. Rerunning rebuilds
the folders (each written atomically by `save_pretrained`).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from simdist.components.tasks.go2.protocol import pooled_trials

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "go2"
#: Each stage's recipe: the Go2 base, then the stage file (``simdist fit --config <recipe>``).
BASE_RECIPE = "recipes/go2/base.yaml"
RECIPE = f"{BASE_RECIPE} --config recipes/go2-slope/stage1.yaml"
RECIPE_CONTINUE = f"{BASE_RECIPE} --config recipes/go2-slope/stage2.yaml"
RECIPE_WALK_STARTS = f"{BASE_RECIPE} --config recipes/go2-slope/stage3-walk-starts.yaml"
RECIPE_STAGE4 = f"{BASE_RECIPE} --config recipes/go2-slope/stage4.yaml"
RECIPE_STUDENT = f"{BASE_RECIPE} --config recipes/go2-slope/stage4-student.yaml"
RECIPE_STAGE4_EMA = f"{BASE_RECIPE} --config recipes/go2-slope/stage4-ema.yaml"
DATA_CMD = ("mkdir old && git archive 872dbda hub/experts/go2 | tar -x -C old && simdist generate --task go2 "
            "--experts old/hub/experts/go2 --out data/go2/sim-cpu --preset cpu --seed 0 --walk-start-prob 0")
DATA_WS_CMD = "simdist generate --task go2 --experts hub/experts/go2 --out data/go2/sim-cpu-ws --preset cpu"
DATA_STUDENT_CMD = ("simdist generate --task go2 --experts hub/experts/go2 --out data/go2/sim-cpu-student --envs 256 "
                    "--transitions 1500000 --seed 7 --student outputs/go2/pretrain-ws/model")
#: The training stages, in order: (recipe, the checkpoint it resumes, what it adds).
STAGES = [
    (RECIPE, None, "10,500 steps, about 70 minutes"),
    (RECIPE_CONTINUE, "outputs/go2/pretrain/checkpoints/last.ckpt", "to 20,000 steps, about 60 minutes"),
    (RECIPE_WALK_STARTS, "outputs/go2/pretrain-cont/checkpoints/last.ckpt",
     "to 27,000 steps on the walk-start data, about 40 minutes"),
]
#: Protocol result files (globs in the candidate's results folder, {terrain} filled in) per card metric label;
#: the trials of all files matching a glob are pooled.
PROTOCOL_FILES = {"MPPI 16+2x1, randomised": "mppi_{terrain}.json",
                  "policy head, randomised": "policy_{terrain}.json"}
PROTOCOL_FILES_SEEDS = {
    "MPPI 16+2x1 + temporal ensembling 0.8 (planner.json), randomised": "mppi_te0.8_{terrain}_seed*.json",
    "MPPI 16+2x1, randomised": "mppi_{terrain}_seed*.json",
    "policy head + temporal ensembling 0.8, randomised": "policy_te0.8_{terrain}_seed*.json",
    "policy head, randomised": "policy_{terrain}_seed*.json",
}
#: Zoo candidates: the checkpoint, its `simdist validate` log, its protocol results, its stages, its data note.
CANDIDATES: dict[str, dict[str, Any]] = {
    "ws-27k": dict(ckpt="outputs/go2/pretrain-ws/checkpoints/last.ckpt", log="results/go2/walk-start/validate.log",
                   results="results/go2/walk-start", stages=STAGES, recipe=RECIPE_WALK_STARTS, extra_data=""),
    "s4-32k": dict(ckpt="outputs/go2/pretrain-s4/step32000.ckpt", log="results/go2/stage4-32k/validate.log",
                   results="results/go2/stage4-32k", recipe=RECIPE_STAGE4, extra_data="",
                   stages=[*STAGES, (f"{RECIPE_STAGE4} --trainer.max_steps 32000",
                                     "outputs/go2/pretrain-ws/checkpoints/last.ckpt",
                                     "to 32,000 steps on the walk-start data, about 30 minutes")]),
    "s4-37k": dict(ckpt="outputs/go2/pretrain-s4/checkpoints/last.ckpt", log="results/go2/stage4-37k/validate.log",
                   results="results/go2/stage4-37k", recipe=RECIPE_STAGE4, extra_data="",
                   stages=[*STAGES, (RECIPE_STAGE4, "outputs/go2/pretrain-ws/checkpoints/last.ckpt",
                                     "to 37,000 steps on the walk-start data, about 60 minutes")]),
    "student-32k": dict(ckpt="outputs/go2/pretrain-student/checkpoints/last.ckpt",
                        log="results/go2/student-32k/validate.log", results="results/go2/student-32k",
                        recipe=RECIPE_STUDENT,
                        extra_data=(" Stage 4 added 1.5 M transitions in which the stage-3 model's policy head takes "
                                    "over expert-driven envs for 25-99 steps at a time and the expert then recovers "
                                    f"(a project extension: student takeovers): `{DATA_STUDENT_CMD}`."),
                        stages=[*STAGES, (RECIPE_STUDENT, "outputs/go2/pretrain-ws/checkpoints/last.ckpt",
                                          "to 32,000 steps on the walk-start and student-takeover data, "
                                          "about 35 minutes")]),
    "s4-ema-37k": dict(ckpt="outputs/go2/pretrain-s4-ema/checkpoints/step37000.ckpt",
                       log="results/go2/stage4-ema/37000/validate.log", results="results/go2/stage4-ema/37000",
                       protocol_files=PROTOCOL_FILES_SEEDS, recipe=RECIPE_STAGE4_EMA, extra_data="",
                       stages=[*STAGES, (f"{RECIPE_STAGE4} --trainer.max_steps 32000",
                                         "outputs/go2/pretrain-ws/checkpoints/last.ckpt",
                                         "to 32,000 steps on the walk-start data, about 30 minutes"),
                               (RECIPE_STAGE4_EMA, "outputs/go2/pretrain-s4/step32000.ckpt",
                                "to 37,000 steps with an exponential moving average of the weights (decay 0.999; "
                                "these are the averaged weights), about 30 minutes")]),
}
ZOO_CANDIDATE = "s4-ema-37k"  # what hub/models/go2-slope and go2-foam hold (the best in nominal simulation)
ADAPT_FLAGS = ("--envs 16 --num-samples 16 --iterations 1 --init-std 0.1 --warm-start policy --temporal-ensemble 0.8 "
               "--episodes-per-eval 5 --heldout-episodes 4 --epochs 3 --windows-per-epoch 12000")
SCHEDULE = "0,8,16"
ADAPT_RUNS = {  # name: (base model, run folder, profile, the command that made it)
    "go2-slope-ptfe": ("go2-slope", ROOT / "outputs" / "adapt" / "ptfe57-ema-speeds", "ptfe-slope-5.7deg",
                       f"simdist adapt --model simdist/go2-slope --real ptfe-slope-5.7deg --schedule {SCHEDULE} "
                       f"--out outputs/adapt/ptfe57-ema-speeds {ADAPT_FLAGS}"),
    "go2-foam-adapted": ("go2-foam", ROOT / "outputs" / "adapt" / "foam-ema-speeds", "foam",
                         f"simdist adapt --model simdist/go2-foam --real foam --schedule {SCHEDULE} "
                         f"--out outputs/adapt/foam-ema-speeds {ADAPT_FLAGS}"),
}


def validation_metrics(log: Path) -> dict[str, float]:
    """Held-out loss terms from the table that `simdist validate` prints."""
    if not log.is_file():
        return {}
    found = re.findall(r"(val/\S+)\s*[│|]?\s*([-+0-9.eE]+)", log.read_text())
    names = {"loss": "held-out weighted total loss (1/1/1/4)"}
    return {names.get(key := name.split("/", 1)[1], f"held-out {key} loss"): float(value) for name, value in found}


def protocol_metrics(results: Path, files: dict[str, str] = PROTOCOL_FILES) -> dict[str, Any]:
    """Forward progress in nominal simulation (10 m, 0.5 m/s) per controller and terrain, pooled over the
    trials of the result files matching ``files``' globs."""
    out: dict[str, Any] = {}
    for label, pattern in files.items():
        for terrain in ("flat", "slope"):
            progress = pooled_trials(sorted(results.glob(pattern.format(terrain=terrain))))["progress"]
            if progress:
                key = f"{label}, {terrain}: progress of 10 m at 0.5 m/s ({len(progress)} trials)"
                out[key] = round(sum(progress) / len(progress), 2)
    return out


def description(name: str, task: str, candidate: dict[str, Any]) -> str:
    steps = ", then ".join(f"`simdist fit --config {recipe}" + (f" --ckpt_path {ck}`" if ck else "`") + f" ({what})"
                           for recipe, ck, what in candidate["stages"])
    return (
        f"Simulation-pretrained SimDist world model for the Unitree Go2 ({task}), the official 667,758-parameter "
        "architecture (`WorldModel.from_preset(\"go2\")`).\n\n"
        "**Data**: two runs of the data engine's `cpu` preset (5.0 M simulated transitions each; expert with "
        "probability 0.5, else one of 10 sub-optimal checkpoints; perturbation windows as in the paper; random "
        "terrain with domain randomisation). Stages 1-2 trained on data from the expert set as of git commit "
        f"872dbda (expert iteration 1950): `{DATA_CMD}`. Stage 3 trained on data from the shipped set "
        "`hub/experts/go2` (expert iteration 2549, the same sub-optimal checkpoints) in which 30 % of episodes "
        "start standing still for 10-40 steps under zero actions and then walk straight, as the evaluation "
        f"does: `{DATA_WS_CMD}`.{candidate['extra_data']}\n\n"
        f"**Training** (2 CPU cores, 128 windows a step): {steps}; validation held out by episode (the metrics: "
        "the walk-start data's held-out episodes); the first 7,500 steps ran without the recipe's front padding, "
        "which was added for the rest. Both go2-slope and go2-foam carry these weights: the two tasks share the "
        "simulator, the expert and the data; they differ only in the proxy-real course they are adapted to.\n\n"
        f"**Adapt it**: `simdist adapt --model simdist/{name} --real <profile> --schedule 0,8,16 --out run/ "
        f"{ADAPT_FLAGS}`."
    )


def resolved_config(recipe: str) -> str:
    """The effective training config of a composed recipe ("A --config B"), as `simdist fit --print_config`."""
    files = [f for part in recipe.split(" --config ") for f in ("--config", part.strip())]
    cmd = [sys.executable, "-m", "simdist.cli", "fit", *files, "--print_config"]
    return subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout


#: Each zoo model's planning diagnostics (docs/plan-ranking.md): its action-information report
#: (results/go2/diagnostics/FILE.json, ``simdist diagnose``) and the plan ranking on its course
#: (results/go2/mechanism/PROFILE.json, ``simdist mechanism``) as (FILE, PROFILE, the model's name in it).
DIAGNOSTICS = {"go2-slope": ("go2-slope", "ptfe-slope-5.7deg", "zero-shot"),
               "go2-foam": ("go2-slope", "foam", "zero-shot"),
               "go2-slope-ptfe": ("go2-slope-ptfe", "ptfe-slope-5.7deg", "adapted"),
               "go2-foam-adapted": ("go2-foam-adapted", "foam", "adapted")}


def planning_diagnostics(name: str) -> dict[str, str]:
    """The card rows of a zoo model's two planning diagnostics, from the committed reports."""
    info_file, profile, role = DIAGNOSTICS[name]
    info = json.loads((RESULTS / "diagnostics" / f"{info_file}.json").read_text())
    rho = json.loads((RESULTS / "mechanism" / f"{profile}.json").read_text())["models"][role]["spearman"]
    where = f"{info['windows']} fresh simulation windows, `simdist diagnose`"
    return {
        f"action information: consistency with true / swapped future actions ({where})":
            f"{info['consistency_true_mean']:.4f} / {info['consistency_permuted_mean']:.4f}",
        "action information: latent shift under swapped actions": f"{info['latent_shift']:.3f}",
        "action information: predicted return's correlation with the label return, true / swapped actions":
            f"{info['return_label_corr_true']:.3f} / {info['return_label_corr_permuted']:.3f}",
        f"plan ranking on `{profile}`, the real-time planner's candidates (`simdist mechanism`): Spearman ρ":
            f"{rho['mean']:.3f} [{rho['low']:.3f}, {rho['high']:.3f}]",
    }


def build_base(which: str = ZOO_CANDIDATE) -> None:
    from simdist.hub import PLANNER_NAME
    from simdist.planning import planner_preset
    from simdist.training.module import world_model_from_checkpoint

    candidate = CANDIDATES[which]
    model, _ = world_model_from_checkpoint(str(ROOT / candidate["ckpt"]))
    protocol = protocol_metrics(ROOT / candidate["results"], candidate.get("protocol_files", PROTOCOL_FILES))
    metrics = {**validation_metrics(ROOT / candidate["log"]), **protocol}
    planner = planner_preset("realtime")
    train_config = resolved_config(candidate["recipe"])
    for name, task in (("go2-slope", "PTFE slippery slope"), ("go2-foam", "memory foam")):
        out = model.save_pretrained(ROOT / "hub" / "models" / name,
                                    metrics={**metrics, **planning_diagnostics(name)}, train_config=train_config,
                                    extra_files={PLANNER_NAME: planner}, tags=["go2", "quadruped", "sim-pretrained"],
                                    model_card_kwargs={"repo_id": f"simdist/{name}",
                                                       "description": description(name, task, candidate)})
        print(f"built {out} from {candidate['ckpt']}")


def carry_base_planner(name: str, base: str) -> None:
    """hub/models/<name> acts with its base's planner.json: its adaptation run acted with that planner
    (:data:`ADAPT_FLAGS`), and a folder without one would plan with the default MPPI under ``load_agent``."""
    from simdist.fsutil import atomic_write_text
    from simdist.hub.files import PLANNER_NAME

    src, dst = (ROOT / "hub" / "models" / n / PLANNER_NAME for n in (base, name))
    if not dst.is_file() or dst.read_bytes() != src.read_bytes():
        atomic_write_text(dst, src.read_text(encoding="utf-8"))
        print(f"{dst.relative_to(ROOT)}: the planner of {base}")


def build_adapted() -> None:
    from simdist import WorldModel

    for name, (base, run, profile, command) in ADAPT_RUNS.items():
        curve_file = run / "curve.json"
        if not curve_file.is_file():
            print(f"skipped rebuilding {name}: no {curve_file}")
            carry_base_planner(name, base)
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
            **planning_diagnostics(name),
        }
        text = (f"`simdist/{base}` adapted to the proxy-real profile `{profile}` by finetuning the dynamics only "
                f"on {curve['minutes'][-1]:.1f} minutes of on-policy proxy-real data: `{command}`.")
        out = model.save_pretrained(ROOT / "hub" / "models" / name, base_model=f"simdist/{base}", metrics=metrics,
                                    tags=["go2", "quadruped", "proxy-real-adapted"],
                                    model_card_kwargs={"repo_id": f"simdist/{name}", "description": text})
        carry_base_planner(name, base)
        print(f"built {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", choices=["base", "adapted"])
    parser.add_argument("--candidate", default=ZOO_CANDIDATE, choices=sorted(CANDIDATES),
                        help="base: which training run's checkpoint the zoo's Go2 models carry")
    args = parser.parse_args()
    build_base(args.candidate) if args.which == "base" else build_adapted()


if __name__ == "__main__":
    main()
