"""Comparing a regenerated result file with the committed one: identical bytes; for JSON, the largest absolute
difference of its numbers and the keys that differ, clock, host and provenance fields ignored (:data:`VOLATILE`);
for other text, the lines that differ."""

from __future__ import annotations

import difflib
import json
import math
from pathlib import Path
from typing import Any

#: JSON keys that record when, where, how fast or from which commit a result was made, not what it measured: a
#: regeneration cannot reproduce them, so they are left out of the comparison (keys ending in ``_per_s`` too:
#: rates measured by a clock)
VOLATILE = frozenset({"seconds", "wall_s", "cpu_s", "cpu_ms", "elapsed_s", "compile_s", "date", "timestamp",
                      "machine", "machine_cpus", "host", "hostname", "platform", "cpu", "cpu_capability",
                      "source_commit"})
#: so are keys starting with these (the machine's load average: ``load_1min``, ``load_avg_after``, ``loadavg_before``)
VOLATILE_PREFIX = ("load_", "loadavg")
VOLATILE_SUFFIX = "_per_s"
#: at most this many differing keys or lines are kept a file
KEEP = 8


def volatile(key: str) -> bool:
    """Whether a JSON key is a clock, host or provenance field (:data:`VOLATILE`)."""
    return key in VOLATILE or key.endswith(VOLATILE_SUFFIX) or key.startswith(VOLATILE_PREFIX)


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def json_diff(old: Any, new: Any, path: str = "") -> tuple[float, list[str], set[str]]:
    """(largest absolute difference of numbers, the key paths that differ, the volatile keys skipped) between two
    parsed JSON values; a key present on one side only, a list of another length, or a string, bool or null that
    changed is a differing key (``a.b[3]``; ``$`` the whole value)."""
    if isinstance(old, dict) and isinstance(new, dict):
        worst, keys, skipped = 0.0, [], set()
        for k in sorted(set(old) | set(new), key=str):
            where = f"{path}.{k}" if path else str(k)
            if volatile(str(k)):
                skipped.add(str(k))
            elif k not in old or k not in new:
                keys.append(where + (" (new)" if k not in old else " (gone)"))
            else:
                w, ks, s = json_diff(old[k], new[k], where)
                worst, keys, skipped = max(worst, w), keys + ks, skipped | s
        return worst, keys, skipped
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return 0.0, [f"{path or '$'} (length {len(old)} -> {len(new)})"], set()
        worst, keys, skipped = 0.0, [], set()
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            w, ks, s = json_diff(a, b, f"{path}[{i}]")
            worst, keys, skipped = max(worst, w), keys + ks, skipped | s
        return worst, keys, skipped
    if _number(old) and _number(new):
        if old == new or (math.isnan(old) and math.isnan(new)):
            return 0.0, [], set()
        gap = abs(float(new) - float(old))
        return (gap if math.isfinite(gap) else math.inf), [path or "$"], set()
    return 0.0, ([] if type(old) is type(new) and old == new else [path or "$"]), set()


def _lines(old: str, new: str) -> list[str]:
    """The lines that differ, as a diff without context: ``-`` committed, ``+`` regenerated."""
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
    return [d for d in diff if d[:1] in "-+" and not d.startswith(("---", "+++"))]


def compare(old: Path, new: Path) -> dict[str, Any] | None:
    """None when ``new`` reproduces ``old`` (identical bytes, or JSON whose values are equal once the volatile
    keys are left out); else what differs: ``{"kind": "json", "max_abs", "keys", "n"}``, ``{"kind": "text",
    "lines", "n"}`` or ``{"kind": "bytes", "sizes"}``. JSON equal up to volatile keys gives ``{"kind": "same",
    "ignored"}``, which counts as reproduced."""
    a, b = old.read_bytes(), new.read_bytes()
    if a == b:
        return None
    if old.suffix == ".json":
        try:
            worst, keys, skipped = json_diff(json.loads(a), json.loads(b))
        except ValueError:
            return {"kind": "bytes", "sizes": [len(a), len(b)], "note": "not JSON"}
        if not keys:
            return {"kind": "same", "ignored": sorted(skipped)}
        return {"kind": "json", "max_abs": worst, "keys": keys[:KEEP], "n": len(keys)}
    try:
        lines = _lines(a.decode("utf-8"), b.decode("utf-8"))
    except UnicodeDecodeError:
        return {"kind": "bytes", "sizes": [len(a), len(b)]}
    return {"kind": "text", "lines": [line[:200] for line in lines[:KEEP]], "n": len(lines)}
