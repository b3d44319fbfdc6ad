"""Official Flax/orbax world models → :class:`~simdist.WorldModel`: the generic part of the mapping.

An official checkpoint's ``model_config.yaml`` names its architecture (``model.type``). Each architecture has
an :class:`OfficialArchitecture`, registered as component kind ``official_model`` under that name by the task
whose model it is, that gives the :class:`WorldModelConfig` and the tensor rules. This module holds what every
architecture shares:

* Linear ``kernel`` (in, out) → ``weight`` (out, in); attention q/k/v kernels (in, heads, head_dim) and the
  output kernel (heads, head_dim, out) are flattened over the heads first;
* LayerNorm ``scale`` → ``weight``; conv kernels HWIO → OIHW;
* the official MLP's ``layers/i`` and ``output_layer`` → ``Sequential`` indices 0, 2, 4 (GELU between);
* the scaler statistics → the normaliser's buffers (marked fitted).

Anything else refuses with :class:`~simdist.errors.InputError` naming the tensor or config key: a tensor
nothing maps, a parameter nothing fills, a shape that differs, a hyperparameter simdist has no equivalent for.
The dropout RNG state (``.../rngs/...``) is the only official state left out, as it holds no weights.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np
import torch

from simdist.errors import InputError
from simdist.model.config import WorldModelConfig
from simdist.registry import RegistryError, get

__all__ = ["OfficialArchitecture", "OfficialCheckpoint", "Rule", "config_from_official", "state_dict_from_official",
           "IGNORED", "SCALER_KEYS", "get_key", "require_key", "linear", "qkv_kernel", "out_kernel", "flat", "conv",
           "same", "mlp_index", "MLP_INDEX"]

#: Official state that holds no weights (the attention-dropout RNG counters and keys).
IGNORED = re.compile(r"(^|/)rngs/")
#: official scaler entry → simdist normaliser key
SCALER_KEYS = {"proprio_obs": "obs/proprio", "extero_obs": "obs/extero", "actions": "actions",
               "commands": "commands", "rewards": "rewards", "values": "values"}
#: (path pattern, simdist name from the match, layout change; None for an attention projection, whose layout
#: the match decides: groups ``proj`` (query|key|value|out) and ``part`` (kernel|bias))
Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str], Callable[[np.ndarray], np.ndarray] | None]
#: an official MLP layer: ``layers/i`` or ``output_layer``
MLP_INDEX = r"(?:layers/(\d+)|(output_layer))"


@dataclasses.dataclass
class OfficialCheckpoint:
    """An official checkpoint in memory: ``arrays`` by ``/``-joined path, the resolved ``config``, the step."""

    arrays: dict[str, np.ndarray]
    config: dict[str, Any]
    step: int | None = None

    @property
    def model_type(self) -> str:
        """The architecture the checkpoint names (``model.type``)."""
        return str(get_key(self.config, "model.type"))


class OfficialArchitecture(Protocol):
    """One official architecture: its simdist config and the rules that rename and re-lay its tensors."""

    def config(self, cfg: Mapping[str, Any], preset: str | None) -> WorldModelConfig:
        """The :class:`WorldModelConfig` of a resolved ``model_config.yaml``; refuses unsupported keys."""
        ...

    def rules(self, config: WorldModelConfig) -> list[Rule]:
        """The tensor rules for a model built from ``config``."""
        ...


# ------------------------------------------------------------------------------------------ config
def get_key(cfg: Mapping[str, Any], path: str) -> Any:
    """``cfg``'s value at the dotted ``path``; :class:`InputError` naming the key when it is missing."""
    node: Any = cfg
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise InputError(f"model_config.yaml: missing key {path!r}")
        node = node[part]
    return node


def require_key(cfg: Mapping[str, Any], path: str, allowed: Any) -> None:
    """Refuse, naming the key, a setting simdist has no equivalent for."""
    value = get_key(cfg, path)
    if value != allowed:
        raise InputError(f"model_config.yaml: {path} = {value!r} has no simdist equivalent (supported: {allowed!r})")


def architecture(model_type: str) -> OfficialArchitecture:
    """The registered :class:`OfficialArchitecture` for ``model_type``; :class:`InputError` naming it otherwise."""
    try:
        return get("official_model", model_type)()
    except RegistryError as err:
        raise InputError(f"model_config.yaml: model.type = {model_type!r} has no simdist equivalent ({err})") from None


def config_from_official(cfg: Mapping[str, Any], preset: str | None = None) -> WorldModelConfig:
    """The :class:`WorldModelConfig` of an official ``model_config.yaml`` (resolved Hydra config).

    ``preset`` (default: the config's ``system.name``) gives the task fields (task, robot, dt); the
    architecture comes from the checkpoint. Unsupported settings raise :class:`InputError` naming the key.
    """
    return architecture(str(get_key(cfg, "model.type"))).config(cfg, preset)


# ------------------------------------------------------------------------------------------ tensors
def linear(x: np.ndarray) -> np.ndarray:
    """Linear kernel (in, out) → weight (out, in)."""
    return x.T


def qkv_kernel(x: np.ndarray) -> np.ndarray:
    """Attention q/k/v kernel (in, heads, head_dim) → (heads·head_dim, in)."""
    return x.reshape(x.shape[0], -1).T


def out_kernel(x: np.ndarray) -> np.ndarray:
    """Attention output kernel (heads, head_dim, out) → (out, heads·head_dim)."""
    return x.reshape(-1, x.shape[-1]).T


def flat(x: np.ndarray) -> np.ndarray:
    """Any array → 1-D."""
    return x.reshape(-1)


def conv(x: np.ndarray) -> np.ndarray:
    """Conv kernel HWIO → OIHW."""
    return x.transpose(3, 2, 0, 1)


def same(x: np.ndarray) -> np.ndarray:
    """No layout change."""
    return x


def mlp_index(m: re.Match[str], group: int, hidden: int) -> int:
    """Sequential index of the official MLP's ``layers/i`` (2i) or ``output_layer`` (2·hidden)."""
    return 2 * int(m.group(group)) if m.group(group) is not None else 2 * hidden


def scaler_rules() -> list[Rule]:
    """The scaler statistics → the normaliser's buffers."""
    rules: list[Rule] = []
    for src, dst in SCALER_KEYS.items():
        buffer = dst.replace("/", "__")
        rules.append((re.compile(rf"scaler/scaler_params/{src}/(mean|std)"),
                      lambda m, b=buffer: f"normalizer.{b}_{m.group(1)}", flat))  # type: ignore[misc]  # mypy cannot infer a lambda with defaults
    return rules


def state_dict_from_official(arrays: Mapping[str, np.ndarray], config: WorldModelConfig,
                             expected: Mapping[str, torch.Tensor], model_type: str) -> dict[str, torch.Tensor]:
    """Map official ``arrays`` (``/``-joined paths) to a state dict with exactly the keys and shapes of
    ``expected`` (a target model's ``state_dict()``) by the rules of the ``model_type`` architecture; raises
    :class:`InputError` naming the tensor otherwise."""
    rules = architecture(model_type).rules(config) + scaler_rules()
    out: dict[str, torch.Tensor] = {}
    sources: dict[str, str] = {}
    for path in sorted(arrays):
        if IGNORED.search(path):
            continue
        target, value = _map_one(path, np.asarray(arrays[path]), rules)
        if target not in expected:
            raise InputError(f"checkpoint tensor {path!r} maps to {target!r}, which the simdist model does not have")
        if target in sources:
            raise InputError(f"checkpoint tensors {sources[target]!r} and {path!r} both map to {target!r}")
        want = tuple(expected[target].shape)
        if tuple(value.shape) != want:
            raise InputError(f"checkpoint tensor {path!r} has shape {tuple(np.shape(arrays[path]))}; mapped to "
                             f"{target!r} it is {tuple(value.shape)}, the simdist model expects {want}")
        out[target] = torch.as_tensor(np.ascontiguousarray(value), dtype=expected[target].dtype)
        sources[target] = path
    out["normalizer.fitted"] = torch.ones((), dtype=torch.bool)
    missing = [k for k in expected if k not in out]
    if missing:
        raise InputError(f"the checkpoint has no tensor for simdist parameter {missing[0]!r}"
                         + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    return out


def _map_one(path: str, value: np.ndarray, rules: list[Rule]) -> tuple[str, np.ndarray]:
    for pattern, target, fn in rules:
        m = pattern.fullmatch(path)
        if m is None:
            continue
        if fn is None:  # attention projection
            if m.group("part") == "bias":
                return target(m), flat(value)
            return target(m), out_kernel(value) if m.group("proj") == "out" else qkv_kernel(value)
        return target(m), fn(value)
    raise InputError(f"checkpoint tensor {path!r} (shape {tuple(value.shape)}) is not part of the official "
                     "architecture simdist maps")
