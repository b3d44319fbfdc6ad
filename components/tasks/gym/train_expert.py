"""``simdist train-expert --task gym:ID --log-dir DIR --iterations N [--profile P] [--export DIR]``: a PPO expert
for a Gymnasium env, resumable (rerunning with the same ``--log-dir`` continues from the newest ``model_<it>.pt``);
``--export DIR`` writes the expert set (the expert with its critic and the sub-optimal checkpoint ladder) that
``simdist generate --task gym:ID --experts DIR`` mixes; with ``--iterations 0`` only the export runs.

The gym tasks' expert trainer (:class:`~simdist.capabilities.ExpertTrainer`): :func:`add_arguments` adds its options
to ``simdist train-expert``'s parser and :func:`run` trains with the parsed options."""

from __future__ import annotations

import argparse

from simdist.arguments import nonnegative_int, positive_int
from simdist.experts import add_export_arguments, export_request


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The trainer's options: the rsl-rl run folder and budget, the profile to train on, and the export."""
    parser.add_argument("--log-dir", required=True, help="rsl-rl run folder (model_<it>.pt, tensorboard)")
    parser.add_argument("--iterations", type=nonnegative_int, default=300,
                        help="train until this many iterations exist (0: export only)")
    parser.add_argument("--envs", type=positive_int, default=16)
    parser.add_argument("--steps-per-env", type=positive_int, default=64, help="rollout length per iteration")
    parser.add_argument("--profile", default=None, help="train on a reality profile (name or YAML), e.g. lag")
    add_export_arguments(parser, save_interval=25, suboptimal_default="10 evenly spaced")


def run(task: str, args: argparse.Namespace) -> int:
    """Train (or resume) ``task``'s (``gym:ID``) expert until ``--iterations`` exist, then export it (``--export``)."""
    from simdist.tasks import make_task

    t = make_task(task, profile=args.profile)  # a bad profile is refused here, before any work
    if args.iterations > 0:
        from simdist.components.tasks.gym.ppo import ppo_config, train

        train(t.env_id, args.log_dir, args.iterations, args.envs, args.seed, profile=t.profile,  # type: ignore[attr-defined]
              cfg=ppo_config(num_steps_per_env=args.steps_per_env, save_interval=args.save_interval))
    if args.export:
        from simdist.experts import available_checkpoints, export_expert_set

        its, expert = export_request(args)
        if its is None:
            last = max(available_checkpoints(args.log_dir) or {0: None})
            its = tuple(sorted({int(last * k / 10) for k in range(10)}))
        m = export_expert_set(args.log_dir, args.export, iterations=its, expert=expert, obs_key="state")
        subs = ", ".join(f"{s['iteration']}" for s in m["suboptimal"])
        print(f"exported expert {m['expert']['iteration']} (+critic) and sub-optimal [{subs}] -> {args.export}")
    return 0
