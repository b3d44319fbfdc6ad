"""The toy demo with the levers of docs/plan-ranking.md as flags:
``python -m results.toy.levers [LEVER FLAGS] [simdist demo options]``.

The levers are settings of the toy demo (``ToyOptions``), which ``simdist demo --task toy-reach`` takes as
``--option KEY=VALUE``; this runner gives each its flag (``--ensemble 4`` is ``--option ensemble=4``,
``--dynamics-hidden 256,256`` is ``--option dynamics_hidden=[256,256]``, ``--ranking`` is ``--option ranking=true``)
and passes every other argument to ``simdist demo --task toy-reach`` as it is (``--real``, ``--pretrained``,
``--real-episodes``, ``--finetune-epochs``, ``--seed``, ``--out``, ``--no-progress``, ...). ``--dry`` prints the
command only. The same flags and seed write the same ``results.json`` as the toy demo did when they were its own
options.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

from results.runner import ROOT, simdist_command


def _widths(text: str) -> list[int]:
    """``256,256`` → [256, 256] for ``--dynamics-hidden``."""
    try:
        return [int(w) for w in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integer widths, got {text!r}") from None


#: flag → (the demo's setting, type, help); the defaults are the demo's (docs/plan-ranking.md measures each)
LEVERS: dict[str, tuple[str, Any, str]] = {
    "--dynamics-context": ("dynamics_context", int,
                           "past actions the mlp dynamics reads each step (default 4; 0: z_{k+1} = f(z_k, a_k))"),
    "--dynamics-hidden": ("dynamics_hidden", _widths,
                          "hidden widths of the mlp dynamics, e.g. 256,256 (default: the preset's 128,128)"),
    "--history": ("history", int, "the model's history length (default: the preset's 8; at least the context)"),
    "--perturb-sigma": ("perturb_sigma", float,
                        "largest noise std of the pretraining data's perturbation windows (default 1.0)"),
    "--perturb-steps": ("perturb_steps", int, "longest noised window of the pretraining data, in steps (default 5)"),
    "--perturbed-repeat": ("perturbed_repeat", int,
                           "oversample pretraining windows that hold a perturbed action this many times"),
    "--history-dropout": ("history_dropout", float,
                          "probability of zeroing a pretraining window's past actions (default 0)"),
    "--consistency-decay": ("consistency_decay", float, "weight consistency step k by RHO^k (default 1.0: uniform)"),
    "--sim-mix": ("sim_mix", float, "share of simulation transitions mixed into the finetuning data (default 0)"),
    "--explore": ("explore", float, "largest exploration noise std on the planner's actions while logging real data"),
    "--anchor": ("anchor", float, "L2 pull of the finetuned weights towards the pretrained ones (0: none)"),
    "--decision": ("decision", float, "weight of the decision-aware consistency term in finetuning (0: none)"),
    "--ensemble": ("ensemble", int, "dynamics members: K >= 2 trains an ensemble of K dynamics (default 1)"),
    "--disagreement": ("disagreement", float,
                       "MPPI's penalty on the ensemble members' disagreement (needs --ensemble >= 2; default 0)"),
    "--ranking-states": ("ranking_states", int, "cloned states per plan ranking (default 40)"),
}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m results.toy.levers", description=__doc__, allow_abbrev=False,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    for flag, (key, kind, text) in LEVERS.items():
        p.add_argument(flag, dest=key, type=kind, default=None, help=text)
    p.add_argument("--ranking", action="store_true",
                   help="also measure plan ranking (Spearman rho) and action information, before and after")
    p.add_argument("--dry", action="store_true", help="print the simdist command only")
    return p


def command(argv: list[str]) -> tuple[list[str], bool]:
    """The ``simdist demo`` command of ``argv`` and whether it is a dry run."""
    args, rest = parser().parse_known_args(argv)
    options = []
    for key, _, _ in LEVERS.values():
        value = getattr(args, key)
        if value is not None:
            options += ["--option", f"{key}={json.dumps(value, separators=(',', ':'))}"]
    if args.ranking:
        options += ["--option", "ranking=true"]
    return simdist_command("demo", "--task", "toy-reach", *rest, *options), args.dry


def main(argv: list[str] | None = None) -> int:
    cmd, dry = command(sys.argv[1:] if argv is None else argv)
    print("+", " ".join(cmd), flush=True)
    return 0 if dry else subprocess.call(cmd, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
