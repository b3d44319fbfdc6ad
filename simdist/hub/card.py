"""Writing a model folder: ``save_pretrained`` (config, weights, card and optional extras, atomically) and the
``README.md`` model card rendered from the Jinja template ``simdist/templates/model_card.md``."""

from __future__ import annotations

import dataclasses
import importlib.resources
import json
import os
import shutil
import uuid
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
import torch
import yaml
from huggingface_hub import ModelCardData
from safetensors.torch import save_file

from simdist import __version__
from simdist.fsutil import replace_dir
from simdist.hub.files import (
    BASE_TAGS,
    CARD_NAME,
    CONFIG_NAME,
    DEFAULT_LICENSE,
    LIBRARY_NAME,
    MODEL_FILES,
    OFFICIAL_CODE_URL,
    PAPER_BIBTEX,
    PIPELINE_TAG,
    PLANNER_NAME,
    TRAIN_CONFIG_NAME,
    WEIGHTS_NAME,
    StrPath,
)
from simdist.hub.resolve import hub_repo_id

if TYPE_CHECKING:
    from simdist.config import WorldModelConfig
    from simdist.world_model import WorldModel

__all__ = ["save_pretrained", "render_model_card"]

# Model attribute name -> config field holding its ComponentSpec.
_SPEC_FIELDS = {"encoder": "encoder", "dynamics": "dynamics", "reward": "reward_head", "value": "value_head",
                "policy": "policy_head"}


def save_pretrained(
    model: WorldModel, save_directory: StrPath, *, model_card_kwargs: Mapping[str, Any] | None = None,
    base_model: str | None = None, metrics: Mapping[str, Any] | None = None,
    train_config: Mapping[str, Any] | StrPath | None = None,
    planner_config: Mapping[str, Any] | Any | None = None, tags: Sequence[str] | None = None,
    agent_type: str = "simdist",
) -> Path:
    """Write ``config.json`` (with ``agent_type``, the agent class that reads the folder), ``model.safetensors``,
    ``README.md`` (and ``train_config.yaml``,
    ``planner.json`` when given) into ``save_directory``, atomically; returns the folder.

    The files are written into a temporary sibling folder that replaces the target only once complete.
    An existing target must be empty or a previous export (it holds a ``config.json``).
    ``train_config`` is a mapping, YAML text or a path to a YAML file; ``planner_config`` a mapping or a
    dataclass. ``model_card_kwargs`` feed the card: ``repo_id``, ``model_name``, ``description``,
    ``citation``, ``datasets`` and ``license`` are understood (the last two also go into the metadata).
    """
    target = save_target(save_directory)
    card_kwargs = dict(model_card_kwargs or {})
    train_text = _train_config_text(train_config) if train_config is not None else None
    planner_text = _planner_text(planner_config) if planner_config is not None else None
    card = render_model_card(
        model, base_model=base_model, metrics=metrics, tags=tags, has_train_config=train_text is not None,
        has_planner=planner_text is not None, folder_name=target.name, **card_kwargs,
    )
    texts = {CARD_NAME: card, TRAIN_CONFIG_NAME: train_text, PLANNER_NAME: planner_text}
    return write_folder(target, portable_config(model).to_dict(), agent_type, model, texts)


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


def write_folder(target: Path, config: Mapping[str, Any], agent_type: str, module: torch.nn.Module,
                 texts: Mapping[str, str | None]) -> Path:
    """Write ``config.json`` (``config`` plus the version and ``agent_type``), ``module``'s weights and the
    text files ``texts`` (name → content; None skips) into a temporary sibling that replaces ``target`` once
    complete; returns ``target``."""
    # Top-level keys sorted; nested order kept: obs_spec order is the encoders' concatenation order.
    full = {**config, "simdist_version": __version__, "agent_type": agent_type}
    full = {key: full[key] for key in sorted(full)}
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
        for name, text in texts.items():
            if text is not None:
                (tmp / name).write_text(text, encoding="utf-8")
        replace_dir(tmp, target, own=MODEL_FILES)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def portable_config(model: WorldModel) -> WorldModelConfig:
    """``model.config`` as saved with the weights: each component with a ``portable_kwargs(kwargs)`` method
    rewrites its kwargs (a timm image encoder drops its local ``pretrained_file``, whose weights are now in
    ``model.safetensors``, and records where they came from as ``weights_source``)."""
    cfg = model.config
    changes = {}
    for attr, field in _SPEC_FIELDS.items():
        spec, hook = getattr(cfg, field), getattr(getattr(model, attr, None), "portable_kwargs", None)
        if spec is not None and callable(hook):
            changes[field] = {"name": spec.name, "kwargs": hook(dict(spec.kwargs))}
    return cfg.replace(**changes) if changes else cfg


def weights_sources(model: WorldModel) -> list[tuple[str, str]]:
    """(component, note) for each component that says where its initial weights came from (``weights_source``:
    a local pretrained file or random init)."""
    return [(name, str(mod.weights_source)) for name, mod in model.components.items()
            if isinstance(getattr(mod, "weights_source", None), str)]


def _train_config_text(train_config: Mapping[str, Any] | StrPath) -> str:
    if isinstance(train_config, os.PathLike):
        return Path(train_config).read_text(encoding="utf-8")
    if isinstance(train_config, str):
        if not isinstance(yaml.safe_load(train_config), dict):
            raise ValueError("train_config as a str must be YAML text of a mapping; pass a Path for a file")
        return train_config if train_config.endswith("\n") else train_config + "\n"
    return yaml.safe_dump(_plain(train_config), sort_keys=False)


def _planner_text(planner_config: Any) -> str:
    if dataclasses.is_dataclass(planner_config) and not isinstance(planner_config, type):
        planner_config = dataclasses.asdict(planner_config)
    if not isinstance(planner_config, Mapping):
        raise TypeError(f"planner_config must be a mapping or dataclass, not {type(planner_config).__name__}")
    return json.dumps(_plain(planner_config), indent=2, sort_keys=True) + "\n"


def _plain(obj: Any) -> Any:
    """Convert mappings, sequences, paths and tensors to plain JSON/YAML types."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, torch.Tensor):
        return obj.tolist()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    return obj


def _format_metric(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_format_metric(v) for v in value)
    return str(value)


def render_model_card(
    model: WorldModel, *, base_model: str | None = None, metrics: Mapping[str, Any] | None = None,
    tags: Sequence[str] | None = None, has_train_config: bool = False, has_planner: bool = False,
    folder_name: str = "", **kwargs: Any,
) -> str:
    """Render ``README.md`` (YAML front matter + body) from the Jinja template ``templates/model_card.md``
    (package data of ``simdist``)."""
    cfg = portable_config(model)
    all_tags = list(dict.fromkeys([*BASE_TAGS, *(t for t in (cfg.task, cfg.robot) if t), *(tags or ())]))
    datasets = kwargs.pop("datasets", None)
    datasets = [datasets] if isinstance(datasets, str) else list(datasets or [])
    base = hub_repo_id(base_model) if base_model else None
    if base_model and base is None:
        warnings.warn(f"base_model {base_model!r} is not a Hub repo id; the card names it but its metadata "
                      "gets no base_model", stacklevel=3)
    card_data = ModelCardData(
        library_name=LIBRARY_NAME, pipeline_tag=PIPELINE_TAG, license=kwargs.pop("license", DEFAULT_LICENSE),
        tags=all_tags, base_model=base, datasets=datasets or None,
    )
    counts = model.count_parameters()
    rows = []
    for component, params in counts.items():
        if component == "total":
            continue
        spec = getattr(cfg, _SPEC_FIELDS[component]) if component in _SPEC_FIELDS else None
        spec_kwargs = json.dumps(spec.kwargs, sort_keys=True) if spec and spec.kwargs else ""
        spec_kwargs = spec_kwargs.replace("|", "\\|")
        rows.append({"component": component, "name": spec.name if spec else "", "kwargs": spec_kwargs,
                     "params": params})
    repo_id = kwargs.pop("repo_id", None)
    variables: dict[str, Any] = {
        "model_name": (repo_id.split("/")[-1] if repo_id else None) or f"{cfg.task or 'simdist'} world model",
        "load_id": repo_id or f"<org>/{folder_name or 'model'}",
        "description": "", "citation": "", "paper_citation": PAPER_BIBTEX, "official_code_url": OFFICIAL_CODE_URL,
        **{f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)},
        "components": rows, "total_params": counts["total"], "base_model": base,
        "local_base_model": base_model if base_model and base is None else "",
        "metrics": [(str(k), _format_metric(v)) for k, v in (metrics or {}).items()],
        "datasets": datasets, "has_train_config": has_train_config, "has_planner": has_planner,
        "normalizer_fitted": bool(model.normalizer.fitted), "simdist_version": __version__,
        "weights_sources": weights_sources(model), "raw_obs_keys": sorted(getattr(model, "raw_obs_keys", ())),
        **kwargs,
    }
    template = importlib.resources.files("simdist").joinpath("templates").joinpath("model_card.md")
    text = template.read_text(encoding="utf-8")
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    return env.from_string(text).render(card_data=card_data.to_yaml(), **variables)
