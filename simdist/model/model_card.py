"""The world model's model card (``README.md``, rendered from the Jinja template ``simdist/templates/model_card.md``)
and the parts of its folder besides the weights: the portable config and ``train_config.yaml``'s text.

The world model hands them to the hub's writer as extra files
(:meth:`simdist.model.world_model.WorldModel.save_pretrained`).
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import jinja2
import yaml
from huggingface_hub import ModelCardData

from simdist import __version__
from simdist.hub.files import (
    BASE_TAGS,
    DEFAULT_LICENSE,
    LIBRARY_NAME,
    OFFICIAL_CODE_URL,
    PAPER_BIBTEX,
    PIPELINE_TAG,
    StrPath,
)
from simdist.hub.folder import plain
from simdist.hub.resolve import hub_repo_id
from simdist.model.base_card import base_licence

if TYPE_CHECKING:
    from torch import nn

    from simdist.model.config import WorldModelConfig

__all__ = ["render_model_card", "portable_config", "weights_sources", "train_config_text"]

class CardModel(Protocol):
    """What the card reads of a model (:class:`~simdist.model.world_model.WorldModel` has it): its config, its
    named components (each an attribute too) and their parameter counts, and its normaliser."""

    config: WorldModelConfig
    normalizer: Any

    @property
    def components(self) -> dict[str, nn.Module]: ...

    def count_parameters(self, trainable_only: bool = False) -> dict[str, int]: ...


# Model attribute name -> config field holding its ComponentSpec.
_SPEC_FIELDS = {"encoder": "encoder", "dynamics": "dynamics", "reward": "reward_head", "value": "value_head",
                "policy": "policy_head"}


def portable_config(model: CardModel) -> WorldModelConfig:
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


def weights_sources(model: CardModel) -> list[tuple[str, str]]:
    """(component, note) for each component that says where its initial weights came from (``weights_source``:
    a local pretrained file or random init)."""
    return [(name, str(mod.weights_source)) for name, mod in model.components.items()
            if isinstance(getattr(mod, "weights_source", None), str)]


def train_config_text(train_config: Mapping[str, Any] | StrPath) -> str:
    """``train_config.yaml``'s text: a mapping as YAML, YAML text as given, a path's file as it is."""
    if isinstance(train_config, os.PathLike):
        return Path(train_config).read_text(encoding="utf-8")
    if isinstance(train_config, str):
        if not isinstance(yaml.safe_load(train_config), dict):
            raise ValueError("train_config as a str must be YAML text of a mapping; pass a Path for a file")
        return train_config if train_config.endswith("\n") else train_config + "\n"
    return yaml.safe_dump(plain(train_config), sort_keys=False)


def _format_metric(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_format_metric(v) for v in value)
    return str(value)


def render_model_card(
    model: CardModel, *, base_model: str | None = None, metrics: Mapping[str, Any] | None = None,
    tags: Sequence[str] | None = None, has_train_config: bool = False, has_planner: bool = False,
    folder_name: str = "", **kwargs: Any,
) -> str:
    """Render ``README.md`` (YAML front matter + body) from the Jinja template ``templates/model_card.md``
    (package data of ``simdist``).

    A ``base_model`` whose card can be read offline (:func:`simdist.model.base_card.base_licence`) gives the card
    its ``license`` (an explicit ``license=`` wins) and its licence-notice section, copied verbatim."""
    cfg = portable_config(model)
    all_tags = list(dict.fromkeys([*BASE_TAGS, *(t for t in (cfg.task, cfg.robot) if t), *(tags or ())]))
    datasets = kwargs.pop("datasets", None)
    datasets = [datasets] if isinstance(datasets, str) else list(datasets or [])
    base = hub_repo_id(base_model) if base_model else None
    if base_model and base is None:
        warnings.warn(f"base_model {base_model!r} is not a Hub repo id; the card names it but its metadata "
                      "gets no base_model", stacklevel=5)
    inherited = base_licence(base_model) if base_model else None
    default_licence = (inherited.license if inherited else None) or DEFAULT_LICENSE
    card_data = ModelCardData(
        library_name=LIBRARY_NAME, pipeline_tag=PIPELINE_TAG, license=kwargs.pop("license", default_licence),
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
        "base_licence_notice": inherited.notice if inherited else "",
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
