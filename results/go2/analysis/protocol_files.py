"""The Go2 protocol's records in saved result files, for the table scripts beside this one.

``simdist evaluate --task go2 --json`` writes the evaluation result, whose ``details.protocol`` is the protocol's
record (course, course length, one entry per commanded speed with each trial's ``progress``, ``terminated`` ...);
files written before results were task-generic hold that record alone. Both read the same here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def protocol_record(path: str | Path) -> dict[str, Any]:
    """The protocol record of a saved Go2 evaluation (either form)."""
    data = json.loads(Path(path).read_text())
    if isinstance(data, dict) and "protocol" in data.get("details", {}):
        return data["details"]["protocol"]
    return data


def every_trial(record: dict[str, Any], key: str) -> list[Any]:
    """``key`` (``progress``, ``terminated`` ...) of every trial of a record, speed after speed."""
    return [x for speed in record["speeds"] for x in speed[key]]


def pooled_trials(paths: Iterable[str | Path]) -> dict[str, list]:
    """Every trial of several saved results, pooled: ``{"progress": [...], "terminated": [...]}``."""
    records = [protocol_record(path) for path in paths]
    return {key: [x for r in records for x in every_trial(r, key)] for key in ("progress", "terminated")}
