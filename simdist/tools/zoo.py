"""``simdist zoo list|show|publish``: list, show and publish the model zoo (``hub/models.yaml``)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simdist.arguments import tool_parser
from simdist.errors import InputError

if TYPE_CHECKING:
    from simdist.zoo import ZooEntry

#: Heading of the metrics section in the model card template.
METRICS_HEADING = "## Evaluation"


def main(argv: list[str]) -> int:
    parser = tool_parser("zoo", __doc__.split(":", 1)[1].strip())
    sub = parser.add_subparsers(dest="action", required=True)
    listing = sub.add_parser("list", help="the index: status, bundled copy, size and parameters")
    listing.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    show = sub.add_parser("show", help="one entry and the metrics of its bundled model card")
    show.add_argument("name", help="zoo name or Hub repo id")
    publish = sub.add_parser("publish", help="upload a bundled model to the Hub (dry run unless --push)")
    publish.add_argument("name", help="zoo name or Hub repo id")
    publish.add_argument("--push", action="store_true", help="really upload (needs a Hub token)")
    publish.add_argument("--repo-id", default=None, help="target repo (default: the entry's repo_id)")
    publish.add_argument("--private", action="store_true", help="create the repo as private")
    args = parser.parse_args(argv)

    from simdist import zoo

    if args.action == "list":
        return _list(zoo.load_index(), as_json=args.json)
    entry = zoo.find(args.name)
    if entry is None:
        names = ", ".join(e.name for e in zoo.load_index()) or "none: the zoo is empty"
        parser.error(f"{args.name!r} is not in the zoo (models: {names})")
    if args.action == "show":
        return _show(entry)
    return _publish(parser, entry, repo_id=args.repo_id or entry.repo_id, push=args.push, private=args.private)


def describe(entry: ZooEntry) -> dict[str, Any]:
    """The entry's index fields plus ``type`` (the agent type), ``bundled``, ``size_mb`` and ``parameters`` (the
    last two None when the model is not bundled)."""
    from simdist.agents import LEGACY_AGENT_TYPE, read_agent_type
    from simdist.hub.files import CONFIG_NAME

    folder = entry.bundled()
    size_mb = parameters = None
    agent_type = entry.agent_type or LEGACY_AGENT_TYPE
    if folder is not None:
        size_mb = round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20, 2)
        agent_type = read_agent_type(folder / CONFIG_NAME)
        parameters = _count_parameters(folder, agent_type)
    return {**entry.to_dict(), "type": agent_type, "bundled": folder is not None, "size_mb": size_mb,
            "parameters": parameters}


def _count_parameters(folder: Path, agent_type: str) -> int:
    """Trainable parameters of a SimDist world model; for other agents every tensor of the weights file."""
    from safetensors import safe_open

    from simdist.agents import LEGACY_AGENT_TYPE
    from simdist.hub.files import CONFIG_NAME, WEIGHTS_NAME
    from simdist.model.config import WorldModelConfig
    from simdist.model.world_model import WorldModel

    if agent_type == LEGACY_AGENT_TYPE:
        return WorldModel(WorldModelConfig.from_file(folder / CONFIG_NAME)).count_parameters()["total"]
    with safe_open(str(folder / WEIGHTS_NAME), framework="pt") as f:
        return sum(int(math.prod(f.get_slice(k).get_shape())) for k in f.keys())


def _list(entries: list[ZooEntry], *, as_json: bool) -> int:
    rows = [describe(e) for e in entries]
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    header = ("name", "type", "repo id", "status", "bundled", "MB", "parameters", "base model", "task")
    table = [header] + [(
        r["name"], r["type"], r["repo_id"], r["status"], "yes" if r["bundled"] else "no",
        "-" if r["size_mb"] is None else f"{r['size_mb']:.2f}",
        "-" if r["parameters"] is None else f"{r['parameters']:,}", r["base_model"] or "-", r["task"],
    ) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    return 0


def _show(entry: ZooEntry) -> int:
    folder = entry.bundled()
    card = folder / "README.md" if folder else None
    metrics = metrics_section(_card_text(card)) if card and card.is_file() else ""
    info = describe(entry)
    info["bundled"] = str(folder) if folder else "no"
    for key, value in info.items():
        if value is not None:
            print(f"{key + ':':<16} {value}")
    if metrics:
        print(f"\n{metrics}")
    return 0


def _card_text(card: Path) -> str:
    """The model card's text; an :class:`InputError` naming the file when it is not readable UTF-8 text."""
    try:
        return card.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{card}: the model card is not UTF-8 text ({err.reason} at byte {err.start}); restore "
                         "it (simdist export writes it) or remove it") from err


def metrics_section(card: str) -> str:
    """The model card's metrics section (its heading up to the next ``## `` heading), or ''."""
    lines = card.splitlines()
    if METRICS_HEADING not in lines:
        return ""
    start = lines.index(METRICS_HEADING)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end]).strip()


def _publish(parser: argparse.ArgumentParser, entry: ZooEntry, *, repo_id: str, push: bool, private: bool) -> int:
    from simdist.zoo.publish import push_folder

    folder = entry.bundled()
    if folder is None:
        where = Path(entry.root or ".") / (entry.folder or f"models/{entry.name}")
        parser.error(f"{entry.name} is not bundled: train and export it first with `simdist fit --config "
                     f"{entry.recipe}`, then `simdist export --ckpt <run>/last.ckpt --out {where}`")
    if not push:
        files = push_folder(folder, repo_id, dry_run=True)
        print(f"dry run: would upload {folder} to https://huggingface.co/{repo_id} as one commit:")
        for name in files:
            print(f"  {name:<24} {(folder / name).stat().st_size / 2**20:8.2f} MB")
        print("rerun with --push to upload (needs a Hub token)")
        return 0
    url = push_folder(folder, repo_id, private=private or None)
    print(f"pushed {folder} to {repo_id}: {url}")
    if entry.status != "available":
        print(f"now set `status: available` for {entry.name} in hub/models.yaml")
    return 0
