"""``simdist train-expert --log-dir runs/go2_ppo --iterations 3000 [--export experts/go2]``: Go2 PPO expert.

Trains (or resumes: rerunning with the same ``--log-dir`` continues from the newest ``model_<it>.pt``)
with rsl-rl's ``OnPolicyRunner`` (:func:`simdist.envs.go2.ppo.train`); rsl-rl prints progress and ETA
every iteration. ``--export DIR`` then writes the expert set the data generator reads
(:func:`simdist.experts.export_expert_set`); with ``--iterations 0`` only the export runs.
"""

from __future__ import annotations

from simdist.cli import tool_parser


def main(argv: list[str]) -> int:
    parser = tool_parser("train-expert", "train (or resume) the Go2 PPO expert and export the expert set")
    parser.add_argument("--log-dir", required=True, help="rsl-rl run folder (model_<it>.pt, tensorboard)")
    parser.add_argument("--iterations", type=int, default=3000, help="train until this many iterations exist")
    parser.add_argument("--envs", type=int, default=512)
    parser.add_argument("--terrain", default="rough", choices=["flat", "rough"])
    parser.add_argument("--profile", default=None,
                        help="train on a reality profile's course (name or YAML) instead of --terrain, e.g. to "
                             "show a proxy-real course is possible; start from an expert by copying its "
                             "model_<it>.pt into --log-dir")
    parser.add_argument("--command-mode", default="random", choices=["random", "straight"],
                        help="command generator (straight: walk ahead at --straight-speed)")
    parser.add_argument("--straight-speed", default="0.5",
                        help="straight-mode speed (m/s), or LOW,HIGH drawn per episode, e.g. 0.1,0.5")
    parser.add_argument("--save-interval", type=int, default=50)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--export", default=None, metavar="DIR", help="export the expert set here afterwards")
    parser.add_argument("--suboptimal", default=None,
                        help="comma-separated iterations of the sub-optimal set (default: the paper's 11)")
    parser.add_argument("--expert", default="latest", help="expert iteration (default: the newest)")
    args = parser.parse_args(argv)

    if args.iterations > 0:
        from simdist.envs.go2.ppo import ppo_config, train

        speeds = tuple(float(v) for v in args.straight_speed.split(","))
        env_kwargs = {"terrain": args.terrain, "command_mode": args.command_mode,
                      "straight_speed": speeds[0] if len(speeds) == 1 else speeds}
        if args.profile:
            env_kwargs["profile"] = args.profile
        train(args.log_dir, args.iterations, args.envs, args.seed, env_kwargs=env_kwargs,
              cfg=ppo_config(save_interval=args.save_interval))
    if args.export:
        from simdist.experts import PAPER_ITERATIONS, export_expert_set

        its = tuple(int(s) for s in args.suboptimal.split(",")) if args.suboptimal else PAPER_ITERATIONS
        expert = args.expert if args.expert == "latest" else int(args.expert)
        m = export_expert_set(args.log_dir, args.export, iterations=its, expert=expert)
        subs = ", ".join(f"{s['iteration']}" for s in m["suboptimal"])
        print(f"exported expert {m['expert']['iteration']} (+critic) and sub-optimal [{subs}] → {args.export}"
              + (f"; skipped (not reached yet): {m['skipped']}" if m["skipped"] else ""))
    return 0
