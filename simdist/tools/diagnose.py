"""``simdist diagnose --model ID --data DIR``: does a world model use the future actions?
(:mod:`simdist.diagnostics.action_information`)

Scores held-out windows of a dataset folder with their true future actions and with another window's: the
latent-consistency error per horizon step with both, how far the predicted latents and returns move, and the
predicted return's correlation with the label return. Plan ranking on a task's profile is ``simdist mechanism``.
"""

from __future__ import annotations

from typing import Any

from simdist.arguments import positive_int, seed_int, tool_parser
from simdist.fsutil import check_output_path


def format_report(name: str, r: dict[str, Any]) -> str:
    """One row per model and the per-step errors."""
    steps = " ".join(f"{t:.3f}/{p:.3f}" for t, p in zip(r["consistency_true"], r["consistency_permuted"]))
    return (f"| {name} | {r['windows']} | {r['consistency_true_mean']:.4f} | {r['consistency_permuted_mean']:.4f} | "
            f"{r['consistency_ratio']:.3f} | {r['latent_shift']:.3f} | {r['return_shift']:.3f} | "
            f"{r['return_label_corr_true']:.3f} | {r['return_label_corr_permuted']:.3f} |\n\nper step (true/swapped): "
            f"{steps}")


HEADER = ("| model | windows | consistency, true actions | swapped actions | ratio | latent shift | return shift | "
          "return-label r, true | swapped |\n|---|---|---|---|---|---|---|---|---|")


def main(argv: list[str]) -> int:
    from pathlib import Path

    parser = tool_parser("diagnose", "action information: how much a world model's predictions depend on the actions")
    parser.add_argument("--model", required=True, help="a world model or agent: Hub id or folder")
    parser.add_argument("--data", required=True, help="a dataset folder with reward and value labels (simulation data)")
    parser.add_argument("--windows", type=positive_int, default=1536, help="windows drawn from the data")
    parser.add_argument("--seed", type=seed_int, default=0, help="base seed (0 to 2**31 - 1)")
    parser.add_argument("--out", default=None, help="write the report as JSON here")
    args = parser.parse_args(argv)
    if args.out:
        check_output_path(args.out, folder=False)
    if not (Path(args.data) / "dataset.json").is_file():
        parser.error(f"--data {args.data}: no dataset.json there (a dataset folder from simdist generate)")
    from simdist.agents import load_agent
    from simdist.data import DataError
    from simdist.diagnostics.action_information import action_information, dataset_windows

    try:
        agent = load_agent(args.model)
    except (ValueError, FileNotFoundError, KeyError) as err:
        parser.error(f"--model {args.model}: {err}")
    model = getattr(agent, "world_model", None)
    if model is None:
        parser.error(f"--model {args.model}: a {type(agent).__name__} has no world model to diagnose")
    try:
        batch = dataset_windows(args.data, model, windows=args.windows, seed=args.seed)
    except DataError as err:
        parser.error(f"--data {err}")
    report = action_information(model, batch, seed=args.seed).to_dict()
    print(HEADER)
    print(format_report(args.model, report))
    if args.out:
        from simdist.fsutil import atomic_write_json

        atomic_write_json(args.out, {"model": args.model, "data": args.data, "seed": args.seed, **report})
        print(f"written to {args.out}")
    return 0
