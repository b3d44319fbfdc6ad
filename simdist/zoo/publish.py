"""Publishing a zoo model: ``push_folder`` checks that an exported folder loads (strictly, as its agent type), then
uploads it as one commit (``simdist zoo publish``). It sits above ``world_model`` and ``agents``; the hub below
them only writes, reads and uploads files."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Literal, overload

from huggingface_hub.utils import validate_repo_id

from simdist.agents import LEGACY_AGENT_TYPE, load_agent, read_agent_type
from simdist.hub.files import CARD_NAME, CONFIG_NAME, StrPath
from simdist.hub.push import upload_files, upload_folder
from simdist.model.world_model import WorldModel

__all__ = ["push_folder"]

logger = logging.getLogger(__name__)


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

    The folder is checked first: a SimDist folder must load strictly as a :class:`~simdist.WorldModel`, any
    other agent type through its class (:func:`simdist.agents.load_agent`). Only
    ``config.json``, ``model.safetensors``, ``README.md``, ``*.yaml`` and ``*.json`` are uploaded.
    ``dry_run=True`` returns the list of files that would be uploaded and contacts nothing.
    """
    path = Path(folder).expanduser()
    validate_repo_id(repo_id)
    agent_type = read_agent_type(path / CONFIG_NAME) if (path / CONFIG_NAME).is_file() else LEGACY_AGENT_TYPE
    if agent_type == LEGACY_AGENT_TYPE:
        message = WorldModel.from_pretrained(path)._hub_commit_message()  # raises on a broken export
    else:
        load_agent(path)
        message = f"Upload simdist {agent_type} agent"
    if not (path / CARD_NAME).is_file():
        warnings.warn(f"{path} has no {CARD_NAME}; the Hub repo will have no model card", stacklevel=2)
    if dry_run:
        files = upload_files(path)
        logger.info("dry run: would upload %s to %s", files, repo_id)
        return files
    return upload_folder(path, repo_id, revision=revision, private=private, create_pr=create_pr, token=token,
                         commit_message=commit_message or message)
