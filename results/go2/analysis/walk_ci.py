"""Mean forward progress with a 95 % bootstrap interval and the trial count, over `simdist evaluate --json` files.

Each ROW is ``LABEL=GLOB[,GLOB...]`` (paths relative to the current folder); the trials of every file a row
matches are pooled (all speeds). ``GLOB#KEY.KEY`` reads a protocol result nested in a file, e.g.
``results/go2/demo/results.json#protocol.zero_shot``. The interval is ``simdist.bootstrap_ci``'s percentile
bootstrap over trials (10,000 resamples, seed 0), as every simdist table gives it.
Usage: python -m results.go2.analysis.walk_ci "LABEL=results/go2/x/mppi_flat_seed*.json" ... [--out table.md]
"""

from __future__ import annotations

import argparse
import glob
import json
from pathlib import Path

from simdist import bootstrap_ci


def pooled(patterns: list[str]) -> tuple[list[float], list[bool], float, list[tuple[str, str]]]:
    files = sorted({(f, key) for path, _, key in (p.partition("#") for p in patterns) for f in glob.glob(path)})
    if not files:
        raise SystemExit(f"walk_ci: no file matches {patterns}")
    progress, fell, lengths = [], [], set()
    for f, key in files:
        data = json.loads(Path(f).read_text())
        for part in filter(None, key.split(".")):
            data = data[part]
        lengths.add(data["course_length"])
        for speed in data["speeds"]:
            progress += speed["progress"]
            fell += speed["terminated"]
    if len(lengths) != 1:
        raise SystemExit(f"walk_ci: {patterns} mixes course lengths {sorted(lengths)}")
    return progress, fell, lengths.pop(), files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="+", metavar="LABEL=GLOB[,GLOB...]")
    parser.add_argument("--out", default=None, help="also write the table here (Markdown)")
    args = parser.parse_args()
    lines = ["| run | forward progress (m), mean [95 % CI] | course (m) | trials | falls |", "|---|---|---|---|---|"]
    for row in args.rows:
        label, _, patterns = row.partition("=")
        progress, fell, length, _ = pooled(patterns.split(","))
        est = bootstrap_ci(progress)
        lines.append(f"| {label} | {est.mean:.2f} [{est.low:.2f}, {est.high:.2f}] | {length:g} | {len(progress)} | "
                     f"{sum(fell)} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
