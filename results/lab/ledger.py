"""The ledger of regeneration checks, ``results/lab/verified.json``: one entry per experiment step (the newest
check), written atomically, and its markdown table (``python -m results verify --table``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from results.runner import ROOT, write_json

PATH = ROOT / "results" / "lab" / "verified.json"
#: a check that ran; an entry of another verdict never replaces one of these
RAN = ("identical", "differs", "failed")


def load(path: Path = PATH) -> list[dict[str, Any]]:
    """The ledger's entries (none when there is no ledger yet)."""
    return json.loads(path.read_text(encoding="utf-8"))["entries"] if path.is_file() else []


def record(entry: dict[str, Any], order: list[tuple[str, str]], path: Path = PATH) -> bool:
    """Put ``entry`` into the ledger in place of the one for the same step, in the lab's step order ``order``;
    a skip (``needs``, ``skipped``) does not replace a check that ran. Whether it was written."""
    entries = {(e["experiment"], e["step"]): e for e in load(path)}
    key = (entry["experiment"], entry["step"])
    if entry["verdict"] not in RAN and entries.get(key, {}).get("verdict") in RAN:
        return False
    entries[key] = entry
    rank = {k: i for i, k in enumerate(order)}
    kept = sorted(entries.values(), key=lambda e: rank.get((e["experiment"], e["step"]), len(rank)))
    write_json(path, {"about": "python -m results verify: each step rerun in a scratch checkout of `commit`, its "
                               "outputs compared with the committed ones (results/lab/verify.py)", "entries": kept})
    return True


def _difference(d: dict[str, Any]) -> str:
    """One difference, short: the file and what changed."""
    name = d["file"].rsplit("/", 1)[-1]
    if d["kind"] == "json":
        keys = ", ".join(f"`{k}`" for k in d["keys"][:3]) + (", ..." if d["n"] > 3 else "")
        return f"`{name}`: {d['n']} keys, max abs {d['max_abs']:.3g} ({keys})"
    if d["kind"] == "text":
        return f"`{name}`: {d['n']} lines"
    if d["kind"] == "missing":
        return f"`{name}` not regenerated"
    return f"`{name}`: bytes ({d['sizes'][0]} -> {d['sizes'][1]})"


def summary(e: dict[str, Any]) -> str:
    """What an entry found, in one cell."""
    if e["verdict"] == "differs":
        diffs = e["differences"]
        return "; ".join(_difference(d) for d in diffs[:3]) + (f"; {len(diffs) - 3} more files" if len(diffs) > 3
                                                               else "")
    return str(e.get("note", "")).replace("|", "\\|").replace("\n", " ")


def table(entries: list[dict[str, Any]], everything: bool = False) -> str:
    """The ledger as a markdown table: the checks that ran (``everything``: the steps not run too, and why)."""
    rows = ["| experiment | step | verdict | files | CPU s | commit | what differs, or why not run |",
            "|---|---|---|---|---|---|---|"]
    for e in entries if everything else [e for e in entries if e["verdict"] in RAN]:
        cpu = f"{e['cpu_s']:.0f}" if e.get("cpu_s") is not None and e["verdict"] in RAN else ""
        files = str(e.get("files", "")) if e["verdict"] in RAN else ""
        rows.append(f"| `{e['experiment']}` | `{e['step']}` | {e['verdict']} | {files} | {cpu} | "
                    f"`{e['commit'][:7]}` | {summary(e)} |")
    return "\n".join(rows) + "\n"
