"""``python -m results.response [--only NAME,...] [--dry-run]``: the dynamics' level and response on the planner's
candidates (``simdist mechanism --response``) for every zoo model and its adapted model on its proxy-real profile
(docs/plan-ranking.md 7, docs/ur5e-simdist.md 7.11). Each measurement is skipped once its JSON exists; then every
measured row goes to ``results/response.md``. The toy map's cells run through ``python -m results.toy.map
response``. The adapted UR5e models are the ``adaptplan`` runs' (``outputs/``): ``python -m results.ur5e.run
adaptplan [--task ur5e-table-leg]`` makes them."""

from __future__ import annotations

import argparse
import json

from results.runner import ROOT, estimate_cell, run_command, simdist_command, write_text

GO2 = ("--planner-preset", "realtime", "--states", "24", "--candidates", "16", "--every", "10", "--skip", "30",
       "--envs", "8")
UR5E = ("--grid", "wide", "--states", "24", "--candidates", "16", "--every", "10", "--skip", "5", "--envs", "8")
PEG_ADAPTED = "outputs/ur5e-peg/adapt-zoo-peg-real/stages/stage-1"
LEG_ADAPTED = "outputs/ur5e-table-leg/adapt-zoo-table-leg-real/stages/stage-1"

#: name → (output JSON, the mechanism's arguments)
MEASUREMENTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "go2-ptfe": ("results/go2/mechanism/ptfe-slope-5.7deg-response.json",
                 ("--task", "go2", "--real", "ptfe-slope-5.7deg", "--model", "zero-shot=simdist/go2-slope",
                  "--model", "adapted=simdist/go2-slope-ptfe", *GO2)),
    "go2-foam": ("results/go2/mechanism/foam-response.json",
                 ("--task", "go2", "--real", "foam", "--model", "zero-shot=simdist/go2-foam",
                  "--model", "adapted=simdist/go2-foam-adapted", *GO2)),
    "go2-official": ("results/go2/mechanism/ptfe-slope-5.7deg-official-response.json",
                     ("--task", "go2", "--real", "ptfe-slope-5.7deg", "--model", "official=simdist/go2-official",
                      "--model", "ours=simdist/go2-slope", *GO2)),
    "go2-official-std2": ("results/go2/mechanism/ptfe-slope-5.7deg-official-std2-response.json",
                          ("--task", "go2", "--real", "ptfe-slope-5.7deg", "--model", "official=simdist/go2-official",
                           "--model", "ours=simdist/go2-slope", *GO2, "--init-std", "2.0")),
    "peg-sim": ("results/ur5e/mechanism/ur5e-peg/sim-wide-response.json",
                ("--task", "ur5e-peg", "--real", "sim", "--model", "zero-shot=hub/models/ur5e-peg",
                 "--model", f"adapted={PEG_ADAPTED}", *UR5E)),
    "peg-real": ("results/ur5e/mechanism/ur5e-peg/peg-real-wide-response.json",
                 ("--task", "ur5e-peg", "--real", "peg-real", "--model", "zero-shot=hub/models/ur5e-peg",
                  "--model", f"adapted={PEG_ADAPTED}", *UR5E)),
    "leg-real": ("results/ur5e/mechanism/ur5e-table-leg/table-leg-real-wide-response.json",
                 ("--task", "ur5e-table-leg", "--real", "table-leg-real", "--model",
                  "zero-shot=hub/models/ur5e-table-leg", "--model", f"adapted={LEG_ADAPTED}", *UR5E)),
}


KEYS = ("latent_error", "offset_error", "response_unexplained", "response_gain", "response_cosine", "true_response")


def table() -> str:
    """Every measured model's row: ρ, then the response report's figures (mean [95 % CI])."""
    lines = ["| measurement | model | Spearman ρ | latent error | its level part | response unexplained | "
             "response gain | response cosine | true response |", "|---|---|---|---|---|---|---|---|---|"]
    for name, (out, _) in MEASUREMENTS.items():
        if not (ROOT / out).is_file():
            continue
        for model, r in json.loads((ROOT / out).read_text())["models"].items():
            cells = " | ".join(estimate_cell(r["response"][k]) for k in KEYS)
            lines.append(f"| `{name}` | {model} | {estimate_cell(r['spearman'])} | {cells} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=None, help=f"comma-separated names of {sorted(MEASUREMENTS)}")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    names = list(MEASUREMENTS) if args.only is None else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(names) - set(MEASUREMENTS))
    if unknown:
        parser.error(f"--only: unknown {unknown}; known: {sorted(MEASUREMENTS)}")
    for name in names:
        out, measured = MEASUREMENTS[name]
        if (ROOT / out).is_file():
            print(f"skip {name}: {out} exists")
            continue
        run_command(simdist_command("mechanism", *measured, "--response", "--out", out),
                    ROOT / "outputs" / "response" / f"{name}.log", args.dry_run)
    if not args.dry_run:
        write_text(ROOT / "results" / "response.md", table())


if __name__ == "__main__":
    main()
