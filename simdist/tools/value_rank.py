"""``simdist value-rank``: train a world model's value head on the planner's own candidates
(:mod:`simdist.training.candidate_ranking`, beyond the paper).

    simdist value-rank collect --task NAME --agent MODEL --profile sim --states 72 --every 25 --seed 1 \\
        --out candidates/seed1.safetensors
    simdist value-rank fit --agent MODEL --data candidates/seed1.safetensors,candidates/seed2.safetensors \\
        --out MODEL-ranked

``collect`` drives MODEL's planner (its ``planner.json``, the MPPI options replacing keys) on the task's env and
stores cloned states, K of the candidates scored there and their true returns; an existing ``--out`` is kept
(rerun to resume a list of seeds). ``fit`` trains ``--train`` (default the value head) on every set given and
writes the agent, ``planner.json`` unchanged, to ``--out``. Measure it on held-out states with ``simdist mechanism``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

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
from simdist.fsutil import atomic_write_json, check_output_path
from simdist.resources import MAX_ENVS, check_memory
from simdist.tasks import TaskError, add_task_argument, preparse_task, task_class


def collect_main(argv: list[str]) -> int:
    from simdist.agents import build_controller
    from simdist.diagnostics.mechanism import MechanismConfig
    from simdist.training.candidate_ranking import collect_candidate_set

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
    parser.add_argument("--out", required=True, help="the candidate set's file (.safetensors)")
    parser.add_argument("--progress", action="store_true")
    cls.add_arguments(parser, "evaluate")
    args = parser.parse_args(argv)
    out = check_output_path(args.out, folder=False)
    if out.is_file():
        print(f"{out} exists: kept")
        return 0
    setup_logging()
    try:
        task = require(cls.from_args(args, "evaluate", profile=args.profile), StateCloning)
        check_memory("--envs", args.envs, task.env_memory, "parallel envs")
        cfg = MechanismConfig(states=args.states, candidates=args.candidates, every=args.every, skip=args.skip,
                              num_envs=args.envs, seed=args.seed)
        agent = build_controller(args.agent, seed=args.seed, task=task, **planner_keywords(args))
    except (ValueError, FileNotFoundError, TaskError) as err:
        parser.error(str(err))
    data = collect_candidate_set(task, agent, cfg, progress=args.progress)
    data.save(out)
    spread = data.returns.max(1).values - data.returns.min(1).values
    print(f"{len(data)} states x {data.candidates.shape[1]} candidates, true return {data.returns.mean():.2f}, "
          f"spread per state {spread.mean():.2f}: written to {out}")
    return 0


def fit_main(argv: list[str]) -> int:
    from simdist.agents import load_agent
    from simdist.model.freeze import FreezePolicy
    from simdist.training.candidate_ranking import CandidateSet, fit_candidate_ranking

    parser = tool_parser("value-rank fit", "train the value head on candidate sets' within-state ranking")
    parser.add_argument("--agent", required=True, help="the planning agent (folder or Hub id) to start from")
    parser.add_argument("--data", required=True, help="comma-separated candidate set files (value-rank collect)")
    parser.add_argument("--out", required=True, help="the trained agent's folder")
    parser.add_argument("--train", default="value", help="the components that train (a freeze policy; default value)")
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
    files = [Path(f) for f in args.data.split(",") if f]
    missing = [str(f) for f in files if not f.is_file()]
    if missing or not files:
        parser.error(f"--data: no candidate set at {', '.join(missing) or repr(args.data)}")
    try:
        policy = FreezePolicy.parse(args.train)
        data = CandidateSet.concat(CandidateSet.load(f) for f in files)
        agent = load_agent(args.agent)
    except (ValueError, FileNotFoundError) as err:
        parser.error(str(err))
    world_model = getattr(agent, "world_model", None)
    if world_model is None:
        parser.error(f"--agent {args.agent}: a {type(agent).__name__} has no world model whose value head could train")
    setup_logging()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out.name}-logs-", dir=out.parent) as logs:
        metrics = fit_candidate_ranking(world_model, data, steps=args.steps, batch_states=args.batch_states,
                                        lr=args.lr, level_weight=args.level_weight, gamma=args.gamma,
                                        trainable=policy, seed=args.seed, log_dir=logs, progress=args.progress)
        agent.save_pretrained(out)
        shutil.copyfile(Path(logs) / "metrics.csv", out / "training_metrics.csv")
    atomic_write_json(out / "value_rank.json", {
        "agent": args.agent, "data": [str(f) for f in files], "states": len(data), "train": policy.spec,
        "steps": args.steps, "batch_states": args.batch_states, "lr": args.lr, "level_weight": args.level_weight,
        "gamma": args.gamma, "seed": args.seed, "final": metrics})
    print(f"{len(data)} states: final {metrics}; written to {out}")
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("collect", "fit"):
        print("usage: simdist value-rank {collect,fit} [options]  (-h after either for its options)", file=sys.stderr)
        return 2
    return collect_main(argv[1:]) if argv[0] == "collect" else fit_main(argv[1:])
