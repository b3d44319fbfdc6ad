"""What the hub's loader and uploader need of the class they handle (:class:`~simdist.hub.mixin.HubMixin` has it).

Protocols, so that :mod:`simdist.hub.load` and :mod:`simdist.hub.push` name no class above them and the mixin,
which calls both, is imported by neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import torch

from simdist.hub.files import StrPath

__all__ = ["Loadable", "Pushable"]


class Loadable(Protocol):
    """A class the loader builds from a ``config.json`` dict, then fills with its weights."""

    @classmethod
    def _from_hub_config(cls, config: dict[str, Any], path: Path) -> Any: ...

    def _hub_module(self) -> torch.nn.Module: ...


class Pushable(Protocol):
    """An object the uploader saves into a folder (``save_pretrained``) and commits."""

    def save_pretrained(self, save_directory: StrPath, **kwargs: Any) -> Path: ...

    def _hub_commit_message(self) -> str: ...
