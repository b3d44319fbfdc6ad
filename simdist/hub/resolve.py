"""Model names and where their files are: parse ``org/name``, ``hf-hub:org/name@rev`` and ``local-dir:path``,
download Hub repos with ``huggingface_hub.snapshot_download`` and fall back to the zoo's bundled copy offline.

``HF_HUB_OFFLINE=1``, ``local_files_only`` and the HF cache behave exactly as huggingface_hub defines them.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path

from huggingface_hub import snapshot_download
from huggingface_hub.errors import (
    GatedRepoError,
    HFValidationError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.utils import validate_repo_id

from simdist import __version__, zoo
from simdist.hub.files import ALLOW_PATTERNS, CONFIG_NAME, HUB_PREFIX, LIBRARY_NAME, LOCAL_PREFIX, WEIGHTS_NAME, StrPath

__all__ = ["ModelSource", "parse_name", "resolve_folder", "hub_repo_id"]

logger = logging.getLogger(__name__)


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


def _validate(repo_id: str) -> None:
    """``validate_repo_id`` that also requires the ``org/`` namespace."""
    if "/" not in repo_id:
        raise HFValidationError("missing namespace")
    validate_repo_id(repo_id)


def _check_repo_id(repo_id: str, name: str) -> None:
    hint = ""
    if "@" in repo_id:
        hint = "; to pin a revision write 'hf-hub:org/name@rev' or pass revision="
    elif "/" not in repo_id:
        hint = "; Hub ids have the form 'org/name'"
        from simdist.model.presets import list_presets

        if repo_id in list_presets():
            hint += f" (for the untrained architecture use WorldModel.from_preset({repo_id!r}))"
    try:
        _validate(repo_id)
    except HFValidationError as err:
        raise ValueError(f"{name!r} is neither an existing folder nor a valid Hub repo id ({err}){hint}") \
            from err


def hub_repo_id(name: str) -> str | None:
    """``hf-hub:org/name@rev`` or ``org/name`` -> ``org/name``; None for a local folder or an invalid id."""
    if name.startswith(LOCAL_PREFIX) or _looks_like_path(name) or Path(name).expanduser().is_dir():
        return None
    repo_id = name[len(HUB_PREFIX):] if name.startswith(HUB_PREFIX) else name
    repo_id = repo_id.partition("@")[0]
    try:
        _validate(repo_id)
    except HFValidationError:
        return None
    return repo_id


def resolve_folder(
    name_or_path: StrPath, *, revision: str | None = None, cache_dir: StrPath | None = None,
    local_files_only: bool = False, token: str | bool | None = None,
) -> tuple[Path, ModelSource]:
    """Return the local folder holding the model files (downloading Hub repos into the HF cache).

    When the Hub cannot be reached (offline mode, not cached, no such repo, connection error), a Hub id at
    ``main`` falls back to the zoo's bundled copy (:func:`simdist.zoo.bundled_folder`).
    """
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
    try:
        folder = zoo.bundled_folder(source.repo_id)
    except ValueError as index_err:  # a malformed zoo index must not hide the download error
        logger.warning("ignoring the model zoo: %s", index_err)
        return None
    if folder is not None:
        reason = (str(err).splitlines() or [""])[0]
        logger.info("using the bundled copy of %s in %s (Hub not reachable: %s: %s)", source.repo_id, folder,
                    type(err).__name__, reason)
    return folder
