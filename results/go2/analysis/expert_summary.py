"""Summary of the expert's 20 s bars (`python -m results.go2.run expert`): episodes without termination per run.

Reads every ``TERRAIN[_seedS][_dD].json`` in the folder (``simdist evaluate --json`` results, one speed) and
writes ``summary.json``: per file the episodes without termination, the trials and the mean forward speed;
per terrain with difficulties (boxes, rough) the rate without termination averaged over the difficulty bins
below 1.0 (their midpoints 0.1 ... 0.9 estimate the data engine's uniform difficulty), per seed and over all
seeds pooled.
Usage: python -m results.go2.analysis.expert_summary RESULTS_DIR
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

NAME = re.compile(r"(?P<terrain>flat|slope|boxes|rough)(?:_seed(?P<seed>\d+))?(?:_d(?P<d>[\d.]+))?")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    folder = Path(parser.parse_args().folder)
    rows, bins = [], defaultdict(lambda: defaultdict(list))  # bins[terrain][seed or "pooled"] -> rates
    pooled = defaultdict(lambda: defaultdict(lambda: [0, 0]))  # pooled[terrain][difficulty] -> [ok, trials]
    for path in sorted(folder.glob("*.json")):
        match = NAME.fullmatch(path.stem)
        if not match:
            continue
        speed = json.loads(path.read_text())["speeds"][0]
        ok, trials = sum(not t for t in speed["terminated"]), len(speed["terminated"])
        rows.append({"run": path.stem, "no_termination": ok, "trials": trials,
                     "speed": sum(speed["forward_speed"]) / len(speed["forward_speed"])})
        d, terrain, seed = match["d"], match["terrain"], int(match["seed"] or 0)
        if d is not None and float(d) < 1.0:
            bins[terrain][f"seed {seed}"].append(ok / trials)
            pooled[terrain][d][0] += ok
            pooled[terrain][d][1] += trials
    for terrain, per_seed in bins.items():
        for seed, rates in sorted(per_seed.items()):
            rows.append({"run": f"{terrain}_uniform_difficulty", "seeds": seed, "bins": len(rates),
                         "no_termination_rate": sum(rates) / len(rates)})
        counts = pooled[terrain]
        rows.append({"run": f"{terrain}_uniform_difficulty", "seeds": "pooled", "bins": len(counts),
                     "no_termination_rate": sum(ok / n for ok, n in counts.values()) / len(counts),
                     "per_bin": {d: f"{ok}/{n}" for d, (ok, n) in sorted(counts.items())}})
    (folder / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
