"""Plan ranking as a training signal on the toy (docs/ranking.md): candidate ranking data from the training
simulator, ranking distillation into the reward and value heads, and the two gates.

    python -m results.ranking.toy STAGE [--dry-run]

Stages, in order (each resumes: a file or model that exists is kept):

- ``pretrain``: the toy demo's data and pretraining, seed 0 (the model every lever starts from);
- ``collect``: the training shards (the planner's candidates in the training simulator, the toy's critic ending
  each; ``--rank R --world W`` spreads the shards over W processes);
- ``heldout``: held-out states of other seeds with the expert's 400-step continuation as truth (every
  iteration's candidates, and the last iteration's), and the same states ended by the critic (its fidelity);
- ``fit``: each lever at each training size (:data:`SIZES`; the expert's truth at :data:`EXPERT_SIZES`);
- ``score``: every model's ranking of the held-out sets (gate a, the ρ-vs-states curves; the critic's levers and
  the expert's truth in a file each);
- ``expansion``: the planner's value expansion (``value_expansion`` K) on the held-out sets, K in
  :data:`EXPANSIONS`, with the pretrained heads and the largest expert-truth ones;
- ``imagined``: the value head fitted on the model's own imagined λ-returns (:data:`IMAGINED`, no true return
  used) from the expert-truth training states, and its ranking of the held-out sets (gate a);
- ``split``: the same heads on the candidates' true end states (their reached observations encoded) beside the
  imagined ones (:data:`SPLIT_MODELS`): is the limit the dynamics' end state or the value head?
- ``evaluate``: the planner with each lever's largest model, the base planner and the policy head in the training
  simulator (gate b);
- ``gates``: the result files ``results/ranking/toy/*.json`` from the outputs;
- ``table``: ``results/ranking/toy/tables.md`` from the result files (docs/ranking.md includes it).
"""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from results.runner import ROOT, run_command, run_result_step, simdist_command, write_json, write_text
from simdist import bootstrap_ci

OUT = Path("outputs/ranking/toy")
DATA = Path("data/ranking/toy")
RESULTS = Path("results/ranking/toy")
MODEL = OUT / "pre" / "toy-sim"
TASK = ["--task", "toy-reach", "--profile", "sim"]
#: the planner for every stage: the toy demo's MPPI budget (128 samples x 4 iterations; the pretrained folder has no
#: planner.json) at the paper's initial spread
SPREAD = ["--num-samples", "128", "--iterations", "4", "--init-std", "2.0"]
#: how states are visited and candidates drawn (16 of the planner's candidates a state, every 10th control step)
VISIT = ["--candidates", "16", "--every", "10", "--envs", "16"]
SHARDS, SHARD_STATES, TRAIN_SEED = 4, 400, 100
HELDOUT_STATES = 200
#: held-out sets: name -> (seed, pool, truth)
HELDOUT = {"all": (900, "all", "expert"), "last": (901, "last", "expert"), "all-critic": (900, "all", "critic")}
SIZES = (400, 1600)
#: the expert-truth training shards: the first of the critic's seeds (the same states and candidates), to compare the
#: two truths at equal states; shard i is seeded TRAIN_SEED + i, so every size below is a prefix of the next. Five
#: shards are what one process with a fifth of a core collected in the time there was (0.55 CPU s a state); 20
#: shards and a size of 4000 are the run the issue asked for
EXPERT_SHARDS, EXPERT_STATES = 5, 200
#: the expert-truth training sizes (the ρ-vs-states curve on the expert's truth); the largest drives gate b
EXPERT_SIZES = (400, 800, 1000)
#: levers: name -> (description, value-rank fit options)
LEVERS = {
    "within-value": ("value head on the within-state error (`value-rank fit` before this work)",
                     ["--objective", "within", "--train", "value"]),
    "listnet": ("ListNet + parts regression, reward and value heads (`score_heads`)",
                ["--objective", "listnet", "--train", "score_heads"]),
}
FIT_STEPS = ["--steps", "600", "--batch-states", "32"]
TRIALS = ["--trials", "16", "--seed", "2", "--envs", "16"]
#: the value head on the model's own imagined λ-returns: name -> (description, value-rank fit options); the states and
#: candidates of the first 400 expert-truth training states (their truth unused), from the pretrained model
IMAGINED = {
    "imagined-value": ("value head on the model's imagined λ-returns (policy head after the horizon, EMA target, "
                       "anchor 0.1), 400 states, no truth",
                       ["--data", str(DATA / "train-expert"), "--max-states", "400", "--objective", "imagined",
                        "--train", "value"]),
    "imagined-value-listnet": ("the same from the 400-state expert-truth ListNet heads (its value head the start "
                               "and the anchor)",
                               ["--data", str(DATA / "train-expert"), "--max-states", "400", "--objective", "imagined",
                                "--train", "value"]),
}
#: the model a fit starts from where it is not the pretrained one
FIT_FROM = {"imagined-value-listnet": OUT / "listnet-expert-400"}
#: the models whose heads the split reads on the true end states
SPLIT_MODELS = ("base", "listnet-expert-400", "imagined-value")


def _run(cmd: list[str], name: str, dry: bool) -> None:
    run_command(cmd, ROOT / OUT / "logs" / f"{name}.log", dry)


def pretrain(dry: bool) -> None:
    if (ROOT / MODEL / "config.json").is_file():
        print(f"{MODEL} exists: kept")
        return
    _run(simdist_command("demo", "--task", "toy-reach", "--pretrain-only", "--seed", "0", "--out", str(OUT / "pre")),
         "pretrain", dry)


def collect(dry: bool, rank: int, world: int, only: str | None) -> None:
    for truth, shards, states in (("critic", SHARDS, SHARD_STATES), ("expert", EXPERT_SHARDS, EXPERT_STATES)):
        if (only and truth != only) or not shards:
            continue
        _run(simdist_command("value-rank", "collect", *TASK, "--agent", str(MODEL), *SPREAD, *VISIT, "--truth", truth,
                             *(["--parts"] if truth == "expert" else []), "--shards", str(shards), "--states",
                             str(states), "--seed", str(TRAIN_SEED), "--rank", str(rank), "--world", str(world),
                             "--out", str(DATA / f"train-{truth}")), f"collect-{truth}-{rank}", dry)


def heldout_path(name: str) -> Path:
    return DATA / f"heldout-{name}.safetensors"


def heldout(dry: bool, only: str | None) -> None:
    for name, (seed, pool, truth) in HELDOUT.items():
        if only and name != only:
            continue
        # the expert sets keep each candidate's reached observations too (the split's true latents); the states,
        # candidates and returns are those of a set without them
        parts = ["--parts", "--observations"] if truth == "expert" else []
        _run(simdist_command("value-rank", "collect", *TASK, "--agent", str(MODEL), *SPREAD, *VISIT,
                             "--states", str(HELDOUT_STATES), "--seed", str(seed), "--pool", pool, "--truth", truth,
                             *parts, "--out", str(heldout_path(name))), f"heldout-{name}", dry)


def fitted(lever: str, size: int) -> Path:
    return OUT / f"{lever}-{size}"


def expert_model(size: int) -> str:
    """The name of the ListNet fit on the expert's truth of the first ``size`` training states."""
    return f"listnet-expert-{size}"


def critic_fits() -> list[str]:
    return [f"{lever}-{size}" for lever in LEVERS for size in SIZES]


def expert_fits() -> list[str]:
    return [expert_model(size) for size in EXPERT_SIZES]


def fits() -> dict[str, list[str]]:
    """Every fit: its model's name -> its ``value-rank fit`` options (each lever at each size on the critic's
    truth; ListNet on the expert's truth of the first states, the critic's first seeds, at each expert size)."""
    rows = {f"{lever}-{size}": ["--data", str(DATA / "train-critic"), "--max-states", str(size), *options]
            for lever, (_, options) in LEVERS.items() for size in SIZES}
    rows |= {expert_model(size): ["--data", str(DATA / "train-expert"), "--max-states", str(size),
                                  *LEVERS["listnet"][1]] for size in EXPERT_SIZES}
    return rows | {name: options for name, (_, options) in IMAGINED.items()}


def fit_command(name: str) -> list[str]:
    return ["value-rank", "fit", "--agent", str(FIT_FROM.get(name, MODEL)), *fits()[name], *FIT_STEPS, "--out",
            str(OUT / name)]


def fit(dry: bool, only: str | None) -> None:
    for name in fits():
        if (only and name != only and not name.startswith(f"{only}-")) or (not only and name in IMAGINED):
            continue
        if (ROOT / OUT / name / "config.json").is_file():
            print(f"{OUT / name} exists: kept")
            continue
        _run(simdist_command(*fit_command(name)), f"fit-{name}", dry)


def models(names: list[str]) -> list[str]:
    """``NAME=FOLDER`` of the base model and the fitted ones ``names``."""
    return [f"base={MODEL}"] + [f"{name}={OUT / name}" for name in names]


#: the score files: name -> the fitted models they rank (the critic's levers; the expert's truth at each size)
SCORES = {"score": critic_fits, "score-expert": expert_fits}


def score(dry: bool, only: str | None) -> None:
    for prefix, names in SCORES.items():
        if only and prefix != only:
            continue
        for pool in ("all", "last"):
            out = OUT / f"{prefix}-{pool}.json"
            if (ROOT / out).is_file():
                print(f"{out} exists: kept")
                continue
            critic = heldout_path("all-critic")
            compare = ["--compare", str(critic)] if prefix == "score" and pool == "all" and (ROOT / critic).is_file() \
                else []
            cmd = simdist_command("value-rank", "score", *[a for m in models(names()) for a in ("--model", m)],
                                  "--data", str(heldout_path(pool)), *compare, "--out", str(out))
            run_result_step(out, cmd, dry)


#: the value expansions K measured (0: the paper's score, the same numbers as ``score``)
EXPANSIONS = (0, 1, 2, 4, 8)


def expansion_models() -> dict[str, Path]:
    """The models the expansion is measured with: the pretrained heads and the largest expert-truth ones."""
    return {"base": MODEL, expert_model(EXPERT_SIZES[-1]): OUT / expert_model(EXPERT_SIZES[-1])}


def expansion_path(name: str, pool: str, k: int) -> Path:
    return OUT / "expansion" / f"{name}-{pool}-k{k}.json"


def expansion_command(name: str, pool: str, k: int) -> list[str]:
    return ["value-rank", "score", "--model", f"{name}={expansion_models()[name]}", "--data", str(heldout_path(pool)),
            "--expansion", str(k), "--out", str(expansion_path(name, pool, k))]


def expansion(dry: bool) -> None:
    for name, folder in expansion_models().items():
        if not dry and not (ROOT / folder / "config.json").is_file():
            print(f"{folder} is missing: run the fit stage first")
            continue
        for pool in ("all", "last"):
            for k in EXPANSIONS:
                out = expansion_path(name, pool, k)
                if (ROOT / out).is_file():
                    print(f"{out} exists: kept")
                    continue
                run_result_step(out, simdist_command(*expansion_command(name, pool, k)), dry)


#: the closed-loop rows of gate b: name -> (agent, extra options)
def agents() -> dict[str, tuple[Path, list[str]]]:
    rows = {"policy-head": (MODEL, ["--planner", "policy"]), "planner-base": (MODEL, SPREAD)}
    rows |= {f"planner-{lever}": (fitted(lever, SIZES[-1]), SPREAD) for lever in LEVERS}
    rows |= {f"planner-{expert_model(size)}": (OUT / expert_model(size), SPREAD) for size in (400, EXPERT_SIZES[-1])}
    return rows | {f"planner-{name}": (OUT / name, SPREAD) for name in IMAGINED}


def evaluate(dry: bool, only: str | None) -> None:
    for name, (agent, extra) in agents().items():
        out = OUT / "eval" / f"{name}.json"
        if (only and name != only) or (ROOT / out).is_file():
            continue
        run_result_step(out, simdist_command("evaluate", *TASK, "--agent", str(agent), *extra, *TRIALS, "--json"),
                        dry)


def model_folder(name: str) -> Path:
    return MODEL if name == "base" else OUT / name


def imagined_score_command(pool: str) -> list[str]:
    names = ["base", expert_model(400), *IMAGINED]
    return ["value-rank", "score", *[a for n in names for a in ("--model", f"{n}={model_folder(n)}")],
            "--data", str(heldout_path(pool)), "--out", str(OUT / f"score-imagined-{pool}.json")]


def imagined(dry: bool) -> None:
    """Fit :data:`IMAGINED` (the fit stage's command) and rank the held-out sets with them, the pretrained model and
    the 400-state expert-truth ListNet heads beside (``score-imagined-{all,last}.json``)."""
    for name in IMAGINED:
        fit(dry, name)
    score_each_pool("score-imagined", imagined_score_command, dry)


def score_each_pool(stem: str, command: Callable[[str], list[str]], dry: bool) -> None:
    """Run ``command(pool)`` for both held-out sets, writing ``OUT/<stem>-<pool>.json``; an existing file is kept."""
    for pool in ("all", "last"):
        out = OUT / f"{stem}-{pool}.json"
        if (ROOT / out).is_file():
            print(f"{out} exists: kept")
            continue
        run_result_step(out, simdist_command(*command(pool)), dry)


def split_command(pool: str) -> list[str]:
    return ["value-rank", "score", *[a for n in SPLIT_MODELS for a in ("--model", f"{n}={model_folder(n)}")],
            "--data", str(heldout_path(pool)), "--true-latents", "--out", str(OUT / f"split-{pool}.json")]


def split(dry: bool) -> None:
    """Each of :data:`SPLIT_MODELS`'s heads on the held-out candidates' true latents beside the imagined ones
    (``split-{all,last}.json``; the held-out sets collected with their observations)."""
    score_each_pool("split", split_command, dry)


def why(dry: bool) -> None:
    """``imagined-why.json``: what the imagined objective regresses the value on, ranked against the truth. For the
    pretrained model and each of :data:`IMAGINED` on the held-out sets: the imagined λ-return at ẑ_T (its target,
    bootstrapped with the model's own value head), the policy head's T imagined rewards after the horizon (the
    target's part that the bootstrap does not carry), each ranked against the true continuation; the value term
    against that target; and the target's spread between one state's candidates."""
    if dry:
        print(f"+ write {RESULTS}/imagined-why.json from {OUT} and the held-out sets")
        return
    import numpy as np
    import torch

    from simdist import load_agent
    from simdist.diagnostics import spearman
    from simdist.training import CandidateSet, ImaginedValueModule

    out: dict[str, Any] = {}
    for name in ("base", *IMAGINED):
        agent: Any = load_agent(str(ROOT / model_folder(name)))
        wm = agent.world_model.eval()
        t, gamma = wm.config.horizon, 0.99
        out[name] = {}
        for pool in ("all", "last"):
            data = CandidateSet.load(ROOT / heldout_path(pool))
            module = ImaginedValueModule(wm, data.rows(range(8)), gamma=gamma, lam=0.95, lr=1e-3, steps=1,
                                         level_weight=0.1, ema=0.01, anchor_weight=0.1)
            with torch.no_grad():
                windows, returns, _ = module.rollout(data)
                value = wm._heads(*windows[0])[1].reshape(*returns.shape[:2], -1)[..., -1]
                later = wm._heads(*windows[1], value_head=module.target)[0].reshape(*returns.shape[:2], -1)
            norm = wm.normalizer
            later = norm.denormalize("rewards", later.unsqueeze(-1)).squeeze(-1).double().numpy()
            value = norm.denormalize("values", value.unsqueeze(-1)).squeeze(-1).double().numpy()
            target = returns[..., t - 1].double().numpy()
            rewards_after = (later * gamma ** np.arange(later.shape[-1])).sum(-1)
            tail = (data.returns - data.parts["horizon"]).double().numpy()
            per = {"rho_target_vs_tail": [spearman(a, b) for a, b in zip(target, tail)],
                   "rho_rewards_after_vs_tail": [spearman(a, b) for a, b in zip(rewards_after, tail)],
                   "rho_value_vs_target": [spearman(a, b) for a, b in zip(value, target)],
                   "target_spread": np.ptp(target, axis=1) * gamma ** t, "tail_spread": np.ptp(tail, axis=1)}
            out[name][pool] = {k: _estimate(asdict(bootstrap_ci(np.asarray(v, np.float64)))) for k, v in per.items()}
    write_json(ROOT / RESULTS / "imagined-why.json", {
        "task": "toy-reach", "what": "the imagined λ-return at ẑ_T (λ 0.95, the policy head's 8 steps after the "
        "horizon, bootstrapped with the model's own value head) and its parts, ranked against the true continuation "
        "on the held-out states; the target spread is γ^T times the return's (the value term's units)",
        "models": out, "command": "python -m results.ranking.toy why"})
    print(json.dumps(out, indent=1))


# ------------------------------------------------------------------------------------------------ results
def _load(path: Path) -> Any:
    return json.loads((ROOT / path).read_text())


def _estimate(e: dict[str, Any]) -> dict[str, Any]:
    return {"mean": round(e["mean"], 4), "low": round(e["low"], 4), "high": round(e["high"], 4), "n": e["n"]}


def _closed_loop(name: str) -> dict[str, Any]:
    result = _load(OUT / "eval" / f"{name}.json")
    row = {"return": _estimate(asdict(bootstrap_ci(result["values"]))),
           "success": _estimate(asdict(bootstrap_ci([float(s) for s in result["success"]])))}
    agent, extra = agents()[name]
    return row | {"command": shlex.join(["simdist", "evaluate", *TASK, "--agent", str(agent), *extra, *TRIALS])}


def _shard_cost() -> dict[str, Any]:
    sidecars = sorted((ROOT / DATA / "train-critic").glob("shard-*.json"))
    info = [json.loads(p.read_text()) for p in sidecars]
    per = {name: json.loads((ROOT / heldout_path(name)).with_suffix(".json").read_text()) for name in HELDOUT}
    states = sum(i["states"] for i in info)
    return {"train_shards": len(info), "train_states": states,
            "critic_cpu_s_per_state": round(sum(i["cpu_seconds"] for i in info) / max(1, states), 4),
            "heldout": {k: {f: v[f] for f in ("states", "pool", "truth", "cpu_seconds", "cpu_seconds_per_state",
                                              "spread_per_state")} for k, v in per.items()}}


def _scores(prefix: str) -> dict[str, Any] | None:
    """The held-out scores of one score file pair (``prefix``-{all,last}.json), None where either is missing."""
    paths = {pool: OUT / f"{prefix}-{pool}.json" for pool in ("all", "last")}
    if not all((ROOT / p).is_file() for p in paths.values()):
        return None
    return {pool: _load(path) for pool, path in paths.items()}


def _row(scores: dict[str, Any], name: str, states: int) -> dict[str, Any]:
    return {"states": states, "last": _estimate(scores["last"]["scores"][name]["spearman"]),
            "pooled": _estimate(scores["all"]["scores"][name]["spearman"])}


def gates(dry: bool) -> None:
    """The result files from whichever outputs exist (each family of rows from its own score files); a family
    whose outputs are missing keeps its committed results."""
    if dry:
        print(f"+ write {RESULTS}/*.json from {OUT}")
        return
    score_cmd = "simdist value-rank score --model NAME=MODEL ... --data " + str(heldout_path("{all,last}"))
    curve_path = ROOT / RESULTS / "curve.json"
    curve = _load(RESULTS / "curve.json")["curve"] if curve_path.is_file() else {}
    scores = _scores("score")
    if scores is None:
        print(f"{OUT}/score-{{all,last}}.json missing: the critic-truth results are kept")
    else:
        truth = scores["all"]["truth"]
        if "compare" in truth:
            write_json(ROOT / RESULTS / "truth.json", {
                "task": "toy-reach", "what": "the cost and fidelity of the critic's truth against the expert's "
                "continuation", "cost": _shard_cost(),
                "critic_vs_expert": {k: truth["compare"][k] for k in ("spearman", "top1", "regret")},
                "command": f"{score_cmd} --compare {heldout_path('all-critic')}"})
        for lever, (what, _) in LEVERS.items():
            rows = [_row(scores, "base", 0)] + [_row(scores, f"{lever}-{size}", size) for size in SIZES]
            curve[lever] = rows
            _write_gates(lever, what, f"{lever}-{SIZES[-1]}", SIZES[-1], scores, score_cmd, rows)
    expert = _scores("score-expert")
    if expert is not None and any(expert_model(size) not in expert["all"]["scores"] for size in EXPERT_SIZES):
        expert = None
    if expert is None:
        print(f"{OUT}/score-expert-{{all,last}}.json missing or partial: the expert-truth results are kept")
    else:
        rows = [_row(expert, "base", 0)] + [_row(expert, expert_model(size), size) | {
            "command": shlex.join(["simdist", *fit_command(expert_model(size))])} for size in EXPERT_SIZES]
        curve["listnet-expert"] = rows
        for size in EXPERT_SIZES:
            _write_gates(expert_model(size), f"ListNet + parts regression on `score_heads`, the expert's truth, "
                         f"{size} states", expert_model(size), size, expert, score_cmd, rows)
    write_json(curve_path, {"task": "toy-reach", "what": "whole-score Spearman ρ on held-out states against "
                            "training states", "curve": curve})
    _expert_cost()
    _expansion_results()
    _imagined_results()
    _split_results()


def _imagined_results() -> None:
    """``gate-a_NAME.json`` (and ``gate-b_NAME.json`` once evaluated) for each of :data:`IMAGINED` whose held-out
    scores exist."""
    scores = _scores("score-imagined")
    if scores is None:
        return
    for name, (what, _) in IMAGINED.items():
        if name not in scores["all"]["scores"]:
            continue
        rows = [_row(scores, n, 400) | {"model": n} for n in ("base", expert_model(400), name)]
        rows[0]["states"] = 0
        cmd = "simdist " + shlex.join(imagined_score_command("{all,last}")).replace("'", "")
        _write_gates(name, what, name, 400, scores, cmd, rows)


def _split_results() -> None:
    """``split-MODEL.json`` for each of :data:`SPLIT_MODELS`: its value head on the imagined end state and on the
    true one, each ranked against the true continuation (and the rest of the control), pooled and last."""
    scores = _scores("split")
    if scores is None:
        return
    keys = ("rho_value_on_true", "rho_reward_on_true", "rho_on_true", "rho_value_pred_vs_true",
            "value_spread_on_true", "value_spread_predicted", "tail_spread")
    for name in SPLIT_MODELS:
        got = {pool: scores[pool]["scores"][name] for pool in scores}
        write_json(ROOT / RESULTS / f"split-{name}.json", {
            "model": name, "task": "toy-reach", "what": "the value head on the imagined end state ẑ_T and on the "
            "true one (the observations each candidate reached, encoded), each ranked against the true continuation",
            "value_on_imagined_vs_tail": {p: _estimate(g["split"]["rho_value"]) for p, g in got.items()},
            "value_on_true_vs_tail": {p: _estimate(g["true_latents"]["rho_value_on_true"]) for p, g in got.items()},
            "reward_on_imagined_vs_horizon": {p: _estimate(g["split"]["rho_reward"]) for p, g in got.items()},
            "score_on_imagined": {p: _estimate(g["spearman"]) for p, g in got.items()},
            "control": {p: {k: _estimate(g["true_latents"][k]) for k in keys} for p, g in got.items()},
            "states": got["last"]["spearman"]["n"],
            "command": "simdist " + shlex.join(split_command("{all,last}")).replace("'", "")})


def _expert_cost() -> None:
    """``cost-expert.json``: the CPU seconds a state of the expert-truth training shards (visit included), once
    all :data:`EXPERT_SHARDS` exist."""
    info = [json.loads(p.read_text()) for p in sorted((ROOT / DATA / "train-expert").glob("shard-*.json"))]
    if len(info) < EXPERT_SHARDS:
        return
    per = [i["cpu_seconds_per_state"] for i in info]
    states = sum(i["states"] for i in info)
    write_json(ROOT / RESULTS / "cost-expert.json", {
        "task": "toy-reach", "what": "CPU seconds a training state with the expert's 400-step continuation as truth "
        "(16 candidates, the planner's visit included), one process", "shards": len(info), "states": states,
        "cpu_seconds": round(sum(i["cpu_seconds"] for i in info), 1),
        "cpu_seconds_per_state": round(sum(i["cpu_seconds"] for i in info) / states, 4),
        "per_shard_min": min(per), "per_shard_max": max(per),
        "command": shlex.join(["simdist", "value-rank", "collect", *TASK, "--agent", str(MODEL), *SPREAD, *VISIT,
                               "--truth", "expert", "--parts", "--shards", str(EXPERT_SHARDS), "--states",
                               str(EXPERT_STATES), "--seed", str(TRAIN_SEED), "--out", str(DATA / "train-expert")])})


def _expansion_results() -> None:
    """``expansion-MODEL-kK.json``, one per model and K whose held-out scores exist."""
    for name in expansion_models():
        for k in EXPANSIONS:
            paths = {pool: expansion_path(name, pool, k) for pool in ("all", "last")}
            if not all((ROOT / p).is_file() for p in paths.values()):
                continue
            got = {pool: _load(p)["scores"][name] for pool, p in paths.items()}
            split = {pool: {key: _estimate(got[pool]["split"][key]) for key in
                            ("rho_reward", "rho_value", "rho_score_vs_horizon", "rho_score_vs_tail",
                             "predicted_reward_spread", "predicted_value_spread", "value_offset")} for pool in got}
            write_json(ROOT / RESULTS / f"expansion-{name}-k{k}.json", {
                "model": name, "task": "toy-reach", "gate": "a", "threshold": 0.7, "expansion": k,
                "what": "the score with the policy head's K imagined steps after the horizon and the value there",
                "estimate": {"last": _estimate(got["last"]["spearman"]), "pooled": _estimate(got["all"]["spearman"])},
                "states": got["last"]["spearman"]["n"], "split": split,
                "command": shlex.join(["simdist", *expansion_command(name, "{all,last}", k)])})


def _write_gates(lever: str, what: str, name: str, size: int, scores: dict[str, Any], score_cmd: str,
                 rows: list[dict[str, Any]]) -> None:
    """``gate-a_LEVER.json`` from the held-out scores of model ``name``; ``gate-b_LEVER.json`` from its closed loop
    when that was evaluated."""
    truth = scores["all"]["truth"]
    split = {pool: {k: _estimate(scores[pool]["scores"][name]["split"][k]) for k in
                    ("rho_reward", "rho_value", "rho_score_vs_horizon", "rho_score_vs_tail",
                     "predicted_reward_spread", "predicted_value_spread")} for pool in scores}
    fit_cmd = shlex.join(["simdist", *fit_command(name)])
    last, pooled = (_estimate(scores[p]["scores"][name]["spearman"]) for p in ("last", "all"))
    write_json(ROOT / RESULTS / f"gate-a_{lever}.json", {
        "lever": lever, "what": what, "task": "toy-reach", "gate": "a", "threshold": 0.7,
        "estimate": {"last": last, "pooled": pooled}, "states": last["n"], "training_states": size,
        "passes": bool(last["mean"] >= 0.7 and pooled["mean"] >= 0.7), "split": split,
        "truth_spread": {k: _estimate(truth[k]) for k in ("true_spread", "horizon_spread", "tail_spread")},
        "curve": rows, "command": fit_cmd, "score_command": score_cmd})
    if not (ROOT / OUT / "eval" / f"planner-{lever}.json").is_file():
        return
    planner, policy = _closed_loop(f"planner-{lever}"), _closed_loop("policy-head")
    write_json(ROOT / RESULTS / f"gate-b_{lever}.json", {
        "lever": lever, "what": what, "task": "toy-reach", "gate": "b",
        "estimate": planner["return"], "success": planner["success"], "trials": planner["return"]["n"],
        "policy_head": policy, "planner_before": _closed_loop("planner-base"),
        "passes": bool(planner["return"]["low"] > policy["return"]["high"]), "command": planner["command"]})


def _cell(e: dict[str, Any]) -> str:
    return f"{e['mean']:.2f} [{e['low']:.2f}, {e['high']:.2f}]"


def _gate_a_rows() -> list[str]:
    """The gate-a result files in table order: the critic's levers, then the expert's truth by size."""
    return [*LEVERS, *(expert_model(size) for size in EXPERT_SIZES), *IMAGINED]


def table(dry: bool) -> None:
    if dry:
        print(f"+ write {RESULTS}/tables.md from {RESULTS}/*.json")
        return
    a = {lever: _load(RESULTS / f"gate-a_{lever}.json") for lever in _gate_a_rows()
         if (ROOT / RESULTS / f"gate-a_{lever}.json").is_file()}
    b = {lever: _load(RESULTS / f"gate-b_{lever}.json") for lever in a
         if (ROOT / RESULTS / f"gate-b_{lever}.json").is_file()}
    lines = ["<!-- Generated by `python -m results.ranking.toy table` from results/ranking/toy/*.json. -->", "",
             "**Gate (a)**: the whole score's Spearman ρ against the true return on held-out states (ρ ≥ 0.7).", "",
             "| lever | task | training states | ρ last iteration | ρ pooled | held-out states | passes | command |",
             "|---|---|---|---|---|---|---|---|"]
    base = next(iter(a.values()))["curve"][0]
    lines.append(f"| none (the pretrained model) | toy-reach | 0 | {_cell(base['last'])} | {_cell(base['pooled'])} | "
                 f"{base['last']['n']} | {'yes' if min(base['last']['mean'], base['pooled']['mean']) >= 0.7 else 'no'}"
                 " | `simdist demo --task toy-reach --pretrain-only --seed 0` |")
    for r in a.values():
        lines.append(f"| {r['what']} | toy-reach | {r['training_states']} | {_cell(r['estimate']['last'])} | "
                     f"{_cell(r['estimate']['pooled'])} | {r['states']} | {'yes' if r['passes'] else 'no'} | "
                     f"`{r['command']}` |")
    lines += ["", "**Gate (b)**: the planner's return in the training simulator against the policy head's "
              "(MPPI initial std 2.0).", "",
              "| lever | task | planner return | success | policy head return | planner before | trials | beats the "
              "policy head | command |", "|---|---|---|---|---|---|---|---|---|"]
    for lever, r in b.items():
        lines.append(f"| {a[lever]['what']} | toy-reach | {_cell(r['estimate'])} | {r['success']['mean']:.2f} | "
                     f"{_cell(r['policy_head']['return'])} | {_cell(r['planner_before']['return'])} | {r['trials']} | "
                     f"{'yes' if r['passes'] else 'no'} | `{r['command']}` |")
    curve = _load(RESULTS / "curve.json")["curve"]
    for title, levers in (("critic's truth", list(LEVERS)), ("expert's truth", ["listnet-expert"])):
        rows = [lever for lever in levers if lever in curve]
        if not rows:
            continue
        sizes = [row["states"] for row in curve[rows[0]]]
        lines += ["", f"**The ρ-vs-states curve, the {title}** (held-out states; ρ last iteration / pooled).", "",
                  "| lever | " + " | ".join(f"{n} states" for n in sizes) + " |", "|---|" + "---|" * len(sizes)]
        lines += [f"| {lever} | " + " | ".join(f"{_cell(row['last'])} / {_cell(row['pooled'])}"
                                               for row in curve[lever]) + " |" for lever in rows]
    lines += _expansion_table()
    lines += _split_table()
    lines += _why_table()
    write_text(ROOT / RESULTS / "tables.md", "\n".join(lines) + "\n")
    print((ROOT / RESULTS / "tables.md").read_text())


def _expansion_table() -> list[str]:
    found = {name: {k: _load(RESULTS / f"expansion-{name}-k{k}.json") for k in EXPANSIONS
                    if (ROOT / RESULTS / f"expansion-{name}-k{k}.json").is_file()} for name in expansion_models()}
    found = {name: rows for name, rows in found.items() if rows}
    if not found:
        return []
    ks = sorted({k for rows in found.values() for k in rows})
    lines = ["", "**Value expansion** (`value_expansion` K: the policy head's K imagined steps after the horizon, the "
             "value there; held-out states; ρ last iteration / pooled; the value part's ρ against the true tail, "
             "pooled).", "", "| heads | " + " | ".join(f"K = {k}" for k in ks) + " | command |",
             "|---|" + "---|" * (len(ks) + 1)]
    for name, rows in found.items():
        cells = [f"{_cell(rows[k]['estimate']['last'])} / {_cell(rows[k]['estimate']['pooled'])}; value "
                 f"{rows[k]['split']['all']['rho_value']['mean']:.2f}" if k in rows else "" for k in ks]
        k0 = next(iter(rows))
        cmd = rows[k0]["command"].replace(f"--expansion {k0}", "--expansion K").replace(f"-k{k0}.", "-kK.")
        lines.append(f"| {'pretrained' if name == 'base' else name} | " + " | ".join(cells) + f" | `{cmd}` |")
    return lines


def _split_table() -> list[str]:
    found = {name: _load(RESULTS / f"split-{name}.json") for name in SPLIT_MODELS
             if (ROOT / RESULTS / f"split-{name}.json").is_file()}
    if not found:
        return []
    cmd = next(iter(found.values()))["command"]
    lines = ["", "**The split: the value head on the imagined and on the true end state** (held-out states; ρ of the "
             "value term against the true continuation, last iteration / pooled; the true end state is the "
             "model's encoding of the observations each candidate reached in the simulator).", "",
             "| heads | value on imagined ẑ_T | value on true z_T | value spread imagined / true / true tail (pooled) "
             "| whole score on true latents |", "|---|---|---|---|---|"]
    for name, r in found.items():
        c = r["control"]["all"]
        lines.append(f"| {'pretrained' if name == 'base' else name} | {_cell(r['value_on_imagined_vs_tail']['last'])}"
                     f" / {_cell(r['value_on_imagined_vs_tail']['all'])} | {_cell(r['value_on_true_vs_tail']['last'])}"
                     f" / {_cell(r['value_on_true_vs_tail']['all'])} | {c['value_spread_predicted']['mean']:.2f} / "
                     f"{c['value_spread_on_true']['mean']:.2f} / {c['tail_spread']['mean']:.2f} | "
                     f"{_cell(r['control']['last']['rho_on_true'])} / {_cell(c['rho_on_true'])} |")
    return lines + ["", f"Command: `{cmd}`."]


def _why_table() -> list[str]:
    if not (ROOT / RESULTS / "imagined-why.json").is_file():
        return []
    why_ = _load(RESULTS / "imagined-why.json")
    lines = ["", "**Why the imagined value ranks as it does** (held-out states, last iteration / pooled): the imagined "
             "λ-return at ẑ_T it regresses on, and the policy head's imagined rewards after the horizon, each ranked "
             "against the true continuation; the value term against that target; the target's spread (value-term "
             "units) beside the true tail's.", "",
             "| model | target vs true tail | imagined rewards after T vs true tail | value vs target | "
             "target spread / true tail spread (pooled) |", "|---|---|---|---|---|"]
    for name, r in why_["models"].items():
        a, b = r["last"], r["all"]
        lines.append(f"| {'pretrained' if name == 'base' else name} | {_cell(a['rho_target_vs_tail'])} / "
                     f"{_cell(b['rho_target_vs_tail'])} | {_cell(a['rho_rewards_after_vs_tail'])} / "
                     f"{_cell(b['rho_rewards_after_vs_tail'])} | {_cell(a['rho_value_vs_target'])} / "
                     f"{_cell(b['rho_value_vs_target'])} | {b['target_spread']['mean']:.2f} / "
                     f"{b['tail_spread']['mean']:.2f} |")
    return lines + ["", f"Command: `{why_['command']}`."]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("stage", choices=("pretrain", "collect", "heldout", "fit", "score", "expansion", "imagined",
                                     "split", "why", "evaluate", "gates", "table"))
    p.add_argument("--only", default=None,
                   help="collect: only this truth; heldout, fit, score, evaluate: only this set, fit (or fits NAME-*), "
                   "score file (score, score-expert) or row")
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--world", type=int, default=1)
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args()
    dry = args.dry_run
    if args.stage == "collect":
        collect(dry, args.rank, args.world, args.only)
    elif args.stage in ("heldout", "fit", "score", "evaluate"):
        {"heldout": heldout, "fit": fit, "score": score, "evaluate": evaluate}[args.stage](dry, args.only)
    else:
        {"pretrain": pretrain, "expansion": expansion, "imagined": imagined, "split": split, "why": why, "gates": gates,
         "table": table}[args.stage](dry)


if __name__ == "__main__":
    main()
