"""The world model's policy-head error along its *own* walks (the covariate shift behind its falls).

The policy head walks the evaluation protocol (25 standing steps, then the straight-walk command at
0.5 m/s, 10 m course, randomised trials); at every walking step the privileged expert is asked what it
would do in the same state, and the mean squared difference of the two actions is recorded (action units).
Compare with walk_start_error.py, the error along the expert's walks. Per trial: where and why it fell and
the error in the 10 steps before, 10-50 and 50-150 steps before, and earlier.
Usage: python -m results.go2.analysis.on_policy_error MODEL TERRAIN [--trials N] [--out JSON]
"""

from __future__ import annotations

import json

import numpy as np

from results.go2.analysis.protocol_walk import compare_walk, parser

WALK_STEPS = 1000  # 20 s: twice the 10 m course at 0.5 m/s, the protocol's time limit


def _mean(e: np.ndarray, lo: int, hi: int) -> float | None:
    seg = e[max(0, lo):max(0, hi)]
    return float(seg.mean()) if len(seg) else None


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    walk = compare_walk(args.model, args.terrain, trials=args.trials, walk_steps=WALK_STEPS, driver="head",
                        randomize=True, expert_path=args.expert)
    b, fell_at, reasons = args.trials, walk.fell_at, walk.reasons
    errors = np.where(walk.active, walk.errors.astype(np.float64), np.nan)
    trials = []
    for i in range(b):
        e = errors[:, i][~np.isnan(errors[:, i])]
        k = int(fell_at[i]) if fell_at[i] >= 0 else len(e)
        trials.append({"fell_at_step": int(fell_at[i]) if fell_at[i] >= 0 else None, "reason": reasons[i] or None,
                       "mse_last_10": _mean(e, k - 10, k), "mse_10_50_before": _mean(e, k - 50, k - 10),
                       "mse_50_150_before": _mean(e, k - 150, k - 50), "mse_earlier": _mean(e, 0, k - 150),
                       "mse_whole": float(e.mean()) if len(e) else None})
        t_ = trials[-1]
        where = f"fell at walk step {k} ({t_['reason']})" if t_["fell_at_step"] is not None else "walked on"
        print(f"trial {i}: {where}; action MSE whole {t_['mse_whole']:.3f}, last 10 steps "
              f"{t_['mse_last_10'] or float('nan'):.3f}, earlier than 150 {t_['mse_earlier'] or float('nan'):.3f}")
    steady = [t_["mse_earlier"] for t_ in trials if t_["mse_earlier"] is not None]
    summary = {"model": args.model, "terrain": args.terrain, "trials": trials,
               "falls": int((fell_at >= 0).sum()),
               "mean_mse_earlier_than_150_steps_before_the_end": float(np.mean(steady)) if steady else None}
    print(f"falls {summary['falls']}/{b}; mean action MSE (more than 150 steps before the end): "
          f"{summary['mean_mse_earlier_than_150_steps_before_the_end']}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
