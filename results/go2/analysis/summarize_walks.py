"""Table of `simdist evaluate --json` results in a folder: mean progress and falls per run name, seeds pooled.

Files are named NAME_seedS.json; runs with the same NAME are pooled over their seeds.
Usage: python -m results.go2.analysis.summarize_walks RESULTS_DIR [--out table.md]
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

from results.go2.analysis.protocol_files import pooled_trials


def runs_by_name(folder: Path) -> dict[str, dict[int, Path]]:
    """{name: {seed: path}} over every NAME_seedS.json in ``folder``."""
    runs: dict[str, dict[int, Path]] = defaultdict(dict)
    for path in sorted(folder.glob("*.json")):
        match = re.fullmatch(r"(.+)_seed(\d+)", path.stem)
        if match:
            runs[match.group(1)][int(match.group(2))] = path
    return dict(runs)


def table(runs: dict[str, dict[int, Path]]) -> str:
    lines = ["| run | seeds | trials | mean progress (m) | falls |", "|---|---|---|---|---|"]
    for name, seeds in sorted(runs.items()):
        trials = pooled_trials(seeds.values())
        n = len(trials["progress"])
        lines.append(f"| {name} | {','.join(map(str, sorted(seeds)))} | {n} | "
                     f"{sum(trials['progress']) / n:.2f} | {sum(trials['terminated'])} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--out", default=None, help="also write the table here (Markdown)")
    args = parser.parse_args()
    text = table(runs_by_name(Path(args.folder)))
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
