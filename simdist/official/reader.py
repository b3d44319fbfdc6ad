"""Reading an official orbax checkpoint without JAX: the OCDBT key-value store through ``tensorstore``.

A run folder (``checkpoints/models/<run>/``) holds ``model_config.yaml`` and one folder per saved step; a step
folder holds ``default/`` (orbax's ``StandardCheckpointHandler`` item): ``_METADATA`` (JSON, the tree's paths
and shapes) and the arrays, one zarr array per leaf (key: the path joined with ``.``) in an OCDBT store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from simdist.errors import InputError
from simdist.official.mapping import IGNORED, OfficialCheckpoint

__all__ = ["resolve_checkpoint", "read_checkpoint", "read_tree_paths", "CONFIG_FILE", "ITEM"]

CONFIG_FILE = "model_config.yaml"
ITEM = "default"
_METADATA = "_METADATA"
_INSTALL = "reading an official checkpoint needs tensorstore: pip install 'simdist[official]'"


def resolve_checkpoint(path: str | Path, step: int | None = None) -> tuple[Path, Path, int]:
    """``(step folder, model_config.yaml, step)`` from a run folder (its newest step, or ``step``), a step folder
    or its ``default/`` item; :class:`InputError` naming the path when it is none of these."""
    p = Path(path).expanduser().resolve()
    if p.name == ITEM and (p / _METADATA).is_file():
        p = p.parent
    if (p / ITEM / _METADATA).is_file():
        if step is not None and p.name != str(step):
            raise InputError(f"--checkpoint {path}: a step folder ({p.name}) and --step {step} disagree")
        run = p.parent
    elif (p / CONFIG_FILE).is_file():
        steps = sorted(int(d.name) for d in p.iterdir() if d.name.isdigit() and (d / ITEM / _METADATA).is_file())
        if not steps:
            raise InputError(f"--checkpoint {path}: no step folder holding {ITEM}/{_METADATA}")
        if step is not None and step not in steps:
            raise InputError(f"--checkpoint {path}: no step {step} (steps: {', '.join(map(str, steps))})")
        run, p = p, p / str(step if step is not None else steps[-1])
    else:
        raise InputError(f"--checkpoint {path}: neither an orbax step folder ({ITEM}/{_METADATA}) nor a run "
                         f"folder holding {CONFIG_FILE}")
    config = run / CONFIG_FILE
    if not config.is_file():
        raise InputError(f"--checkpoint {path}: no {CONFIG_FILE} next to the step folder (in {run})")
    if not p.name.isdigit():
        raise InputError(f"--checkpoint {path}: the step folder's name {p.name!r} is not a step number")
    return p, config, int(p.name)


def read_tree_paths(step_dir: Path) -> tuple[dict[str, tuple[str, list[int]]], bool]:
    """``{path: (store key, shape)}`` of every leaf in the step's ``_METADATA``, and whether it uses zarr v3."""
    meta_file = step_dir / ITEM / _METADATA
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        leaves = {}
        for entry in meta["tree_metadata"].values():
            keys = [str(k["key"]) for k in entry["key_metadata"]]
            leaves["/".join(keys)] = (".".join(keys), list(entry["value_metadata"].get("write_shape") or []))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise InputError(f"{meta_file}: not an orbax tree metadata file ({err})") from None
    return leaves, bool(meta.get("use_zarr3", False))


def _tensorstore() -> Any:
    try:
        import tensorstore
    except ImportError:
        raise InputError(_INSTALL) from None
    return tensorstore


def read_checkpoint(path: str | Path, step: int | None = None) -> OfficialCheckpoint:
    """Every array of an official checkpoint (float32 numpy, the dropout RNG state left out) and its config."""
    step_dir, config_file, number = resolve_checkpoint(path, step)
    try:
        config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise InputError(f"{config_file}: not valid YAML ({err})") from None
    if not isinstance(config, dict):
        raise InputError(f"{config_file}: expected a mapping")
    leaves, zarr3 = read_tree_paths(step_dir)
    ts = _tensorstore()
    base = {"driver": "ocdbt", "base": (step_dir / ITEM).as_uri() + "/"}
    context = ts.Context()  # one OCDBT manifest and cache for every array
    wanted = {leaf: entry for leaf, entry in leaves.items() if not IGNORED.search(leaf)}
    # open and read every array concurrently (tensorstore futures), then collect them
    opened = {leaf: ts.open({"driver": "zarr3" if zarr3 else "zarr", "kvstore": {**base, "path": key + "/"}},
                            open=True, read=True, context=context) for leaf, (key, _) in wanted.items()}
    arrays: dict[str, np.ndarray] = {}
    try:
        reads = {leaf: future.result().read() for leaf, future in opened.items()}
        for leaf, future in reads.items():
            arrays[leaf] = np.asarray(future.result(), dtype=np.float32)
    except Exception as err:  # tensorstore raises ValueError/RuntimeError subclasses of its own
        raise InputError(f"{step_dir / ITEM}: cannot read its tensors ({err})") from None
    for leaf, (_, shape) in wanted.items():
        if list(arrays[leaf].shape) != shape:
            raise InputError(f"{step_dir / ITEM}: tensor {leaf!r} has shape {list(arrays[leaf].shape)}, its "
                             f"metadata says {shape}")
    return OfficialCheckpoint(arrays=arrays, config=config, step=number)
