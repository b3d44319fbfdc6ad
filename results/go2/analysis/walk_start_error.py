"""The world model's policy-head error along the expert's own walks, by time since walking started.

The privileged expert walks the evaluation protocol (25 standing steps of zero action, then the
straight-walk command at 0.5 m/s); at every walking step the world model's policy head sees the same
history and its first action is compared with the expert's (mean squared error, action units).
Usage: python -m results.go2.analysis.walk_start_error MODEL TERRAIN [--randomize] [--out JSON]
"""

from __future__ import annotations

import json

from results.go2.analysis.protocol_walk import compare_walk, parser

BINS = ((0, 10), (10, 25), (25, 50), (50, 100), (100, 200), (200, 500))


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--randomize", action="store_true")
    args = ap.parse_args()
    b = args.trials
    e = compare_walk(args.model, args.terrain, trials=b, walk_steps=BINS[-1][1], driver="expert",
                     randomize=args.randomize, expert_path=args.expert).errors
    rows = [{"steps_after_walk_start": [lo, hi], "action_mse": float(e[lo:hi].mean()),
             "worst_trial": float(e[lo:hi].mean(0).max())} for lo, hi in BINS]
    for r in rows:
        lo, hi = r["steps_after_walk_start"]
        print(f"steps {lo:>3}-{hi:<3} after the walk starts: action MSE {r['action_mse']:.4f} "
              f"(worst trial {r['worst_trial']:.4f})")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"model": args.model, "terrain": args.terrain, "randomize": args.randomize,
                       "trials": b, "bins": rows}, f, indent=1)


if __name__ == "__main__":
    main()
