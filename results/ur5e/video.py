"""One UR5e lattice episode of an agent as a GIF (docs/ur5e.md, 8. Videos), rendered afterwards from its stored
states by the UR5e plug-in's :func:`~simdist.components.tasks.ur5e.video.write_rollout_video`:

    python -m results.ur5e.video --task ur5e-peg --agent expert --profile sim --grid wide --cell 0 \\
        --cameras front,wrist --out results/ur5e/peg-expert-sim-front-wrist.gif
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from simdist.components.tasks.ur5e.video import write_rollout_video


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m results.ur5e.video",
                                     description="write one UR5e lattice episode of an agent as a GIF")
    parser.add_argument("--task", default="ur5e-peg")
    parser.add_argument("--agent", default="expert", help="expert, scripted:NAME, or a Hub id/folder")
    parser.add_argument("--grid", choices=("narrow", "wide"), default="wide")
    parser.add_argument("--cell", type=int, default=0, help="lattice cell (0-19)")
    parser.add_argument("--profile", default=None, help="reality profile (default: the task's; 'sim': none)")
    parser.add_argument("--cameras", default="front", help="comma-separated, side by side (e.g. front,wrist)")
    parser.add_argument("--size", type=int, default=160, help="pixels per camera view (square)")
    parser.add_argument("--every", type=int, default=1, help="draw every n-th control step")
    parser.add_argument("--fps", type=float, default=None, help="default: real time (control rate / every)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-label", action="store_true")
    parser.add_argument("--out", default=None, help="GIF path (default: results/ur5e/<task>-<agent>.gif)")
    args = parser.parse_args(argv)
    try:
        res = write_rollout_video(args.task, args.agent, args.out, grid=args.grid, cell=args.cell,
                                  profile=args.profile, cameras=tuple(c for c in args.cameras.split(",") if c),
                                  size=args.size, every=args.every, fps=args.fps, seed=args.seed,
                                  label=not args.no_label)
    except (ValueError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"{res['path']}: {res['frames']} frames ({res['steps']} steps, cell {res['cell']}, "
          f"{'success' if res['success'] else 'no success'}), {res['bytes'] / 1e6:.2f} MB, "
          f"{res['seconds']:.1f} s (simulation {res['sim_s']:.1f} s, rendering {res['render_s']:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
