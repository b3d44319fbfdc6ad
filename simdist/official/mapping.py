"""The official Flax ``QuadrupedWorldModel`` → :class:`~simdist.WorldModel`: config and parameter names.

The official parameter tree (``nnx.state(model).to_pure_dict()``, keys joined with ``/``) maps one to one onto
``WorldModel.from_preset(<system name>)`` built with the checkpoint's hyperparameters:

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
from typing import Any

import numpy as np
import torch

from simdist.config import WorldModelConfig
from simdist.errors import InputError

__all__ = ["OfficialCheckpoint", "config_from_official", "state_dict_from_official", "IGNORED"]

#: Official state that holds no weights (the attention-dropout RNG counters and keys).
IGNORED = re.compile(r"(^|/)rngs/")
#: official scaler entry → simdist normaliser key
SCALER_KEYS = {"proprio_obs": "obs/proprio", "extero_obs": "obs/extero", "actions": "actions",
               "commands": "commands", "rewards": "rewards", "values": "values"}


@dataclasses.dataclass
class OfficialCheckpoint:
    """An official checkpoint in memory: ``arrays`` by ``/``-joined path, the resolved ``config``, the step."""

    arrays: dict[str, np.ndarray]
    config: dict[str, Any]
    step: int | None = None


# ------------------------------------------------------------------------------------------ config
def _get(cfg: Mapping[str, Any], path: str) -> Any:
    node: Any = cfg
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise InputError(f"model_config.yaml: missing key {path!r}")
        node = node[part]
    return node


def _require(cfg: Mapping[str, Any], path: str, allowed: Any) -> None:
    value = _get(cfg, path)
    if value != allowed:
        raise InputError(f"model_config.yaml: {path} = {value!r} has no simdist equivalent (supported: {allowed!r})")


def config_from_official(cfg: Mapping[str, Any], preset: str | None = None) -> WorldModelConfig:
    """The :class:`WorldModelConfig` of an official ``model_config.yaml`` (resolved Hydra config).

    ``preset`` (default: the config's ``system.name``) gives the task fields (task, robot, dt); the
    architecture comes from the checkpoint. Unsupported settings raise :class:`InputError` naming the key.
    """
    from simdist.presets import preset_config

    _require(cfg, "model.type", "quadruped_world_model")
    for path in ("model.encoder.action_layers", "model.embedding.future_acts_layers",
                 "model.embedding.future_cmds_layers", "model.embedding.reward_layers",
                 "model.embedding.value_layers", "model.reward.decoder.layers", "model.value.decoder.layers",
                 "model.policy.decoder.layers"):
        _require(cfg, path, 0)
    _require(cfg, "model.dynamics.attention.mask", "causal")
    _require(cfg, "model.policy.attention.mask", "causal")
    _require(cfg, "model.reward.attention.mask", None)
    _require(cfg, "model.value.attention.mask", None)
    cnn = _get(cfg, "model.encoder.extero_obs.height_cnn")
    _require(cfg, "model.encoder.extero_obs.height_cnn.kernel_size", 3)
    if list(cnn["strides"]) != [2] * len(cnn["features"]):
        raise InputError(f"model_config.yaml: model.encoder.extero_obs.height_cnn.strides = {cnn['strides']!r} "
                         "has no simdist equivalent (supported: 2 for every layer)")
    sizes = _get(cfg, "scaler_params_struct")
    scans = _get(cfg, "system.extero_obs.types")
    if len(scans) != 1:
        raise InputError(f"model_config.yaml: system.extero_obs.types has {len(scans)} entries (supported: 1)")
    cols, rows = (int(d) for d in scans[0]["dim"])  # IsaacLab grid (x points, y points)
    name = preset or str(_get(cfg, "system.name"))
    try:
        base = preset_config(name)
    except KeyError as err:
        raise InputError(f"model_config.yaml: system.name {name!r} is no simdist preset ({err.args[0]})") from None
    m = cfg["model"]
    attn_dropout = float(_get(cfg, "model.dropout.attention"))

    def block(key: str) -> dict[str, Any]:
        a = m[key]["attention"]
        return {"num_layers": int(a["layers"]), "num_heads": int(a["heads"]),
                "mlp_factor": int(a["mlp_hidden_size_factor"]), "attn_dropout": attn_dropout}

    enc = m["encoder"]
    encoder = {
        "grid": [rows, cols], "hidden_factor": int(enc["mlp_hidden_size_factor"]),
        "proprio_layers": int(enc["proprio_obs_layers"]), "latent_layers": int(enc["latent_layers"]),
        "features": [int(f) for f in cnn["features"]], "projection": [int(p) for p in cnn["projection_hidden_dims"]],
    }
    return base.replace(
        obs_spec={"proprio": [int(sizes["proprio_obs"])], "extero": [int(sizes["extero_obs"])]},
        action_dim=int(sizes["actions"]), command_dim=int(sizes["commands"]),
        history=int(_get(cfg, "model.dataset.history_length")),
        horizon=int(_get(cfg, "model.dataset.prediction_length")),
        latent_dim=int(m["latent_dim"]),
        encoder={"name": "quadruped", "kwargs": encoder},
        dynamics={"name": "transformer", "kwargs": block("dynamics")},
        reward_head={"name": "transformer", "kwargs": block("reward")},
        value_head={"name": "transformer", "kwargs": block("value")},
        policy_head={"name": "transformer", "kwargs": block("policy")},
        value_offset=1,  # the official value label is one step ahead of its latent (SIMDIST 11.1)
    )


# ------------------------------------------------------------------------------------------ tensors
def _linear(x: np.ndarray) -> np.ndarray:
    return x.T


def _qkv_kernel(x: np.ndarray) -> np.ndarray:  # (in, heads, head_dim) → (heads·head_dim, in)
    return x.reshape(x.shape[0], -1).T


def _out_kernel(x: np.ndarray) -> np.ndarray:  # (heads, head_dim, out) → (out, heads·head_dim)
    return x.reshape(-1, x.shape[-1]).T


def _flat(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1)


def _conv(x: np.ndarray) -> np.ndarray:  # HWIO → OIHW
    return x.transpose(3, 2, 0, 1)


def _same(x: np.ndarray) -> np.ndarray:
    return x


#: (path pattern, simdist name from the match, layout change; None for attention, whose layout the match decides)
_Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str], Callable[[np.ndarray], np.ndarray] | None]
_MLP_INDEX = r"(?:layers/(\d+)|(output_layer))"
_LN = {"scale": "weight", "bias": "bias"}


def _mlp_index(m: re.Match[str], group: int, hidden: int) -> int:
    """Sequential index of the official MLP's ``layers/i`` (2i) or ``output_layer`` (2·hidden)."""
    return 2 * int(m.group(group)) if m.group(group) is not None else 2 * hidden


def _rules(config: WorldModelConfig) -> list[_Rule]:
    enc = dict(config.encoder.kwargs)
    n_proprio, n_latent = int(enc["proprio_layers"]), int(enc["latent_layers"])
    n_proj, n_conv = len(enc["projection"]), len(enc["features"]) - 1
    lin = {"kernel": ("weight", _linear), "bias": ("bias", _same)}
    attn_names = {"query": "q", "key": "k", "value": "v", "out": "out"}

    rules: list[_Rule] = []

    def add(pattern: str, target: Callable[[re.Match[str]], str],
            fn: Callable[[np.ndarray], np.ndarray] | None) -> None:
        rules.append((re.compile(pattern), target, fn))

    def mlp(prefix: str, dest: str, hidden: int) -> None:
        for part, (name, fn) in lin.items():
            add(rf"{prefix}/{_MLP_INDEX}/{part}",
                lambda m, d=dest, h=hidden, n=name: f"{d}.{_mlp_index(m, 1, h)}.{n}", fn)  # type: ignore[misc]  # mypy cannot infer a lambda with defaults

    def single(prefix: str, dest: str) -> None:
        for part, (name, fn) in lin.items():
            add(rf"{prefix}/{part}", lambda m, d=dest, n=name: f"{d}.{n}", fn)  # type: ignore[misc]  # mypy cannot infer a lambda with defaults

    mlp("encoder/proprio_obs_proj", "encoder.proprio_proj", n_proprio)
    mlp("encoder/latent_mlp", "encoder.latent_mlp", n_latent)
    mlp("encoder/hm_enc/hm_proj", "encoder.heightmap.proj", n_proj)
    single("encoder/act_proj/output_layer", "encoder.act_proj")
    for part, name in (("kernel", "weight"), ("bias", "bias")):
        add(rf"encoder/hm_enc/hm_cnn/cnn/{_MLP_INDEX}/{part}",
            lambda m, n=name: f"encoder.heightmap.convs.{_mlp_index(m, 1, n_conv) // 2}.{n}",  # type: ignore[misc]  # mypy cannot infer a lambda with defaults
            _conv if part == "kernel" else _same)
    add(r"encoder/hm_enc/h_l_conv_enc", lambda m: "encoder.heightmap.pos_h", _same)
    add(r"encoder/hm_enc/h_w_conv_enc", lambda m: "encoder.heightmap.pos_w", _same)
    add(r"encoder/(temporal_enc|type_enc)", lambda m: f"encoder.{m.group(1)}", _same)
    for official, ours in (("fut_acts_embed", "action_embedding"), ("fut_cmds_embed", "command_embedding"),
                           ("reward_emb", "reward.embed"), ("value_emb", "value.embed")):
        single(f"{official}/enc/output_layer", f"{ours}.proj")
        add(rf"{official}/pos_emb", lambda m, o=ours: f"{o}.pos", _same)  # type: ignore[misc]  # mypy cannot infer a lambda with defaults
    single("policy_dec/output_layer", "policy.out")
    single("reward_dec/output_layer", "reward.decoder")
    single("value_dec/output_layer", "value.decoder")
    # transformer blocks: decoders (self, cross) and encoders (one attention)
    blocks = {"dynamics": ("dynamics.decoder", {"attention_1": "self_attn", "attention_2": "cross_attn"}),
              "policy": ("policy.decoder", {"attention_1": "self_attn", "attention_2": "cross_attn"}),
              "reward": ("reward.encoder", {"attention": "attn"}),
              "value": ("value.encoder", {"attention": "attn"})}
    for official, (ours, attns) in blocks.items():
        for src, dst in attns.items():
            add(rf"{official}/layers/(\d+)/{src}/(?P<proj>query|key|value|out)/(?P<part>kernel|bias)",
                lambda m, o=ours, d=dst: f"{o}.layers.{m.group(1)}.{d}.{attn_names[m.group('proj')]}."  # type: ignore[misc]  # mypy cannot infer a lambda with defaults
                f"{lin[m.group('part')][0]}", None)  # the layout depends on the match: see _map_one
        for part, (name, fn) in lin.items():
            add(rf"{official}/layers/(\d+)/dense_proj/{_MLP_INDEX}/{part}",
                lambda m, o=ours, n=name: f"{o}.layers.{m.group(1)}.mlp.{_mlp_index(m, 2, 1)}.{n}", fn)  # type: ignore[misc]  # mypy cannot infer a lambda with defaults
        add(rf"{official}/layers/(\d+)/layernorm_(\d)/(scale|bias)",
            lambda m, o=ours: f"{o}.layers.{m.group(1)}.norm{m.group(2)}.{_LN[m.group(3)]}", _same)  # type: ignore[misc]  # mypy cannot infer a lambda with defaults
    for src, dst in SCALER_KEYS.items():
        buffer = dst.replace("/", "__")
        add(rf"scaler/scaler_params/{src}/(mean|std)", lambda m, b=buffer: f"normalizer.{b}_{m.group(1)}", _flat)  # type: ignore[misc]  # mypy cannot infer a lambda with defaults
    return rules


def state_dict_from_official(arrays: Mapping[str, np.ndarray], config: WorldModelConfig,
                             expected: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Map official ``arrays`` (``/``-joined paths) to a state dict with exactly the keys and shapes of
    ``expected`` (a target model's ``state_dict()``); raises :class:`InputError` naming the tensor otherwise."""
    rules = _rules(config)
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


def _map_one(path: str, value: np.ndarray, rules: list[_Rule]) -> tuple[str, np.ndarray]:
    for pattern, target, fn in rules:
        m = pattern.fullmatch(path)
        if m is None:
            continue
        if fn is None:  # attention projection
            if m.group("part") == "bias":
                return target(m), _flat(value)
            return target(m), _out_kernel(value) if m.group("proj") == "out" else _qkv_kernel(value)
        return target(m), fn(value)
    raise InputError(f"checkpoint tensor {path!r} (shape {tuple(value.shape)}) is not part of the official "
                     "architecture simdist maps")
