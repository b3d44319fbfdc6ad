"""Strict loading of a saved folder: parse ``config.json`` into a dict, read ``model.safetensors``, refuse
non-finite tensors and check keys and shapes against the module the config describes.

The class is passed in (``load_pretrained(WorldModel, ...)``) and builds itself from the config dict
(:class:`~simdist.hub.protocols.Loadable`, which :class:`~simdist.hub.mixin.HubMixin` is), so this module knows no
model, agent or planner.
"""

from __future__ import annotations

import stat
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from simdist.errors import InputError
from simdist.fsutil import read_json_object
from simdist.hub.files import CONFIG_NAME, WEIGHTS_NAME, StrPath
from simdist.hub.protocols import Loadable
from simdist.hub.resolve import ModelSource, resolve_folder

__all__ = ["CheckpointError", "CheckpointWarning", "load_pretrained", "open_folder", "read_config_dict",
           "read_weights", "check_finite", "load_state"]

M = TypeVar("M", bound=Loadable)
#: How many offending tensors an error message names before summarising the rest.
_MAX_NAMED = 5


class CheckpointError(InputError):
    """A checkpoint is corrupted, truncated, holds non-finite values or does not match the architecture in its
    ``config.json``."""


class CheckpointWarning(UserWarning):
    """Raised as a warning when ``strict=False`` skips weights that do not match."""


def open_folder(name_or_path: StrPath, *, revision: str | None = None, cache_dir: StrPath | None = None,
                local_files_only: bool = False, token: str | bool | None = None,
                ) -> tuple[Path, ModelSource, dict[str, Any]]:
    """The folder (downloaded for a Hub id), its source and its ``config.json`` as a dict; FileNotFoundError
    naming the source when ``config.json`` or ``model.safetensors`` is missing."""
    folder, source = resolve_folder(
        name_or_path, revision=revision, cache_dir=cache_dir, local_files_only=local_files_only, token=token,
    )
    for name in (CONFIG_NAME, WEIGHTS_NAME):
        path = folder / name
        if path.exists() and not path.is_file():  # a folder, a device, a pipe (also behind a symlink)
            shown = f"{path} -> {path.resolve()}" if path.is_symlink() else str(path)
            raise CheckpointError(f"{shown} is not a regular file ({_kind(path)}); a model folder holds its "
                                  f"{name} as a file")
        if not path.is_file():
            raise FileNotFoundError(f"{source} has no {name} (looked in {folder})")
    return folder, source, read_config_dict(folder / CONFIG_NAME)


def _kind(path: Path) -> str:
    """What ``path`` is when it is not a regular file."""
    mode = path.stat().st_mode
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"))
    return next((text for test, text in kinds if test(mode)), "not a file")


def load_pretrained(
    cls: type[M], name_or_path: StrPath, *, revision: str | None = None,
    cache_dir: StrPath | None = None, local_files_only: bool = False, strict: bool = True,
    map_location: str | torch.device = "cpu", token: str | bool | None = None,
) -> M:
    """Build ``cls`` from ``config.json`` (its ``_from_hub_config``) and load ``model.safetensors``; returns it in
    eval mode.

    ``strict=True`` raises :class:`CheckpointError` on missing, unexpected or mis-shaped weights;
    ``strict=False`` loads what matches and emits a :class:`CheckpointWarning` for the rest. NaN or Inf
    values in a loaded tensor (weights or normaliser statistics) raise :class:`CheckpointError` either way.
    """
    folder, source, config = open_folder(name_or_path, revision=revision, cache_dir=cache_dir,
                                         local_files_only=local_files_only, token=token)
    model: M = cls._from_hub_config(config, folder / CONFIG_NAME)
    module = model._hub_module()
    load_state(module, read_weights(folder / WEIGHTS_NAME), strict=strict, where=f"{WEIGHTS_NAME} of {source}")
    module.to(map_location).eval()
    return model


def read_config_dict(path: Path) -> dict[str, Any]:
    """A ``config.json`` as a dict (:class:`CheckpointError` when it is not a JSON object)."""
    return read_json_object(path, CheckpointError)


def read_weights(path: Path) -> dict[str, torch.Tensor]:
    """Read a safetensors file onto the CPU; :class:`CheckpointError` when it is corrupted or truncated."""
    try:
        return load_file(str(path), device="cpu")
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointError(f"{path} is corrupted or truncated and cannot be read: {err}") from err


def check_finite(state: Mapping[str, torch.Tensor], *, where: str) -> None:
    """Raise :class:`CheckpointError` naming each floating-point tensor of ``state`` that holds NaN or Inf."""
    bad = []
    for key, value in state.items():
        if not (value.is_floating_point() or value.is_complex()):
            continue
        nan = int(torch.isnan(value).sum())
        inf = int(torch.isinf(value).sum())
        if nan or inf:
            bad.append(f"tensor {key!r} holds {nan} NaN / {inf} Inf values")
    if bad:
        more = f"; and {len(bad) - _MAX_NAMED} more tensors" if len(bad) > _MAX_NAMED else ""
        raise CheckpointError(f"{where}: " + "; ".join(bad[:_MAX_NAMED]) + more)


def _group(keys: Iterable[str]) -> str:
    groups: dict[str, list[str]] = {}
    for key in sorted(keys):
        prefix, _, rest = key.partition(".")
        groups.setdefault(prefix, []).append(rest or key)
    return "\n".join(f"    {prefix}: {', '.join(names)}" for prefix, names in groups.items())


def load_state(model: torch.nn.Module, state: dict[str, torch.Tensor], *, strict: bool, where: str) -> None:
    """Load ``state`` into ``model`` after checking keys, shapes and finiteness (see :func:`load_pretrained`)."""
    expected = model.state_dict()
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    mismatched = [k for k, v in expected.items() if k in state and state[k].shape != v.shape]
    problems = []
    if missing:
        problems.append(f"  missing keys (in the model, not the file), by component:\n{_group(missing)}")
    if unexpected:
        problems.append(f"  unexpected keys (in the file, not the model), by component:\n"
                        f"{_group(unexpected)}")
    if mismatched:
        problems.append("  shape mismatches:\n" + "\n".join(
            f"    {k}: file {tuple(state[k].shape)} vs model {tuple(expected[k].shape)}" for k in mismatched))
    if problems and strict:
        raise CheckpointError(
            f"{where} does not match the architecture in {CONFIG_NAME}:\n" + "\n".join(problems)
            + "\n(pass strict=False to load only the matching weights)"
        )
    if problems:
        state = {k: v for k, v in state.items() if k in expected and k not in mismatched}
    check_finite(state, where=where)
    if problems:
        warnings.warn(
            f"{where}: loaded only the matching weights; the rest keep their initial values:\n"
            + "\n".join(problems), CheckpointWarning, stacklevel=4,
        )
    model.load_state_dict(state, strict=not problems)
