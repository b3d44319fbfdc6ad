"""``simdist train-expert --log-dir runs/go2_ppo --iterations 3000 [--export experts/go2]``: Go2 PPO expert.

The Go2 task's expert trainer (:class:`~simdist.capabilities.ExpertTrainer`): :func:`add_arguments` adds its options
to ``simdist train-expert``'s parser and :func:`run` trains with the parsed options.

Trains (or resumes: rerunning with the same ``--log-dir`` continues from the newest ``model_<it>.pt``)
with rsl-rl's ``OnPolicyRunner`` (:func:`simdist.components.tasks.go2.ppo.train`); rsl-rl prints progress and ETA
every iteration. ``--export DIR`` then writes the expert set the data generator reads
(:func:`simdist.experts.export_expert_set`); with ``--iterations 0`` only the export runs.
"""

from __future__ import annotations

import argparse

from simdist.arguments import positive_int
from simdist.experts import add_export_arguments, export_request


def parse_proportions(text: str) -> dict[str, float]:
    """``"boxes=0.4,random_rough=0.6"`` → ``{"boxes": 0.4, "random_rough": 0.6}`` (known terrain types only)."""
    from simdist.components.tasks.go2.terrain import TERRAIN_TYPES

    out: dict[str, float] = {}
    for item in text.split(","):
        name, sep, weight = item.partition("=")
        name = name.strip()
        if not sep or name not in TERRAIN_TYPES:
            raise SystemExit(f"--proportions: expected TYPE=WEIGHT with TYPE in {', '.join(TERRAIN_TYPES)}, "
                             f"got {item!r}")
        try:
            out[name] = float(weight)
        except ValueError:
            raise SystemExit(f"--proportions: weight of {name!r} is not a number: {weight!r}") from None
        if out[name] < 0:
            raise SystemExit(f"--proportions: weight of {name!r} is negative")
    if sum(out.values()) <= 0:
        raise SystemExit("--proportions: weights sum to zero")
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The trainer's options: the rsl-rl run folder and budget, the terrain and commands, and the export."""
    parser.add_argument("--log-dir", required=True, help="rsl-rl run folder (model_<it>.pt, tensorboard)")
    parser.add_argument("--iterations", type=positive_int, default=3000, help="train until this many iterations exist")
    parser.add_argument("--envs", type=positive_int, default=512)
    parser.add_argument("--terrain", default="rough", choices=["flat", "rough"])
    parser.add_argument("--terrain-mode", default="curriculum", choices=["curriculum", "random"],
                        help="rough tiles: cos-similarity curriculum from level 0, or a random difficulty per "
                             "episode (the data engine's distribution; use it to finetune a trained expert)")
    parser.add_argument("--proportions", default=None, metavar="TYPE=W,...",
                        help="rough-terrain column mix instead of the official one, e.g. "
                             "boxes=0.4,random_rough=0.15,pyramid_stairs=0.15,inverted_pyramid_stairs=0.15,"
                             "pyramid_slope=0.075,inverted_pyramid_slope=0.075")
    parser.add_argument("--profile", default=None,
                        help="train on a reality profile's course (name or YAML) instead of --terrain, e.g. to "
                             "show a proxy-real course is possible; start from an expert by copying its "
                             "model_<it>.pt into --log-dir")
    parser.add_argument("--command-mode", default="random", choices=["random", "straight"],
                        help="command generator (straight: walk ahead at --straight-speed)")
    parser.add_argument("--straight-speed", default="0.5",
                        help="straight-mode speed (m/s), or LOW,HIGH drawn per episode, e.g. 0.1,0.5")
    add_export_arguments(parser, save_interval=50, suboptimal_default="the paper's 11")


def run(args: argparse.Namespace) -> int:
    """Train (or resume) until ``--iterations`` exist in ``--log-dir``, then export the expert set (``--export``)."""
    if args.iterations > 0:
        from simdist.components.tasks.go2.ppo import ppo_config, train

        speeds = tuple(float(v) for v in args.straight_speed.split(","))
        env_kwargs = {"terrain": args.terrain, "terrain_mode": args.terrain_mode,
                      "command_mode": args.command_mode,
                      "straight_speed": speeds[0] if len(speeds) == 1 else speeds}
        if args.proportions:
            env_kwargs["terrain_kwargs"] = {"proportions": parse_proportions(args.proportions)}
        if args.profile:
            env_kwargs["profile"] = args.profile
        train(args.log_dir, args.iterations, args.envs, args.seed, env_kwargs=env_kwargs,
              cfg=ppo_config(save_interval=args.save_interval))
    if args.export:
        from simdist.experts import PAPER_ITERATIONS, export_expert_set

        its, expert = export_request(args)
        m = export_expert_set(args.log_dir, args.export, iterations=its or PAPER_ITERATIONS, expert=expert)
        subs = ", ".join(f"{s['iteration']}" for s in m["suboptimal"])
        print(f"exported expert {m['expert']['iteration']} (+critic) and sub-optimal [{subs}] → {args.export}"
              + (f"; skipped (not reached yet): {m['skipped']}" if m["skipped"] else ""))
    return 0
