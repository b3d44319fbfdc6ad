"""Mean forward progress with a 95 % bootstrap interval and the trial count, over `simdist evaluate --json` files.

Each ROW is ``LABEL=GLOB[,GLOB...]`` (paths relative to the current folder); the trials of every file a row
matches are pooled (all speeds). ``GLOB#KEY.KEY`` reads a protocol result nested in a file, e.g.
``results/go2/demo/results.json#protocol.zero_shot``. The interval is the percentile bootstrap over trials
(10,000 resamples, seed 0), the method `simdist.evaluation` uses, so the same trials give the same interval.
Usage: python results/go2/analysis/walk_ci.py "LABEL=results/go2/x/mppi_flat_seed*.json" ... [--out table.md]
"""

from __future__ import annotations

import argparse
import glob
import json
from pathlib import Path

import numpy as np

RESAMPLES, CONFIDENCE = 10_000, 0.95


def bootstrap(values: list[float], seed: int = 0) -> tuple[float, float, float]:
    """(mean, low, high): the mean and its percentile-bootstrap interval."""
    x = np.asarray(values, np.float64)
    if x.size == 1 or np.ptp(x) == 0.0:
        return float(x.mean()), float(x.min()), float(x.max())
    means = x[np.random.default_rng(seed).integers(0, x.size, size=(RESAMPLES, x.size))].mean(axis=1)
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(x.mean()), float(low), float(high)


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
        mean, low, high = bootstrap(progress)
        lines.append(f"| {label} | {mean:.2f} [{low:.2f}, {high:.2f}] | {length:g} | {len(progress)} | {sum(fell)} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
