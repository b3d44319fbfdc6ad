"""``simdist value-rank``: train a world model's score heads on the planner's own candidates
(:mod:`simdist.training.candidate_ranking`, beyond the paper).

    simdist value-rank collect --task NAME --agent MODEL --profile sim --states 72 --every 25 --seed 1 \\
        --out candidates/seed1.safetensors
    simdist value-rank collect --task NAME --agent MODEL --profile sim --truth critic --shards 10 \\
        --states 400 --seed 100 --rank 0 --world 2 --out candidates/train
    simdist value-rank fit --agent MODEL --data candidates/seed1.safetensors,candidates/train \\
        --out MODEL-ranked
    simdist value-rank fit --agent MODEL --data candidates/train --objective listnet --train score_heads \\
        --out MODEL-listnet
    simdist value-rank fit --agent MODEL --data candidates/train --objective imagined --out MODEL-imagined
    simdist value-rank score --model base=MODEL --model ranked=MODEL-ranked --data candidates/heldout.safetensors

``collect`` drives MODEL's planner (its ``planner.json``, the MPPI options replacing keys) on the task's env and
stores cloned states, K of the candidates scored there (``--pool``: every iteration's or the last one's) and
their true returns (``--truth``: the task's expert continues each candidate, or its fitted critic ends it);
an existing ``--out`` is kept (rerun to resume a list of seeds). With ``--shards N``, ``--out`` is a folder of
N shards of ``--states`` states each (shard i seeded ``--seed`` + i, with a ``.json`` of its cost beside it),
of which this process (``--rank`` of ``--world``) collects every ``world``-th, an existing shard kept: start
``world`` processes to spread them, rerun to resume. ``fit`` trains ``--train`` (default the value head) on
every set given (files or shard folders; ``--max-states``: the first that many) with ``--objective`` and writes
the agent, ``planner.json`` unchanged, to ``--out`` (``imagined``: the value head on the model's own imagined
λ-returns from the sets' states and candidates, no true return used, :mod:`simdist.training.imagined_value`).
``score`` ranks held-out sets with each model's planning score: Spearman ρ per state, regret, and with the true
parts where the set has them, which part ranks (``--true-latents``: also the heads on the candidates' true latents).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from simdist.arguments import (
    add_planner_arguments,
    int_range,
    nonnegative_float,
    nonnegative_int,
    planner_keywords,
    positive_float,
    positive_int,
    seed_int,
    setup_logging,
    tool_parser,
    unit_interval,
)
from simdist.capabilities import StateCloning, require, require_class
from simdist.errors import InputError
from simdist.fsutil import atomic_write_json, check_output_path
from simdist.resources import MAX_ENVS, check_memory
from simdist.tasks import TaskError, add_task_argument, preparse_task, task_class


def collect_main(argv: list[str]) -> int:
    from simdist.agents import build_controller
    from simdist.diagnostics.mechanism import POOLS, MechanismConfig
    from simdist.training.candidate_ranking import TRUTHS, collect_candidate_set

    try:
        cls = require_class(task_class(preparse_task(argv)), StateCloning, "simdist value-rank collect")
    except TaskError as err:
        print(f"simdist value-rank collect: error: {err}", file=sys.stderr)
        return 2
    parser = tool_parser("value-rank collect", "states the planner visits, its candidates and their true returns")
    add_task_argument(parser)
    parser.add_argument("--agent", required=True, help="the planning agent (folder or Hub id) that drives")
    parser.add_argument("--profile", required=True, help=f"reality profile ({', '.join(cls.profiles())}, or a YAML)")
    add_planner_arguments(parser)
    parser.add_argument("--states", type=positive_int, default=72)
    parser.add_argument("--candidates", type=positive_int, default=16)
    parser.add_argument("--every", type=positive_int, default=25, help="control steps between cloned states")
    parser.add_argument("--skip", type=nonnegative_int, default=0,
                        help="control steps of each episode before the first state")
    parser.add_argument("--envs", type=int_range(1, MAX_ENVS), default=8, help=f"parallel envs (1 to {MAX_ENVS})")
    parser.add_argument("--seed", type=seed_int, default=0, help="base seed (0 to 2**31 - 1)")
    parser.add_argument("--pool", default="all", choices=POOLS,
                        help="draw the candidates from every iteration's samples and the policy's (all) or from the "
                             "last iteration's (last)")
    parser.add_argument("--truth", default="expert", choices=TRUTHS,
                        help="expert: the task's expert continues each candidate (its true_returns); critic: the "
                             "task's fitted expert critic ends it (far cheaper, where the task has one)")
    parser.add_argument("--parts", action="store_true",
                        help="with --truth expert, also keep the true return's parts (horizon, tail; critic keeps "
                             "them always)")
    parser.add_argument("--observations", action="store_true",
                        help="also keep the observations each candidate reaches open loop (its true latents, for "
                             "value-rank score --true-latents; a task that restores states)")
    parser.add_argument("--shards", type=positive_int, default=None,
                        help="--out is a folder of this many shards of --states states, shard i seeded --seed + i")
    parser.add_argument("--rank", type=nonnegative_int, default=0, help="with --shards: this process's index")
    parser.add_argument("--world", type=positive_int, default=1, help="with --shards: how many processes share them")
    parser.add_argument("--out", required=True,
                        help="the candidate set's file (.safetensors); with --shards a folder")
    parser.add_argument("--progress", action="store_true")
    cls.add_arguments(parser, "evaluate")
    args = parser.parse_args(argv)
    if args.rank >= args.world:
        parser.error(f"--rank {args.rank}: must be below --world {args.world}")
    if args.shards is None and (args.rank or args.world > 1):
        parser.error("--rank and --world spread --shards over processes: give --shards")
    if args.observations and not cls.restores_states():
        parser.error(f"--observations: {cls.__name__} cannot restore cloned states to run the candidates open loop")
    try:
        out = check_output_path(args.out, folder=args.shards is not None, kind="candidate shard folder",
                                markers=("shard-*",), shared=True)
    except InputError as err:
        parser.error(str(err))
    if args.shards is None:
        jobs = [(out, args.seed)]
    else:
        jobs = [(shard_path(out, i), args.seed + i) for i in range(args.rank, args.shards, args.world)]
    todo = [(path, seed) for path, seed in jobs if not path.is_file()]
    for path, _ in jobs:
        if path.is_file():
            print(f"{path} exists: kept")
    if not todo:
        return 0
    setup_logging()
    try:
        task = require(cls.from_args(args, "evaluate", profile=args.profile), StateCloning)
        check_memory("--envs", args.envs, task.env_memory, "parallel envs")
        cfgs = [MechanismConfig(states=args.states, candidates=args.candidates, every=args.every, skip=args.skip,
                                num_envs=args.envs, seed=seed, pool=args.pool) for _, seed in todo]
        agent = build_controller(args.agent, seed=todo[0][1], task=task, **planner_keywords(args))
    except (ValueError, FileNotFoundError, TaskError) as err:
        parser.error(str(err))
    for (path, seed), cfg in zip(todo, cfgs):
        start = time.process_time(), time.perf_counter()
        timings: dict[str, float] = {}
        try:
            data = collect_candidate_set(task, agent, cfg, progress=args.progress, truth=args.truth, parts=args.parts,
                                         observations=args.observations, timings=timings)
        except TaskError as err:
            parser.error(str(err))
        observed = timings.get("observations_cpu_seconds", 0.0)  # kept apart: cpu_seconds is the truth's cost
        cpu, wall = time.process_time() - start[0] - observed, time.perf_counter() - start[1]
        data.save(path)
        spread = data.returns.max(1).values - data.returns.min(1).values
        atomic_write_json(path.with_suffix(".json"), {
            "task": task.describe(), "agent": args.agent, "seed": seed, "states": len(data),
            "candidates": int(data.candidates.shape[1]), "pool": args.pool, "truth": args.truth,
            "parts": sorted(data.parts), "observations": sorted(data.observations),
            "observations_cpu_seconds": round(observed, 2), "cpu_seconds": round(cpu, 2),
            "wall_seconds": round(wall, 2),
            "cpu_seconds_per_state": round(cpu / len(data), 4), "true_return": float(data.returns.mean()),
            "spread_per_state": float(spread.mean())})
        print(f"{len(data)} states x {data.candidates.shape[1]} candidates ({args.truth} truth, {args.pool} pool), "
              f"true return {data.returns.mean():.2f}, spread per state {spread.mean():.2f}, "
              f"{cpu / len(data):.3f} CPU s a state: written to {path}")
    return 0


def shard_path(folder: Path, index: int) -> Path:
    """Shard ``index``'s file in a shard folder of ``value-rank collect --shards``."""
    return folder / f"shard-{index:04d}.safetensors"


def candidate_files(spec: str) -> tuple[list[Path], list[str]]:
    """The candidate set files of a comma-separated ``--data``: files as given, folders as their shards in order;
    and what is missing."""
    files: list[Path] = []
    missing: list[str] = []
    for item in (f for f in spec.split(",") if f):
        path = Path(item)
        if path.is_dir():
            shards = sorted(path.glob("shard-*.safetensors"))
            files += shards
            if not shards:
                missing.append(f"{path} (no shard-*.safetensors)")
        elif path.is_file():
            files.append(path)
        else:
            missing.append(item)
    return files, missing


def fit_main(argv: list[str]) -> int:
    from simdist.agents import load_agent
    from simdist.model.freeze import FreezePolicy
    from simdist.training.candidate_ranking import OBJECTIVES, CandidateSet, fit_candidate_ranking

    parser = tool_parser("value-rank fit", "train the value head on candidate sets' within-state ranking")
    parser.add_argument("--agent", required=True, help="the planning agent (folder or Hub id) to start from")
    parser.add_argument("--data", required=True,
                        help="comma-separated candidate set files or shard folders (value-rank collect)")
    parser.add_argument("--out", required=True, help="the trained agent's folder")
    parser.add_argument("--train", default="value",
                        help="the components that train (a freeze policy, e.g. score_heads; default value)")
    parser.add_argument("--objective", default="within", choices=(*OBJECTIVES, "imagined"),
                        help="within: the within-state error of the whole score; listnet: a listwise ranking loss "
                             "over each state's candidates plus the regression of the score's parts; imagined: the "
                             "value head on the model's own imagined λ-returns (--train value)")
    parser.add_argument("--lam", type=unit_interval, default=0.95, help="imagined: the λ of the λ-returns")
    parser.add_argument("--ema", type=unit_interval, default=0.01,
                        help="imagined: the rate at which the target value head follows the trained one")
    parser.add_argument("--anchor-weight", type=nonnegative_float, default=0.1,
                        help="imagined: weight of the anchor to the starting value head's outputs (its level)")
    parser.add_argument("--temperature", type=positive_float, default=1.0,
                        help="listnet: the softmax temperature, in within-state standard deviations of the truth")
    parser.add_argument("--parts-weight", type=nonnegative_float, default=1.0,
                        help="listnet: weight of the parts' regression beside the listwise loss")
    parser.add_argument("--max-states", type=positive_int, default=None,
                        help="train on the first this many states of --data (in the order given)")
    parser.add_argument("--steps", type=positive_int, default=2000)
    parser.add_argument("--batch-states", type=positive_int, default=32)
    parser.add_argument("--lr", type=positive_float, default=3e-4)
    parser.add_argument("--level-weight", type=nonnegative_float, default=0.1,
                        help="weight of the plain error beside the within-state one (keeps the value's level)")
    parser.add_argument("--gamma", type=unit_interval, default=0.99)
    parser.add_argument("--seed", type=seed_int, default=0, help="base seed (0 to 2**31 - 1)")
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    out = check_output_path(args.out, folder=True, markers=("config.json",))
    files, missing = candidate_files(args.data)
    if missing or not files:
        parser.error(f"--data: no candidate set at {', '.join(missing) or repr(args.data)}")
    try:
        policy = FreezePolicy.parse(args.train)
        data = CandidateSet.concat(CandidateSet.load(f) for f in files)
        if args.max_states is not None:
            if args.max_states > len(data):
                raise ValueError(f"--max-states {args.max_states}: --data holds only {len(data)} states")
            data = data.rows(range(args.max_states))
        agent = load_agent(args.agent)
    except (ValueError, FileNotFoundError) as err:
        parser.error(str(err))
    world_model = getattr(agent, "world_model", None)
    if world_model is None:
        parser.error(f"--agent {args.agent}: a {type(agent).__name__} has no world model whose value head could train")
    setup_logging()
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.objective == "imagined" and policy.trainable != frozenset({"value"}):
        parser.error(f"--train {args.train}: --objective imagined trains the value head alone (--train value)")
    if args.objective == "imagined" and not args.ema > 0:
        parser.error("--ema 0: the target value head would never follow the trained one; give a rate in (0, 1]")
    with tempfile.TemporaryDirectory(prefix=f".{out.name}-logs-", dir=out.parent) as logs:
        if args.objective == "imagined":
            from simdist.training.imagined_value import fit_imagined_value

            metrics = fit_imagined_value(world_model, data, steps=args.steps, batch_states=args.batch_states,
                                         lr=args.lr, level_weight=args.level_weight, gamma=args.gamma, lam=args.lam,
                                         ema=args.ema, anchor_weight=args.anchor_weight, trainable=policy,
                                         seed=args.seed, log_dir=logs, progress=args.progress)
        else:
            metrics = fit_candidate_ranking(world_model, data, steps=args.steps, batch_states=args.batch_states,
                                            lr=args.lr, level_weight=args.level_weight, gamma=args.gamma,
                                            trainable=policy, seed=args.seed, log_dir=logs, progress=args.progress,
                                            objective=args.objective, temperature=args.temperature,
                                            parts_weight=args.parts_weight)
        agent.save_pretrained(out)
        shutil.copyfile(Path(logs) / "metrics.csv", out / "training_metrics.csv")
    atomic_write_json(out / "value_rank.json", {
        "agent": args.agent, "data": [str(f) for f in files], "states": len(data), "train": policy.spec,
        "steps": args.steps, "batch_states": args.batch_states, "lr": args.lr, "level_weight": args.level_weight,
        "gamma": args.gamma, "seed": args.seed, "objective": args.objective, "temperature": args.temperature,
        "parts_weight": args.parts_weight, "max_states": args.max_states, "parts": sorted(data.parts),
        **({"lam": args.lam, "ema": args.ema, "anchor_weight": args.anchor_weight} if args.objective == "imagined"
           else {}),
        "final": metrics})
    print(f"{len(data)} states: final {metrics}; written to {out}")
    return 0


def score_main(argv: list[str]) -> int:
    from simdist.agents import load_agent
    from simdist.training.candidate_ranking import CandidateSet, score_candidates

    parser = tool_parser("value-rank score", "rank held-out candidate sets with each model's planning score")
    parser.add_argument("--model", action="append", required=True, metavar="NAME=ID",
                        help="a model to score with (repeat): a name and an agent folder or Hub id")
    parser.add_argument("--data", required=True, help="comma-separated candidate set files or shard folders")
    parser.add_argument("--compare", default=None,
                        help="another truth of the same states and candidates (a set or shard folder, e.g. "
                             "collected with --truth critic on the same seeds): how well it ranks as the data's")
    parser.add_argument("--gamma", type=unit_interval, default=0.99)
    parser.add_argument("--expansion", type=nonnegative_int, default=0,
                        help="score as the planner's value_expansion K does: the policy head acts K imagined steps "
                             "after each candidate's horizon and the value is read there (0: the paper's score)")
    parser.add_argument("--true-latents", action="store_true",
                        help="also score each model's heads on the latents the candidates really reached (their "
                             "observations encoded; --data collected with --observations --parts): dynamics or heads")
    parser.add_argument("--out", default=None, help="write the report as JSON here")
    args = parser.parse_args(argv)
    models: dict[str, str] = {}
    for spec in args.model:
        name, sep, target = spec.partition("=")
        if not sep or not name or not target or name in models:
            parser.error(f"--model {spec!r}: expected NAME=ID with a new NAME")
        models[name] = target
    sets: dict[str, Any] = {}
    for option, spec in (("--data", args.data), ("--compare", args.compare)):
        if spec is None:
            continue
        files, missing = candidate_files(spec)
        if missing or not files:
            parser.error(f"{option}: no candidate set at {', '.join(missing) or repr(spec)}")
        try:
            sets[option] = CandidateSet.concat(CandidateSet.load(f) for f in files)
        except (ValueError, FileNotFoundError) as err:
            parser.error(f"{option}: {err}")
    out = check_output_path(args.out, folder=False) if args.out else None
    setup_logging()
    try:
        agents = {name: load_agent(target) for name, target in models.items()}
        world_models = {n: getattr(a, "world_model", None) for n, a in agents.items()}
        lacking = [n for n, wm in world_models.items() if wm is None]
        if lacking:
            raise ValueError(f"--model {lacking[0]}: a {type(agents[lacking[0]]).__name__} has no world model to "
                             "score with")
        report = score_candidates(world_models, sets["--data"], gamma=args.gamma, compare=sets.get("--compare"),
                                  expansion=args.expansion, true_latents=args.true_latents)
    except (ValueError, FileNotFoundError) as err:
        parser.error(str(err))
    report = {"data": args.data, "models": models, "compare": args.compare, "expansion": args.expansion,
              "true_latents": args.true_latents} | report
    for name, row in report["scores"].items():
        rho = row["spearman"]
        print(f"{name}: Spearman {rho['mean']:.3f} [{rho['low']:.3f}, {rho['high']:.3f}] over {rho['n']} states")
    if "compare" in report["truth"]:
        rho = report["truth"]["compare"]["spearman"]
        print(f"--compare against --data truth: Spearman {rho['mean']:.3f} [{rho['low']:.3f}, {rho['high']:.3f}]")
    if out is not None:
        atomic_write_json(out, report)
    else:
        print(json.dumps({k: v for k, v in report.items() if k != "scores"}, indent=1)[:2000])
    return 0


_SUBCOMMANDS = {"collect": collect_main, "fit": fit_main, "score": score_main}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in _SUBCOMMANDS:
        print("usage: simdist value-rank {collect,fit,score} [options]  (-h after any for its options)",
              file=sys.stderr)
        return 2
    return _SUBCOMMANDS[argv[0]](argv[1:])
