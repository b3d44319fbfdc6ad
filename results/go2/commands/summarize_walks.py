"""Table of `simdist evaluate --json` results in a folder: mean progress and falls per run name, seeds pooled.

Files are named NAME_seedS.json; runs with the same NAME are pooled over their seeds.
Usage: python results/go2/commands/summarize_walks.py RESULTS_DIR [--out table.md]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path


def pooled(folder: Path) -> dict[str, dict[str, list]]:
    """{name: {"progress": [...], "fell": [...], "seeds": [...]}} over every NAME_seedS.json in ``folder``."""
    runs: dict[str, dict[str, list]] = defaultdict(lambda: {"progress": [], "fell": [], "seeds": []})
    for path in sorted(folder.glob("*.json")):
        match = re.fullmatch(r"(.+)_seed(\d+)", path.stem)
        if not match:
            continue
        result = json.loads(path.read_text())
        run = runs[match.group(1)]
        run["seeds"].append(int(match.group(2)))
        for speed in result["speeds"]:
            run["progress"] += speed["progress"]
            run["fell"] += speed["terminated"]
    return dict(runs)


def table(runs: dict[str, dict[str, list]]) -> str:
    lines = ["| run | seeds | trials | mean progress (m) | falls |", "|---|---|---|---|---|"]
    for name, run in sorted(runs.items()):
        n = len(run["progress"])
        lines.append(f"| {name} | {','.join(map(str, sorted(run['seeds'])))} | {n} | "
                     f"{sum(run['progress']) / n:.2f} | {sum(run['fell'])} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--out", default=None, help="also write the table here (Markdown)")
    args = parser.parse_args()
    text = table(pooled(Path(args.folder)))
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
