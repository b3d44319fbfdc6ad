"""``simdist mechanism --task NAME --real P --model zero-shot=ID --model adapted=ID``: does adaptation change
how the model ranks the planner's candidates on the real env? (:mod:`simdist.diagnostics.mechanism`)

The first ``--model`` (or ``--reference``) drives the planner on profile ``--real``; every model scores the
same cloned states and candidates. Prints Spearman's ρ between predicted and true returns and the regret of
each model's top choice (means with 95 % intervals over states); ``--out`` writes the JSON.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from simdist.arguments import (
    add_planner_arguments,
    int_range,
    nonnegative_int,
    planner_keywords,
    positive_int,
    seed_int,
    setup_logging,
    tool_parser,
)
from simdist.capabilities import StateCloning, require, require_class
from simdist.fsutil import check_output_path
from simdist.resources import MAX_ENVS, check_memory
from simdist.tasks import TaskError, add_task_argument, preparse_task, task_class


def _models(specs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, target = spec.partition("=")
        if not sep or not name or not target:
            raise ValueError(f"--model {spec!r}: expected NAME=ID (e.g. zero-shot=simdist/<task>)")
        if name in out:
            raise ValueError(f"--model: the name {name!r} is given twice")
        out[name] = target
    return out


def format_report(report: dict[str, Any]) -> str:
    """The per-model rows: Spearman ρ, regret, relative regret, top-1 agreement (mean [95 % CI])."""
    def cell(e: dict[str, Any]) -> str:
        return f"{e['mean']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"

    lines = ["| model | Spearman ρ | regret | regret / range | top-1 | within-state error | predicted spread | "
             "states × candidates |", "|---|---|---|---|---|---|---|---|"]
    for name, r in report["models"].items():
        lines.append(f"| {name} | {cell(r['spearman'])} | {cell(r['regret'])} | {cell(r['relative_regret'])} | "
                     f"{cell(r['top1'])} | {cell(r['within_state_error_rms'])} | {cell(r['predicted_spread'])} | "
                     f"{r['states']} × {r['candidates']} |")
    lines.append(f"\ntrue returns: mean {cell(report['true_return'])}, spread per state {cell(report['true_spread'])}")
    if "true_split" in report:
        t = report["true_split"]
        lines.append(f"share of the true within-state spread after the horizon {cell(t['tail_share'])}; "
                     f"candidates falling within it {cell(t['fall_rate'])}")
        lines += ["", "| model | ρ whole | ρ horizon rewards vs true horizon | ρ value term vs true tail | "
                  "reward error | value error |", "|---|---|---|---|---|---|"]
        for name, r in report["models"].items():
            p = r["split"]
            lines.append(f"| {name} | {cell(p['rho'])} | {cell(p['rho_reward'])} | {cell(p['rho_value'])} | "
                         f"{cell(p['reward_error'])} | {cell(p['value_error'])} |")
    if any("true_latents" in r for r in report["models"].values()):
        lines += ["", "| model | ρ value head on the true end state vs true tail | ρ value term imagined vs true "
                  "tail | ρ reward head on true latents vs true horizon | ρ heads on true latents vs true total | "
                  "ρ value imagined vs on true end state | value spread on true / imagined / true tail spread |",
                  "|---|---|---|---|---|---|---|"]
        for name, r in report["models"].items():
            q = r.get("true_latents")
            if q is None:
                continue
            lines.append(f"| {name} | {cell(q['rho_value_on_true'])} | {cell(r['split']['rho_value'])} | "
                         f"{cell(q['rho_reward_on_true'])} | {cell(q['rho_on_true'])} | "
                         f"{cell(q['rho_value_pred_vs_true'])} | {q['value_spread_on_true']['mean']:.3g} / "
                         f"{q['value_spread_predicted']['mean']:.3g} / {q['tail_spread']['mean']:.3g} |")
    if any("by_episode" in r for r in report["models"].values()):
        lines += ["", "intervals over episodes (two-level bootstrap: episodes, then their states):"]
        for name, r in report["models"].items():
            for key, e in r.get("by_episode", {}).items():
                lines.append(f"- {name} {key}: {cell(e)} ({e['episodes']} episodes, {e['n']} states)")
    if any("response" in r for r in report["models"].values()):
        lines += ["", "| model | latent error | its offset part | its response part | response unexplained | "
                  "response gain | response cosine | true response |", "|---|---|---|---|---|---|---|---|"]
        for name, r in report["models"].items():
            q = r["response"]
            lines.append(f"| {name} | " + " | ".join(cell(q[k]) for k in (
                "latent_error", "offset_error", "response_error", "response_unexplained", "response_gain",
                "response_cosine", "true_response")) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    from simdist.agents import build_controller
    from simdist.diagnostics.mechanism import POOLS, MechanismConfig, run_mechanism

    try:
        cls = require_class(task_class(preparse_task(argv)), StateCloning, "simdist mechanism")
    except TaskError as err:
        print(f"simdist mechanism: error: {err}", file=sys.stderr)
        return 2
    parser = tool_parser("mechanism", "rank agreement of models on the planner's candidates, on a real profile")
    add_task_argument(parser)
    parser.add_argument("--real", required=True, help=f"reality profile ({', '.join(cls.profiles())}, or a YAML)")
    parser.add_argument("--model", action="append", required=True, metavar="NAME=ID",
                        help="a model to score the candidates (repeat); the first drives unless --reference")
    parser.add_argument("--reference", default=None, help="the NAME whose planner visits the states")
    add_planner_arguments(parser)
    parser.add_argument("--states", type=positive_int, default=40)
    parser.add_argument("--candidates", type=positive_int, default=32)
    parser.add_argument("--every", type=positive_int, default=5, help="control steps between cloned states")
    parser.add_argument("--skip", type=nonnegative_int, default=0,
                        help="control steps of each episode before the first cloned state (>= 0)")
    parser.add_argument("--envs", type=int_range(1, MAX_ENVS), default=8, help=f"parallel envs (1 to {MAX_ENVS})")
    parser.add_argument("--seed", type=seed_int, default=0, help="base seed (0 to 2**31 - 1)")
    parser.add_argument("--out", default=None, help="write the report as JSON here")
    parser.add_argument("--split", action="store_true",
                        help="also split the true returns (horizon rewards per term, falls, the continuation after "
                             "the horizon) and each model's score (horizon rewards, value term)")
    parser.add_argument("--response", action="store_true",
                        help="also measure how well each model's dynamics predicts how the candidates' latent "
                             "trajectories differ, from their open-loop runs (simdist.diagnostics.response)")
    parser.add_argument("--true-value", action="store_true",
                        help="with --split: also score each candidate's true latents (its open-loop observations, "
                             "encoded) with the model's frozen heads, separating where the dynamics puts the end "
                             "state from how the heads rank real futures")
    parser.add_argument("--pool", default="all", choices=POOLS,
                        help="draw the candidates from every iteration's sequences (all) or the last iteration's "
                             "alone (last: the ones the final plan is fitted to)")
    parser.add_argument("--progress", action="store_true")
    cls.add_arguments(parser, "evaluate")
    args = parser.parse_args(argv)
    if args.out:
        check_output_path(args.out, folder=False)  # before any work
    setup_logging()
    try:
        specs = _models(args.model)
        reference = args.reference or next(iter(specs))
        if reference not in specs:
            raise ValueError(f"--reference {reference!r} is not one of the --model names {sorted(specs)}")
        if args.split and not cls.splits_returns():
            raise ValueError(f"--split: task {args.task!r} cannot split its true returns into their parts")
        if args.true_value and not args.split:
            raise ValueError("--true-value compares the heads on true latents with the true parts: add --split")
        if (args.response or args.true_value) and not cls.restores_states():
            flag = "--response" if args.response else "--true-value"
            raise ValueError(f"{flag}: task {args.task!r} cannot run open-loop candidates from cloned states")
        task = require(cls.from_args(args, "evaluate", profile=args.real), StateCloning)
        check_memory("--envs", args.envs, task.env_memory, "parallel envs")
        cfg = MechanismConfig(states=args.states, candidates=args.candidates, every=args.every, skip=args.skip,
                              num_envs=args.envs, seed=args.seed, pool=args.pool)
        agents = {name: build_controller(spec, seed=args.seed, task=task, **planner_keywords(args))
                  for name, spec in specs.items()}
    except (ValueError, FileNotFoundError, TaskError) as err:
        parser.error(str(err))
    report = run_mechanism(task, agents[reference], agents, cfg, progress=args.progress, split=args.split,
                           response=args.response, true_value=args.true_value)
    report["models_loaded"] = specs
    report["reference"] = reference
    print(format_report(report))
    if args.out:
        from pathlib import Path

        from simdist.fsutil import atomic_write_json

        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(args.out, json.loads(json.dumps(report, default=float)))
        print(f"written to {args.out}")
    return 0
