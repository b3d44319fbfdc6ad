"""``HubMixin``: ``save_pretrained`` / ``from_pretrained`` / ``push_to_hub`` for a module described by a config dict.

In the style of huggingface_hub's ``ModelHubMixin``: the public methods live here, and a class says what it saves
through a few hooks. The mixin knows files, not models: a config dict, a state dict and extra files.

Why not ``huggingface_hub.PyTorchModelHubMixin`` itself: its ``save_pretrained`` deletes ``config.json`` from the
target before writing into it (a failed save would leave a broken folder, and the check that a save replaces only
a previous export could no longer tell one), writes ``config.json`` with every nested key sorted (the observation
groups' order is the encoders' concatenation order, so it must be kept) and adds a ``model_hub_mixin`` tag to the
card; its ``from_pretrained`` knows neither the ``hf-hub:`` / ``local-dir:`` names nor the zoo's offline copies and
loads with ``strict=False``. Every public method would be overridden, so simdist keeps the same surface (the same
keyword arguments, weights in ``model.safetensors``, the config in ``config.json``, the card in ``README.md``)
without the base class.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import torch

from simdist.hub.files import StrPath
from simdist.hub.folder import ExtraFile, save_target, write_folder

__all__ = ["HubMixin", "save_pretrained"]

H = TypeVar("H", bound="HubMixin")


class HubMixin:
    """Hub I/O for a class that provides:

    * ``hub_config()``: the ``config.json`` dict (the writer adds ``simdist_version``);
    * ``_hub_files(folder_name, extra_files, model_card_kwargs, **kwargs)``: its own extra files (a model card ...)
      from the keyword arguments of :meth:`save_pretrained` it understands;
    * ``_from_hub_config(config, path)`` (classmethod): an instance, weights not loaded, from a ``config.json``
      dict read from ``path``; it refuses a folder of another kind;
    * ``_hub_commit_message()``: the commit message of :meth:`push_to_hub` when none is given.

    The weights are the state dict of :meth:`_hub_module` (the instance itself for a ``torch.nn.Module``).
    """

    # ------------------------------------------------------------------ hooks
    def hub_config(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} does not say what its config.json holds")

    def _hub_files(self, folder_name: str, extra_files: Mapping[str, ExtraFile],
                   model_card_kwargs: Mapping[str, Any], **kwargs: Any) -> dict[str, ExtraFile]:
        if kwargs:
            raise TypeError(f"{type(self).__name__}.save_pretrained got unexpected keyword arguments {sorted(kwargs)}")
        return {}

    @classmethod
    def _from_hub_config(cls: type[H], config: dict[str, Any], path: Path) -> H:
        raise NotImplementedError(f"{cls.__name__} cannot be built from a config.json")

    def _hub_commit_message(self) -> str:
        return f"Upload {type(self).__name__}"

    def _hub_module(self) -> torch.nn.Module:
        if not isinstance(self, torch.nn.Module):
            raise TypeError(f"{type(self).__name__} is not a torch module; override _hub_module")
        return self

    # ------------------------------------------------------------------ public surface
    def save_pretrained(self, save_directory: StrPath, *, model_card_kwargs: Mapping[str, Any] | None = None,
                        extra_files: Mapping[str, ExtraFile] | None = None, config: Mapping[str, Any] | None = None,
                        **kwargs: Any) -> Path:
        """Write ``config.json``, ``model.safetensors``, the class's own files (its model card) and ``extra_files``
        (name → text, or a mapping written as JSON) into ``save_directory``, atomically; returns the folder.

        The files are written into a temporary sibling folder that replaces the target only once complete. An
        existing target must be empty or a previous export (it holds a ``config.json``). ``config``: the
        ``config.json`` dict (default :meth:`hub_config`); ``kwargs``: the class's own save options
        (:meth:`_hub_files`)."""
        target = save_target(save_directory)
        extras = dict(extra_files or {})
        files = {**self._hub_files(target.name, extras, dict(model_card_kwargs or {}), **kwargs), **extras}
        return write_folder(target, self.hub_config() if config is None else config, self._hub_module(), files)

    @classmethod
    def from_pretrained(
        cls: type[H], name_or_path: StrPath, *, revision: str | None = None, cache_dir: StrPath | None = None,
        local_files_only: bool = False, strict: bool = True, map_location: str | torch.device = "cpu",
        token: str | bool | None = None,
    ) -> H:
        """Load from a local folder or a Hub id (``org/name``, ``hf-hub:org/name@rev``, ``local-dir:path``); the
        weights must match the config's architecture unless ``strict=False`` (:func:`simdist.hub.load_pretrained`)."""
        from simdist.hub.load import load_pretrained

        return load_pretrained(cls, name_or_path, revision=revision, cache_dir=cache_dir,
                               local_files_only=local_files_only, strict=strict, map_location=map_location,
                               token=token)

    def push_to_hub(self, repo_id: str, *, revision: str | None = None, private: bool | None = None,
                    commit_message: str | None = None, create_pr: bool = False, token: str | bool | None = None,
                    **save_kwargs: Any) -> str:
        """Save to a temporary folder and upload it as one commit; returns the commit URL (the pull request's
        with ``create_pr=True``). ``save_kwargs`` go to :meth:`save_pretrained`."""
        from simdist.hub.push import push_to_hub

        return push_to_hub(self, repo_id, revision=revision, private=private, commit_message=commit_message,
                           create_pr=create_pr, token=token, **save_kwargs)


def save_pretrained(obj: HubMixin, save_directory: StrPath, **kwargs: Any) -> Path:
    """``obj.save_pretrained(save_directory, **kwargs)``: for callers holding the object and a folder."""
    return obj.save_pretrained(save_directory, **kwargs)
