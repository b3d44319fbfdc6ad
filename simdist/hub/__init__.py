"""Hub I/O for world models: ``save_pretrained``, ``load_pretrained``, ``push_to_hub``, ``push_folder``.

A saved model is a folder (and a Hub repo) holding ``config.json`` (the :class:`WorldModelConfig` plus
``simdist_version``), ``model.safetensors`` (weights and normaliser buffers), a ``README.md`` model card
and, optionally, ``train_config.yaml`` and ``planner.json``. Hub downloads go through
``huggingface_hub.snapshot_download``, so ``HF_HUB_OFFLINE=1``, ``local_files_only`` and the HF cache
behave exactly as huggingface_hub defines them.

One module per job; this package only re-exports their public names, loading each module on first use
(so ``simdist.hub.files`` can be imported without the rest). Code inside simdist imports from the modules:

* :mod:`simdist.hub.files`: file names and Hub/card constants (imports nothing from simdist);
* :mod:`simdist.hub.resolve`: parse names, find or download a folder, the zoo's offline fallback;
* :mod:`simdist.hub.load`: strict loading (config, safetensors, finiteness, keys and shapes);
* :mod:`simdist.hub.card`: ``save_pretrained`` and the model card;
* :mod:`simdist.hub.push`: ``push_to_hub`` and the upload helpers;
* :mod:`simdist.hub.publish`: ``push_folder`` (checks an exported folder, then uploads it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simdist.lazy import lazy_getattr

if TYPE_CHECKING:
    from simdist.hub.card import render_model_card, save_pretrained
    from simdist.hub.files import (
        ALLOW_PATTERNS,
        BASE_TAGS,
        CARD_NAME,
        CONFIG_NAME,
        DEFAULT_LICENSE,
        HUB_PREFIX,
        LIBRARY_NAME,
        LOCAL_PREFIX,
        PIPELINE_TAG,
        PLANNER_NAME,
        TRAIN_CONFIG_NAME,
        WEIGHTS_NAME,
    )
    from simdist.hub.load import CheckpointError, CheckpointWarning, load_pretrained, read_config
    from simdist.hub.publish import push_folder
    from simdist.hub.push import push_to_hub
    from simdist.hub.resolve import ModelSource, parse_name, resolve_folder

_EXPORTS = {
    "files": ("CONFIG_NAME", "WEIGHTS_NAME", "CARD_NAME", "TRAIN_CONFIG_NAME", "PLANNER_NAME", "ALLOW_PATTERNS",
              "BASE_TAGS", "LIBRARY_NAME", "PIPELINE_TAG", "DEFAULT_LICENSE", "HUB_PREFIX", "LOCAL_PREFIX"),
    "resolve": ("ModelSource", "parse_name", "resolve_folder"),
    "load": ("CheckpointError", "CheckpointWarning", "load_pretrained", "read_config"),
    "card": ("save_pretrained", "render_model_card"),
    "push": ("push_to_hub",),
    "publish": ("push_folder",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "ALLOW_PATTERNS", "BASE_TAGS", "CARD_NAME", "CONFIG_NAME", "CheckpointError", "CheckpointWarning",
    "DEFAULT_LICENSE", "HUB_PREFIX", "LIBRARY_NAME", "LOCAL_PREFIX", "ModelSource", "PIPELINE_TAG", "PLANNER_NAME",
    "TRAIN_CONFIG_NAME", "WEIGHTS_NAME", "load_pretrained", "parse_name", "push_folder", "push_to_hub",
    "read_config", "render_model_card", "resolve_folder", "save_pretrained",
]

__getattr__ = lazy_getattr(__name__, _MODULE_OF, globals())


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})
