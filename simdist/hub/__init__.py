"""Hub I/O: a folder (and a Hub repo) of ``config.json``, ``model.safetensors`` and extra files.

The hub reads and writes a config dict, a state dict and extra files (a model card, ``planner.json``, ...) whose
content it does not interpret; what a folder means is decided by the class that saves and loads it through
:class:`~simdist.hub.mixin.HubMixin` (``WorldModel``; the agents write their own folders with the same writer).
A world model's folder holds ``config.json`` (the :class:`WorldModelConfig` plus ``simdist_version`` and
``agent_type``), ``model.safetensors`` (weights and normaliser buffers), a ``README.md`` model card and,
optionally, ``train_config.yaml`` and ``planner.json``. Hub downloads go through
``huggingface_hub.snapshot_download``, so ``HF_HUB_OFFLINE=1``, ``local_files_only`` and the HF cache
behave exactly as huggingface_hub defines them.

One module per job; this package only re-exports their public names, loading each module on first use
(so ``simdist.hub.files`` can be imported without the rest). Code inside simdist imports from the modules:

* :mod:`simdist.hub.files`: file names and Hub/card constants (imports nothing from simdist);
* :mod:`simdist.hub.resolve`: parse names, find or download a folder, the zoo's offline fallback;
* :mod:`simdist.hub.folder`: ``write_folder`` (config dict, state dict, extra files; atomically);
* :mod:`simdist.hub.load`: strict loading (config dict, safetensors, finiteness, keys and shapes);
* :mod:`simdist.hub.mixin`: ``HubMixin`` (``save_pretrained`` / ``from_pretrained`` / ``push_to_hub``);
* :mod:`simdist.hub.push`: ``push_to_hub`` and the upload helpers.

The hub names no model and no zoo: ``simdist.hub.render_model_card``, ``simdist.hub.push_folder`` and
``simdist.hub.read_config`` are deprecated spellings of :func:`simdist.model.model_card.render_model_card`,
:func:`simdist.zoo.publish.push_folder` and :meth:`simdist.model.config.WorldModelConfig.from_file`. The names load
on first use and are not imported for type checkers either (no import circle through this package).
"""

from __future__ import annotations

from typing import Any

from simdist.lazy import lazy_getattr

#: module (relative to ``simdist``) -> the public names it defines
_EXPORTS = {
    "hub.files": ("CONFIG_NAME", "WEIGHTS_NAME", "CARD_NAME", "TRAIN_CONFIG_NAME", "PLANNER_NAME", "ALLOW_PATTERNS",
                  "BASE_TAGS", "LIBRARY_NAME", "PIPELINE_TAG", "DEFAULT_LICENSE", "HUB_PREFIX", "LOCAL_PREFIX"),
    "hub.resolve": ("ModelSource", "parse_name", "resolve_folder"),
    "hub.load": ("CheckpointError", "CheckpointWarning", "load_pretrained"),
    "hub.folder": ("write_folder",),
    "hub.mixin": ("HubMixin", "save_pretrained"),
    "hub.push": ("push_to_hub",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "ALLOW_PATTERNS", "BASE_TAGS", "CARD_NAME", "CONFIG_NAME", "CheckpointError", "CheckpointWarning",
    "DEFAULT_LICENSE", "HUB_PREFIX", "HubMixin", "LIBRARY_NAME", "LOCAL_PREFIX", "ModelSource", "PIPELINE_TAG",
    "PLANNER_NAME", "TRAIN_CONFIG_NAME", "WEIGHTS_NAME", "load_pretrained", "parse_name", "push_to_hub",
    "resolve_folder", "save_pretrained", "write_folder",
]

#: deprecated names -> (the module outside the hub, the object there, the warning's advice and category)
_DEPRECATED: dict[str, tuple[str, str, str, type[Warning]]] = {
    "render_model_card": ("simdist.model.model_card", "render_model_card",
                          "import it from simdist.model.model_card", FutureWarning),
    "push_folder": ("simdist.zoo.publish", "push_folder", "import it from simdist.zoo.publish", FutureWarning),
    "read_config": ("simdist.model.config", "WorldModelConfig.from_file", "use WorldModelConfig.from_file",
                    DeprecationWarning),
}
_lazy = lazy_getattr(__name__, _MODULE_OF, globals(), base="simdist")


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        import importlib
        import warnings

        module, path, advice, category = _DEPRECATED[name]
        warnings.warn(f"simdist.hub.{name} is deprecated; {advice}", category, stacklevel=2)
        value: Any = importlib.import_module(module)
        for attr in path.split("."):
            value = getattr(value, attr)
        return value
    return _lazy(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})
