"""Writing a model folder: a config dict, a module's state dict and extra files, atomically.

The hub does not read what it writes: ``config.json`` is the dict it is given (plus ``simdist_version``), the
weights are a state dict, and every other file (a model card, ``planner.json``, ``train_config.yaml``) is an
opaque extra file, text or a JSON-serialisable mapping. What a folder means (a world model, an agent and its
planner settings) is decided by the classes that save and load it (:mod:`simdist.hub.mixin`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from simdist import __version__
from simdist.fsutil import replace_dir
from simdist.hub.files import CONFIG_NAME, MODEL_FILES, WEIGHTS_NAME, StrPath

__all__ = ["save_target", "write_folder", "file_text", "json_text", "plain"]

#: an extra file's content: text as written, or a mapping / dataclass written as sorted JSON; None skips it
ExtraFile = str | Mapping[str, Any] | Any | None


def save_target(save_directory: StrPath) -> Path:
    """The resolved folder a save may replace: new, empty or a previous export (it holds a ``config.json``)."""
    target = Path(save_directory).expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"cannot save a model to {str(target)!r}: it is a file")
    if target.is_dir() and any(target.iterdir()) and not (target / CONFIG_NAME).is_file():
        raise FileExistsError(
            f"refusing to replace {str(target)!r}: it is not empty and holds no {CONFIG_NAME} "
            "(not a saved model); choose an empty or new folder"
        )
    return target


def write_folder(target: Path, config: Mapping[str, Any], module: torch.nn.Module,
                 files: Mapping[str, ExtraFile]) -> Path:
    """Write ``config.json`` (``config`` plus ``simdist_version``), ``module``'s weights and the extra ``files``
    (name → content, see :func:`file_text`; None skips) into a temporary sibling that replaces ``target`` once
    complete; returns ``target``. Files of a previous export that this one does not write are removed when
    they are model files (:data:`~simdist.hub.files.MODEL_FILES`), kept otherwise (a user's notes)."""
    # Top-level keys sorted; nested order kept: obs_spec order is the encoders' concatenation order.
    full = {**config, "simdist_version": __version__}
    full = {key: full[key] for key in sorted(full)}
    texts = {name: file_text(content) for name, content in files.items() if content is not None}
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        (tmp / CONFIG_NAME).write_text(json.dumps(full, indent=2) + "\n", encoding="utf-8")
        state = {k: v.detach().cpu().clone(memory_format=torch.contiguous_format)
                 for k, v in module.state_dict().items()}
        # One metadata key: safetensors writes the metadata map in hash order, so more than one key would make
        # rebuilt weights differ byte-wise (the version is in config.json).
        save_file(state, str(tmp / WEIGHTS_NAME), metadata={"format": "pt"})
        # safetensors writes through a private temporary (mode 0600): give the weights the mode of the folder's
        # other files (the user's umask)
        shutil.copymode(tmp / CONFIG_NAME, tmp / WEIGHTS_NAME)
        for name, text in texts.items():
            (tmp / name).write_text(text, encoding="utf-8")
        replace_dir(tmp, target, own=MODEL_FILES)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def file_text(content: ExtraFile) -> str:
    """An extra file's text: a str as given; a mapping or dataclass as JSON (sorted keys, 2-space indent,
    final newline)."""
    if isinstance(content, str):
        return content
    return json_text(content)


def json_text(content: Any) -> str:
    """A mapping or dataclass as JSON text (sorted keys, 2-space indent, final newline)."""
    if dataclasses.is_dataclass(content) and not isinstance(content, type):
        content = dataclasses.asdict(content)
    if not isinstance(content, Mapping):
        raise TypeError(f"an extra file must be text, a mapping or a dataclass, not {type(content).__name__}")
    return json.dumps(plain(content), indent=2, sort_keys=True) + "\n"


def plain(obj: Any) -> Any:
    """Convert mappings, sequences, paths and tensors to plain JSON/YAML types."""
    if isinstance(obj, Mapping):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, torch.Tensor):
        return obj.tolist()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    return obj
