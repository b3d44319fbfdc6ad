"""``simdist adapt --model ID --real toy-real|PROFILE --schedule 0,8,16,27,36 --out DIR``: the adaptation curve.

Runs :class:`simdist.adaptation.AdaptationLoop`: per stage of cumulative real-data minutes, collect
on-policy MPPI episodes, finetune under ``--freeze`` and evaluate on the real env; writes ``state.json``
(resumable: rerun the same command), ``curve.json``, ``curve.png``, the logged data and the stage models.
"""

from __future__ import annotations

import warnings

from simdist.cli import add_collect_speed_argument, add_mppi_arguments, tool_parser


def main(argv: list[str]) -> int:
    parser = tool_parser("adapt", "finetune on growing amounts of real data; metric vs minutes curve")
    parser.add_argument("--model", required=True, help="pretrained world model: Hub id or folder")
    parser.add_argument("--real", required=True, help="toy-real, or a Go2 reality profile name or YAML path")
    parser.add_argument("--schedule", default="0,8,16,27,36", help="cumulative minutes of real data per stage")
    parser.add_argument("--out", required=True)
    parser.add_argument("--freeze", default="dynamics_only",
                        help="trainable components: dynamics_only, all, or a set such as dynamics,encoder")
    parser.add_argument("--init", default="base", choices=["base", "previous"],
                        help="finetune every stage from the base model (on all data) or the previous stage")
    parser.add_argument("--episodes-per-eval", type=int, default=8, help="toy episodes / Go2 trials per speed")
    parser.add_argument("--heldout-episodes", type=int, default=4)
    parser.add_argument("--envs", type=int, default=8, help="parallel envs for collection and evaluation")
    add_mppi_arguments(parser, samples=128, iterations=4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--windows-per-epoch", type=int, default=6_000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--warmup-steps", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=None, help="Go2: cap on protocol trial steps")
    add_collect_speed_argument(parser)
    parser.add_argument("--data-from", default=None, metavar="RUN_DIR",
                        help="start from another adapt run's logged real data (ablations on the same data)")
    parser.add_argument("--progress", action="store_true", help="Lightning progress bars")
    args = parser.parse_args(argv)

    from simdist.adaptation import AdaptationLoop, AdaptConfig, make_task

    warnings.filterwarnings("ignore", ".*(eval mode|does not have many workers|__len__).*")
    schedule = [float(m) for m in args.schedule.split(",") if m.strip()]
    config = AdaptConfig(
        schedule=schedule, freeze=args.freeze, init=args.init, episodes_per_eval=args.episodes_per_eval,
        num_envs=args.envs, heldout_episodes=args.heldout_episodes, samples=args.samples,
        iterations=args.iterations, init_std=args.init_std, warm_start=args.warm_start,
        temporal_ensemble=args.temporal_ensemble, epochs=args.epochs, windows_per_epoch=args.windows_per_epoch,
        batch_size=args.batch_size, lr=args.lr, warmup_steps=args.warmup_steps, seed=args.seed,
    )
    if args.real in ("toy", "toy-real"):
        task = make_task(args.real)
    else:
        task = make_task(args.real, max_steps=args.max_steps, collect_speed=args.collect_speed)
    curve = AdaptationLoop(args.model, task, args.out, config, progress=args.progress, data_from=args.data_from).run()
    print(f"{curve['metric']} by minutes: " + ", ".join(f"{m:.1f}: {v:.3f}" for m, v in
                                                        zip(curve["minutes"], curve["value"])))
    print(f"curve written to {args.out}/curve.json and curve.png")
    return 0
