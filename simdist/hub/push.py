"""Uploading to the Hub: ``push_to_hub`` (save an object into a temporary folder, upload it as one commit) and
the upload helpers the zoo's publishing (:mod:`simdist.zoo.publish`) shares."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huggingface_hub import HfApi
from huggingface_hub.utils import DEFAULT_IGNORE_PATTERNS, filter_repo_objects

from simdist.hub.files import ALLOW_PATTERNS

if TYPE_CHECKING:
    from simdist.hub.protocols import Pushable

__all__ = ["push_to_hub", "upload_folder", "upload_files"]

logger = logging.getLogger(__name__)


def push_to_hub(
    obj: Pushable, repo_id: str, *, revision: str | None = None, private: bool | None = None,
    commit_message: str | None = None, create_pr: bool = False, token: str | bool | None = None,
    **save_kwargs: Any,
) -> str:
    """``obj.save_pretrained`` into a temporary folder and upload it as one commit; returns the commit URL
    (the pull-request URL with ``create_pr=True``). ``save_kwargs`` go to ``save_pretrained``; the model card
    names ``repo_id`` unless ``model_card_kwargs`` does.
    """
    card_kwargs = dict(save_kwargs.pop("model_card_kwargs", None) or {})
    card_kwargs.setdefault("repo_id", repo_id)
    with tempfile.TemporaryDirectory(prefix="simdist-push-") as tmp:
        folder = obj.save_pretrained(Path(tmp) / repo_id.split("/")[-1], model_card_kwargs=card_kwargs,
                                     **save_kwargs)
        message = commit_message or obj._hub_commit_message()
        return upload_folder(folder, repo_id, revision=revision, private=private, commit_message=message,
                             create_pr=create_pr, token=token)


def upload_files(folder: Path) -> list[str]:
    """Relative paths under ``folder`` that ``upload_folder`` would send with :data:`ALLOW_PATTERNS`."""
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return list(filter_repo_objects(files, allow_patterns=ALLOW_PATTERNS,
                                    ignore_patterns=DEFAULT_IGNORE_PATTERNS))


def upload_folder(
    folder: Path, repo_id: str, *, revision: str | None, private: bool | None, commit_message: str,
    create_pr: bool, token: str | bool | None,
) -> str:
    """Create the repo (and branch ``revision``) if needed and upload ``folder`` as one commit; returns its URL."""
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
