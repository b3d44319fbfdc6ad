"""Hub I/O for world models: ``save_pretrained``, ``load_pretrained``, ``push_to_hub``, ``push_folder``.

A saved model is a folder (and a Hub repo) holding ``config.json`` (the :class:`WorldModelConfig` plus
``simdist_version``), ``model.safetensors`` (weights and normaliser buffers), a ``README.md`` model card
and, optionally, ``train_config.yaml`` and ``planner.json``. Hub downloads go through
``huggingface_hub.snapshot_download``, so ``HF_HUB_OFFLINE=1``, ``local_files_only`` and the HF cache
behave exactly as huggingface_hub defines them.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import json
import logging
import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import jinja2
import torch
import yaml
from huggingface_hub import HfApi, ModelCardData, snapshot_download
from huggingface_hub.errors import (
    GatedRepoError,
    HFValidationError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.utils import DEFAULT_IGNORE_PATTERNS, filter_repo_objects, validate_repo_id
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from simdist import __version__
from simdist.config import ConfigError, WorldModelConfig
from simdist.fsutil import replace_dir

if TYPE_CHECKING:
    from simdist.world_model import WorldModel

__all__ = [
    "HfApi", "CheckpointError", "CheckpointWarning", "ModelSource", "parse_name", "resolve_folder",
    "save_pretrained", "load_pretrained", "read_config", "push_to_hub", "push_folder", "render_model_card",
]

logger = logging.getLogger(__name__)

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
CARD_NAME = "README.md"
TRAIN_CONFIG_NAME = "train_config.yaml"
PLANNER_NAME = "planner.json"
#: Files fetched from (and pushed to) a Hub repo.
ALLOW_PATTERNS = [CONFIG_NAME, WEIGHTS_NAME, CARD_NAME, "*.yaml", "*.json"]
BASE_TAGS = ("simdist", "world-model", "model-based-rl", "robotics")
LIBRARY_NAME = "simdist"
PIPELINE_TAG = "robotics"
DEFAULT_LICENSE = "apache-2.0"
HUB_PREFIX = "hf-hub:"
LOCAL_PREFIX = "local-dir:"

# Model attribute name -> config field holding its ComponentSpec.
_SPEC_FIELDS = {"encoder": "encoder", "dynamics": "dynamics", "reward": "reward_head", "value": "value_head",
                "policy": "policy_head"}

M = TypeVar("M", bound="WorldModel")
StrPath = str | os.PathLike  # a path given as str or Path


class CheckpointError(ValueError):
    """A checkpoint is corrupted, truncated or does not match the architecture in its ``config.json``."""


class CheckpointWarning(UserWarning):
    """Raised as a warning when ``strict=False`` skips weights that do not match."""


# ---------------------------------------------------------------------------------------------- names
@dataclasses.dataclass(frozen=True)
class ModelSource:
    """Where a model lives: a local ``path`` or a Hub ``repo_id`` at ``revision`` (None: ``main``)."""

    path: Path | None = None
    repo_id: str | None = None
    revision: str | None = None

    def __str__(self) -> str:
        if self.path is not None:
            return f"folder {str(self.path)!r}"
        return f"Hub repo {self.repo_id!r} (revision {self.revision or 'main'!r})"


def _looks_like_path(name: str) -> bool:
    return name.startswith((".", "/", "~")) or "\\" in name or name.count("/") > 1


def parse_name(name_or_path: StrPath, revision: str | None = None) -> ModelSource:
    """Classify ``name_or_path``: ``local-dir:<path>``, an existing folder, ``hf-hub:org/name[@rev]``
    or a Hub id ``org/name``. Raises ``FileNotFoundError`` for a missing folder and ``ValueError`` for
    a name that is neither a folder nor a valid repo id, or for two different revisions.
    """
    if isinstance(name_or_path, os.PathLike):
        path = Path(name_or_path).expanduser()
        if not path.exists():
            raise FileNotFoundError(f"no such model folder: {str(path)!r}")
        return _local_source(path)
    name = str(name_or_path)
    if name.startswith(LOCAL_PREFIX):
        path = Path(name[len(LOCAL_PREFIX):]).expanduser()
        if not path.exists():
            raise FileNotFoundError(f"no such model folder: {str(path)!r} (from {name!r})")
        return _local_source(path)
    if name.startswith(HUB_PREFIX):
        repo_id, _, rev = name[len(HUB_PREFIX):].partition("@")
        if rev and revision and rev != revision:
            raise ValueError(f"{name!r} pins revision {rev!r} but revision={revision!r} was also passed")
        _check_repo_id(repo_id, name)
        return ModelSource(repo_id=repo_id, revision=rev or revision)
    path = Path(name).expanduser()
    if path.exists():
        return _local_source(path)
    if _looks_like_path(name):
        raise FileNotFoundError(f"no such model folder: {name!r}")
    _check_repo_id(name, name)
    return ModelSource(repo_id=name, revision=revision)


def _local_source(path: Path) -> ModelSource:
    if not path.is_dir():
        raise ValueError(f"{str(path)!r} is a file; pass the folder holding {CONFIG_NAME} and {WEIGHTS_NAME}")
    return ModelSource(path=path)


def _check_repo_id(repo_id: str, name: str) -> None:
    hint = ""
    if "@" in repo_id:
        hint = "; to pin a revision write 'hf-hub:org/name@rev' or pass revision="
    elif "/" not in repo_id:
        hint = "; Hub ids have the form 'org/name'"
        try:
            from simdist.presets import list_presets

            if repo_id in list_presets():
                hint += f" (for the untrained architecture use WorldModel.from_preset({repo_id!r}))"
        except ImportError:  # pragma: no cover - presets are part of the package
            pass
    try:
        if "/" not in repo_id:
            raise HFValidationError("missing namespace")
        validate_repo_id(repo_id)
    except HFValidationError as err:
        raise ValueError(f"{name!r} is neither an existing folder nor a valid Hub repo id ({err}){hint}") \
            from err


def resolve_folder(
    name_or_path: StrPath, *, revision: str | None = None, cache_dir: StrPath | None = None,
    local_files_only: bool = False, token: str | bool | None = None,
) -> tuple[Path, ModelSource]:
    """Return the local folder holding the model files (downloading Hub repos into the HF cache)."""
    source = parse_name(name_or_path, revision)
    if source.path is not None:
        return source.path, source
    assert source.repo_id is not None
    try:
        folder = snapshot_download(
            source.repo_id, revision=source.revision, cache_dir=None if cache_dir is None else str(cache_dir),
            local_files_only=local_files_only, token=token, allow_patterns=ALLOW_PATTERNS,
            library_name=LIBRARY_NAME, library_version=__version__,
        )
    except GatedRepoError:
        raise
    except (RepositoryNotFoundError, RevisionNotFoundError, LocalEntryNotFoundError) as err:
        bundled = _bundled_copy(source, err)
        if bundled is not None:
            return bundled, source
        hint = ""
        if isinstance(err, LocalEntryNotFoundError):
            rev = f" --revision {source.revision}" if source.revision else ""
            hint = (f"; it is not in the local HF cache and the Hub cannot be reached (offline mode or "
                    f"local_files_only=True): fetch it first with `hf download {source.repo_id}{rev}`")
        raise FileNotFoundError(f"cannot find {source}{hint} [{type(err).__name__}: {err}]") from err
    except Exception as err:
        bundled = _bundled_copy(source, err)
        if bundled is None:
            raise
        return bundled, source
    return Path(folder), source


def _unreachable(err: BaseException) -> bool:
    """True when ``err`` means the Hub could not be reached or has no such repo: offline mode, not cached,
    repository not found, or a connection error (an ``OSError`` such as requests' ``ConnectionError``, or an
    httpx ``TransportError``). False for gated repos and missing revisions."""
    if isinstance(err, (GatedRepoError, RevisionNotFoundError)):
        return False
    if isinstance(err, (LocalEntryNotFoundError, RepositoryNotFoundError, OSError)):
        return True
    return any(cls.__name__ == "TransportError" and cls.__module__.startswith("httpx") for cls in type(err).__mro__)


def _bundled_copy(source: ModelSource, err: BaseException) -> Path | None:
    """The zoo's bundled copy of ``source`` (a Hub id at ``main``) when ``err`` says the Hub is out of reach."""
    if source.revision not in (None, "main") or source.repo_id is None or not _unreachable(err):
        return None
    from simdist.zoo import bundled_folder

    try:
        folder = bundled_folder(source.repo_id)
    except ValueError as index_err:  # a malformed zoo index must not hide the download error
        logger.warning("ignoring the model zoo: %s", index_err)
        return None
    if folder is not None:
        reason = (str(err).splitlines() or [""])[0]
        logger.info("using the bundled copy of %s in %s (Hub not reachable: %s: %s)", source.repo_id, folder,
                    type(err).__name__, reason)
    return folder


# ---------------------------------------------------------------------------------------------- loading
def load_pretrained(
    cls: type[M], name_or_path: StrPath, *, revision: str | None = None,
    cache_dir: StrPath | None = None, local_files_only: bool = False, strict: bool = True,
    map_location: str | torch.device = "cpu", token: str | bool | None = None,
) -> M:
    """Rebuild ``cls`` from ``config.json`` and load ``model.safetensors``; returns the model in eval mode.

    ``strict=True`` raises :class:`CheckpointError` on missing, unexpected or mis-shaped weights;
    ``strict=False`` loads what matches and emits a :class:`CheckpointWarning` for the rest.
    """
    folder, source = resolve_folder(
        name_or_path, revision=revision, cache_dir=cache_dir, local_files_only=local_files_only, token=token,
    )
    for name in (CONFIG_NAME, WEIGHTS_NAME):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{source} has no {name} (looked in {folder})")
    config = read_config(folder / CONFIG_NAME)
    model = cls(config)
    state = _read_weights(folder / WEIGHTS_NAME)
    _load_state(model, state, strict=strict, where=f"{WEIGHTS_NAME} of {source}")
    return model.to(map_location).eval()


def read_config(path: Path) -> WorldModelConfig:
    """Parse a ``config.json`` (any known schema version) into a :class:`WorldModelConfig`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"{path} is not valid JSON: {err}") from err
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} must hold a JSON object, got {type(data).__name__}")
    try:
        return WorldModelConfig.from_dict(data)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from err


def _read_weights(path: Path) -> dict[str, torch.Tensor]:
    try:
        return load_file(str(path), device="cpu")
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointError(f"{path} is corrupted or truncated and cannot be read: {err}") from err


def _group(keys: Iterable[str]) -> str:
    groups: dict[str, list[str]] = {}
    for key in sorted(keys):
        prefix, _, rest = key.partition(".")
        groups.setdefault(prefix, []).append(rest or key)
    return "\n".join(f"    {prefix}: {', '.join(names)}" for prefix, names in groups.items())


def _load_state(model: torch.nn.Module, state: dict[str, torch.Tensor], *, strict: bool, where: str) -> None:
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
        warnings.warn(
            f"{where}: loaded only the matching weights; the rest keep their initial values:\n"
            + "\n".join(problems), CheckpointWarning, stacklevel=4,
        )
        state = {k: v for k, v in state.items() if k in expected and k not in mismatched}
    model.load_state_dict(state, strict=not problems)


# ---------------------------------------------------------------------------------------------- saving
def save_pretrained(
    model: WorldModel, save_directory: StrPath, *, model_card_kwargs: Mapping[str, Any] | None = None,
    base_model: str | None = None, metrics: Mapping[str, Any] | None = None,
    train_config: Mapping[str, Any] | StrPath | None = None,
    planner_config: Mapping[str, Any] | Any | None = None, tags: Sequence[str] | None = None,
) -> Path:
    """Write ``config.json``, ``model.safetensors``, ``README.md`` (and ``train_config.yaml``,
    ``planner.json`` when given) into ``save_directory``, atomically; returns the folder.

    The files are written into a temporary sibling folder that replaces the target only once complete.
    An existing target must be empty or a previous export (it holds a ``config.json``).
    ``train_config`` is a mapping, YAML text or a path to a YAML file; ``planner_config`` a mapping or a
    dataclass. ``model_card_kwargs`` feed the card: ``repo_id``, ``model_name``, ``description``,
    ``citation``, ``datasets`` and ``license`` are understood (the last two also go into the metadata).
    """
    target = Path(save_directory).expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"cannot save a model to {str(target)!r}: it is a file")
    if target.is_dir() and any(target.iterdir()) and not (target / CONFIG_NAME).is_file():
        raise FileExistsError(
            f"refusing to replace {str(target)!r}: it is not empty and holds no {CONFIG_NAME} "
            "(not a saved model); choose an empty or new folder"
        )
    card_kwargs = dict(model_card_kwargs or {})
    train_text = _train_config_text(train_config) if train_config is not None else None
    planner_text = _planner_text(planner_config) if planner_config is not None else None
    card = render_model_card(
        model, base_model=base_model, metrics=metrics, tags=tags, has_train_config=train_text is not None,
        has_planner=planner_text is not None, folder_name=target.name, **card_kwargs,
    )
    # Top-level keys sorted; nested order kept: obs_spec order is the encoders' concatenation order.
    config = {**model.config.to_dict(), "simdist_version": __version__}
    config = {key: config[key] for key in sorted(config)}

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        (tmp / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        state = {k: v.detach().cpu().clone(memory_format=torch.contiguous_format)
                 for k, v in model.state_dict().items()}
        # One metadata key: safetensors writes the metadata map in hash order, so more than one key would make
        # rebuilt weights differ byte-wise (the version is in config.json).
        save_file(state, str(tmp / WEIGHTS_NAME), metadata={"format": "pt"})
        (tmp / CARD_NAME).write_text(card, encoding="utf-8")
        if train_text is not None:
            (tmp / TRAIN_CONFIG_NAME).write_text(train_text, encoding="utf-8")
        if planner_text is not None:
            (tmp / PLANNER_NAME).write_text(planner_text, encoding="utf-8")
        replace_dir(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


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


def _hub_id(name: str) -> str | None:
    """``hf-hub:org/name@rev`` or ``org/name`` -> ``org/name`` for card metadata; None for a local folder."""
    if name.startswith(LOCAL_PREFIX) or _looks_like_path(name) or Path(name).expanduser().is_dir():
        return None
    repo_id = name[len(HUB_PREFIX):] if name.startswith(HUB_PREFIX) else name
    repo_id = repo_id.partition("@")[0]
    try:
        if "/" not in repo_id:
            raise HFValidationError("missing namespace")
        validate_repo_id(repo_id)
    except HFValidationError:
        return None
    return repo_id


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
    """Render ``README.md`` (YAML front matter + body) from the Jinja template ``templates/model_card.md``."""
    cfg = model.config
    all_tags = list(dict.fromkeys([*BASE_TAGS, *(t for t in (cfg.task, cfg.robot) if t), *(tags or ())]))
    datasets = kwargs.pop("datasets", None)
    datasets = [datasets] if isinstance(datasets, str) else list(datasets or [])
    base = _hub_id(base_model) if base_model else None
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
        "description": "", "citation": "",
        **{f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)},
        "components": rows, "total_params": counts["total"], "base_model": base,
        "local_base_model": base_model if base_model and base is None else "",
        "metrics": [(str(k), _format_metric(v)) for k, v in (metrics or {}).items()],
        "datasets": datasets, "has_train_config": has_train_config, "has_planner": has_planner,
        "normalizer_fitted": bool(model.normalizer.fitted), "simdist_version": __version__,
        **kwargs,
    }
    template = importlib.resources.files("simdist").joinpath("templates").joinpath("model_card.md")
    text = template.read_text(encoding="utf-8")
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    return env.from_string(text).render(card_data=card_data.to_yaml(), **variables)


# ---------------------------------------------------------------------------------------------- pushing
def push_to_hub(
    model: WorldModel, repo_id: str, *, revision: str | None = None, private: bool | None = None,
    commit_message: str | None = None, create_pr: bool = False, token: str | bool | None = None,
    **save_kwargs: Any,
) -> str:
    """``save_pretrained`` into a temporary folder and upload it as one commit; returns the commit URL
    (the pull-request URL with ``create_pr=True``). ``save_kwargs`` go to :func:`save_pretrained`.
    """
    card_kwargs = dict(save_kwargs.pop("model_card_kwargs", None) or {})
    card_kwargs.setdefault("repo_id", repo_id)
    with tempfile.TemporaryDirectory(prefix="simdist-push-") as tmp:
        folder = save_pretrained(model, Path(tmp) / repo_id.split("/")[-1], model_card_kwargs=card_kwargs,
                                 **save_kwargs)
        message = commit_message or _default_message(model.config)
        return _upload(folder, repo_id, revision=revision, private=private, commit_message=message,
                       create_pr=create_pr, token=token)


@overload
def push_folder(
    folder: StrPath, repo_id: str, *, revision: str | None = ..., private: bool | None = ...,
    commit_message: str | None = ..., create_pr: bool = ..., token: str | bool | None = ...,
    dry_run: Literal[False] = ...,
) -> str: ...


@overload
def push_folder(
    folder: StrPath, repo_id: str, *, revision: str | None = ..., private: bool | None = ...,
    commit_message: str | None = ..., create_pr: bool = ..., token: str | bool | None = ...,
    dry_run: Literal[True],
) -> list[str]: ...


def push_folder(
    folder: StrPath, repo_id: str, *, revision: str | None = None, private: bool | None = None,
    commit_message: str | None = None, create_pr: bool = False, token: str | bool | None = None,
    dry_run: bool = False,
) -> str | list[str]:
    """Upload an exported (``save_pretrained``) folder as one commit; returns the commit URL.

    The folder is checked first: it must load strictly as a :class:`~simdist.WorldModel`. Only
    ``config.json``, ``model.safetensors``, ``README.md``, ``*.yaml`` and ``*.json`` are uploaded.
    ``dry_run=True`` returns the list of files that would be uploaded and contacts nothing.
    """
    from simdist.world_model import WorldModel

    path = Path(folder).expanduser()
    validate_repo_id(repo_id)
    model = load_pretrained(WorldModel, path)  # raises on a broken export
    if not (path / CARD_NAME).is_file():
        warnings.warn(f"{path} has no {CARD_NAME}; the Hub repo will have no model card", stacklevel=2)
    if dry_run:
        files = _upload_files(path)
        logger.info("dry run: would upload %s to %s", files, repo_id)
        return files
    return _upload(path, repo_id, revision=revision, private=private, create_pr=create_pr, token=token,
                   commit_message=commit_message or _default_message(model.config))


def _default_message(config: WorldModelConfig) -> str:
    return f"Upload simdist world model{f' for {config.task}' if config.task else ''} (simdist {__version__})"


def _upload_files(folder: Path) -> list[str]:
    """Relative paths under ``folder`` that ``upload_folder`` would send with :data:`ALLOW_PATTERNS`."""
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return list(filter_repo_objects(files, allow_patterns=ALLOW_PATTERNS,
                                    ignore_patterns=DEFAULT_IGNORE_PATTERNS))


def _upload(
    folder: Path, repo_id: str, *, revision: str | None, private: bool | None, commit_message: str,
    create_pr: bool, token: str | bool | None,
) -> str:
    api = HfApi(token=token)
    repo = api.create_repo(repo_id, exist_ok=True, private=private, repo_type="model")
    repo_id = getattr(repo, "repo_id", None) or repo_id
    if revision and revision != "main" and not create_pr:
        api.create_branch(repo_id, branch=revision, exist_ok=True, repo_type="model")
    info = api.upload_folder(
        repo_id=repo_id, folder_path=str(folder), repo_type="model", revision=revision,
        commit_message=commit_message, create_pr=create_pr, allow_patterns=ALLOW_PATTERNS,
    )
    pr_url = getattr(info, "pr_url", None)
    url = pr_url if create_pr and pr_url else getattr(info, "commit_url", None) or str(info)
    logger.info("pushed %s to %s: %s", folder, repo_id, url)
    return url
