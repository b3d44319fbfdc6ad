"""What a derived model's card takes from its base model's card, read without the network: the base's
``license`` and its licence-notice section (a heading starting with "Licence" or "License"), which licences
such as MIT require in all copies of the weights.

The base card is looked up where the loader finds the model offline (:func:`simdist.hub.resolve.resolve_folder`
with ``local_files_only``): a local folder's ``README.md``, else the HF cache's, else the zoo's bundled copy's.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import yaml
from huggingface_hub import ModelCard

from simdist.hub.files import CARD_NAME
from simdist.hub.resolve import resolve_folder

__all__ = ["BaseLicence", "base_card_path", "base_licence", "licence_section"]

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_FENCES = ("```", "~~~")
_LICENCE_WORDS = ("licence", "license")


@dataclasses.dataclass(frozen=True)
class BaseLicence:
    """The base card's ``license`` (None when it names none) and its licence-notice section, heading included
    ("" when it has none)."""

    license: str | None
    notice: str


def base_card_path(base_model: str) -> Path | None:
    """The base model's ``README.md`` found offline (local folder, HF cache, zoo's bundled copy: the loader's
    :func:`~simdist.hub.resolve.resolve_folder` without the network); None if none."""
    try:
        folder, _ = resolve_folder(base_model, local_files_only=True)
    except (OSError, ValueError):  # not found offline, or not a model name
        return None
    card = folder / CARD_NAME
    return card if card.is_file() else None


def licence_section(text: str) -> str:
    """The first section of markdown ``text`` whose heading starts with "Licence"/"License", verbatim: up to the
    next heading of the same or a higher level, or through its first fenced block (the notice) when it has one,
    so that text following the notice is left out; "" when there is no such section."""
    lines = text.splitlines()
    start: int | None = None
    level = 0
    in_fence = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(_FENCES):
            in_fence = not in_fence
            if start is not None and not in_fence:
                return "\n".join(lines[start:i + 1]).strip()
            continue
        match = None if in_fence else _HEADING.match(line)
        if match is None:
            continue
        depth = len(match.group(1))
        if start is not None and depth <= level:
            return "\n".join(lines[start:i]).strip()
        if start is None and match.group(2).lower().startswith(_LICENCE_WORDS):
            start, level = i, depth
    return "" if start is None else "\n".join(lines[start:]).strip()


def base_licence(base_model: str) -> BaseLicence | None:
    """The licence that ``base_model``'s card (found by :func:`base_card_path`) gives; None when no card is found
    or it cannot be parsed."""
    path = base_card_path(base_model)
    if path is None:
        return None
    try:
        card = ModelCard.load(path)
    except (OSError, ValueError, yaml.YAMLError):
        return None
    licence = card.data.to_dict().get("license")
    return BaseLicence(license=str(licence) if licence else None, notice=licence_section(card.text))
