"""``simdist evaluate --task go2 --controller expert:PATH|model:ID --profile P|--terrain T``: walk protocol.

Runs :func:`simdist.envs.go2.protocol.run_protocol`: per speed, ``--trials`` straight-walk episodes as
one batch; prints forward progress (m, capped at the course length), success, fall rate and forward
speed per speed, or JSON with ``--json``. Controllers: ``expert:PATH`` (an exported expert file or
expert-set folder; reads the privileged observation) or ``model:HUB_ID_OR_FOLDER`` (a world model with
``--planner mppi|policy``).
"""

from __future__ import annotations

import json
from typing import Any

from simdist.cli import add_mppi_arguments, tool_parser


def build_controller(spec: str, planner: str = "mppi", samples: int | None = None,
                     iterations: int | None = None, device: str = "cpu", seed: int = 0,
                     init_std: float | None = None, warm_start: str | None = None,
                     temporal_ensemble: float | None = None) -> Any:
    """A controller from ``expert:PATH`` or ``model:HUB_ID_OR_FOLDER`` (a planner, temporally ensembled
    with decay ``temporal_ensemble`` if given; see :mod:`simdist.planning.ensemble`)."""
    kind, _, target = spec.partition(":")
    if not target or kind not in ("expert", "model"):
        raise ValueError(f"--controller must be expert:PATH or model:HUB_ID_OR_FOLDER, got {spec!r}")
    if kind == "expert":
        from simdist.experts import load_policy

        return load_policy(target)
    from simdist.planning.ensemble import build_planner
    from simdist.world_model import WorldModel

    wm = WorldModel.from_pretrained(target, map_location=device)
    settings: dict[str, Any] = {"planner": planner, "temporal_ensemble": temporal_ensemble}
    if planner.startswith("mppi"):
        from simdist.planning.presets import PAPER, scaled_settings

        settings |= scaled_settings(samples or PAPER["num_samples"], iterations or PAPER["iterations"],
                                    init_std=init_std, warm_start=warm_start, seed=seed)
    return build_planner(wm, settings)


def main(argv: list[str]) -> int:
    parser = tool_parser("evaluate", "Go2 straight-walk forward-progress protocol (speeds x trials)")
    parser.add_argument("--task", default="go2", choices=["go2"])
    parser.add_argument("--controller", required=True, help="expert:PATH or model:HUB_ID_OR_FOLDER")
    parser.add_argument("--planner", default="mppi", help="planner for model controllers (mppi, policy, ...)")
    add_mppi_arguments(parser, samples=None, iterations=None)
    course = parser.add_mutually_exclusive_group(required=True)
    course.add_argument("--profile", help="reality profile: built-in name or YAML path")
    course.add_argument("--terrain", choices=["flat", "slope", "rough", "boxes"])
    parser.add_argument("--course-length", type=float, default=None, help="progress cap (m)")
    parser.add_argument("--difficulty", type=float, default=0.4,
                        help="rough/boxes difficulty in [0, 1] (data collection draws it uniformly)")
    parser.add_argument("--speeds", default=None,
                        help="comma-separated speeds (m/s); default: the profile's eval_speeds, else 0.1,0.3,0.5")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--randomize", action="store_true", help="domain randomisation per trial")
    parser.add_argument("--time-factor", type=float, default=2.0, help="time limit = factor x length / speed")
    parser.add_argument("--max-steps", type=int, default=None, help="cap on control steps per trial")
    parser.add_argument("--reset-steps", type=int, default=None,
                        help="steps of zero action and command before walking (default: the official reset "
                             "phase, 25)")
    parser.add_argument("--walk-start-history", default="keep", choices=["keep", "pad"],
                        help="world models: keep the history of the reset phase when walking starts (official), "
                             "or refill it with copies of the current observation (a trained episode start)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from simdist.envs.go2.protocol import RESET_STEPS, make_course, run_protocol

    controller = build_controller(args.controller, args.planner, args.samples, args.iterations, args.device,
                                  args.seed, args.init_std, args.warm_start, args.temporal_ensemble)
    course = make_course(profile=args.profile, terrain=args.terrain, course_length=args.course_length,
                         difficulty=args.difficulty, seed=args.seed)
    speeds = [float(s) for s in args.speeds.split(",") if s.strip()] if args.speeds else list(course.speeds)
    result = run_protocol(controller, course, speeds=speeds, trials=args.trials, seed=args.seed,
                          randomize=args.randomize, time_factor=args.time_factor, max_steps=args.max_steps,
                          reset_steps=RESET_STEPS if args.reset_steps is None else args.reset_steps,
                          walk_start_history=args.walk_start_history,
                          log=None if args.json else print)
    result.settings.update(controller=args.controller,
                           planner=args.planner if args.controller.startswith("model:") else None,
                           temporal_ensemble=args.temporal_ensemble)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        print(result.table())
    return 0
