"""The official ``quadruped_world_model`` (the SimDist authors' Go2 model) → ``WorldModel.from_preset("go2")``.

Registered as ``("official_model", "quadruped_world_model")``; ``simdist convert official`` finds it by the
checkpoint's ``model.type``. The generic layout rules are in :mod:`simdist.official.mapping`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from simdist.errors import InputError
from simdist.model.config import WorldModelConfig
from simdist.official.mapping import MLP_INDEX, Rule, conv, get_key, linear, mlp_index, require_key, same
from simdist.registry import register

__all__ = ["QuadrupedWorldModel"]

_LN = {"scale": "weight", "bias": "bias"}


@register("official_model", "quadruped_world_model")
class QuadrupedWorldModel:
    """The official Flax ``QuadrupedWorldModel``: its config keys and parameter names."""

    def config(self, cfg: Mapping[str, Any], preset: str | None) -> WorldModelConfig:
        """The :class:`WorldModelConfig` of an official ``model_config.yaml`` (resolved Hydra config).

        ``preset`` (default: the config's ``system.name``) gives the task fields (task, robot, dt); the
        architecture comes from the checkpoint. Unsupported settings raise :class:`InputError` naming the key.
        """
        from simdist.model.presets import preset_config

        for path in ("model.encoder.action_layers", "model.embedding.future_acts_layers",
                     "model.embedding.future_cmds_layers", "model.embedding.reward_layers",
                     "model.embedding.value_layers", "model.reward.decoder.layers", "model.value.decoder.layers",
                     "model.policy.decoder.layers"):
            require_key(cfg, path, 0)
        require_key(cfg, "model.dynamics.attention.mask", "causal")
        require_key(cfg, "model.policy.attention.mask", "causal")
        require_key(cfg, "model.reward.attention.mask", None)
        require_key(cfg, "model.value.attention.mask", None)
        cnn = get_key(cfg, "model.encoder.extero_obs.height_cnn")
        require_key(cfg, "model.encoder.extero_obs.height_cnn.kernel_size", 3)
        if list(cnn["strides"]) != [2] * len(cnn["features"]):
            raise InputError(f"model_config.yaml: model.encoder.extero_obs.height_cnn.strides = {cnn['strides']!r} "
                             "has no simdist equivalent (supported: 2 for every layer)")
        sizes = get_key(cfg, "scaler_params_struct")
        scans = get_key(cfg, "system.extero_obs.types")
        if len(scans) != 1:
            raise InputError(f"model_config.yaml: system.extero_obs.types has {len(scans)} entries (supported: 1)")
        cols, rows = (int(d) for d in scans[0]["dim"])  # IsaacLab grid (x points, y points)
        name = preset or str(get_key(cfg, "system.name"))
        try:
            base = preset_config(name)
        except KeyError as err:
            raise InputError(f"model_config.yaml: system.name {name!r} is no simdist preset ({err.args[0]})") from None
        m = cfg["model"]
        attn_dropout = float(get_key(cfg, "model.dropout.attention"))

        def block(key: str) -> dict[str, Any]:
            a = m[key]["attention"]
            return {"num_layers": int(a["layers"]), "num_heads": int(a["heads"]),
                    "mlp_factor": int(a["mlp_hidden_size_factor"]), "attn_dropout": attn_dropout}

        enc = m["encoder"]
        encoder = {
            "grid": [rows, cols], "hidden_factor": int(enc["mlp_hidden_size_factor"]),
            "proprio_layers": int(enc["proprio_obs_layers"]), "latent_layers": int(enc["latent_layers"]),
            "features": [int(f) for f in cnn["features"]],
            "projection": [int(p) for p in cnn["projection_hidden_dims"]],
        }
        return base.replace(
            obs_spec={"proprio": [int(sizes["proprio_obs"])], "extero": [int(sizes["extero_obs"])]},
            action_dim=int(sizes["actions"]), command_dim=int(sizes["commands"]),
            history=int(get_key(cfg, "model.dataset.history_length")),
            horizon=int(get_key(cfg, "model.dataset.prediction_length")),
            latent_dim=int(m["latent_dim"]),
            encoder={"name": "quadruped", "kwargs": encoder},
            dynamics={"name": "transformer", "kwargs": block("dynamics")},
            reward_head={"name": "transformer", "kwargs": block("reward")},
            value_head={"name": "transformer", "kwargs": block("value")},
            policy_head={"name": "transformer", "kwargs": block("policy")},
            value_offset=1,  # the official value label is one step ahead of its latent (SIMDIST 11.1)
        )

    def rules(self, config: WorldModelConfig) -> list[Rule]:
        """The tensor rules for the quadruped model built from ``config`` (the scaler's are shared)."""
        enc = dict(config.encoder.kwargs)
        n_proprio, n_latent = int(enc["proprio_layers"]), int(enc["latent_layers"])
        n_proj, n_conv = len(enc["projection"]), len(enc["features"]) - 1
        lin = {"kernel": ("weight", linear), "bias": ("bias", same)}
        attn_names = {"query": "q", "key": "k", "value": "v", "out": "out"}

        rules: list[Rule] = []

        def add(pattern: str, target: Callable[[re.Match[str]], str],
                fn: Callable[[np.ndarray], np.ndarray] | None) -> None:
            rules.append((re.compile(pattern), target, fn))

        def mlp(prefix: str, dest: str, hidden: int) -> None:
            for part, (name, fn) in lin.items():
                add(rf"{prefix}/{MLP_INDEX}/{part}",
                    lambda m, d=dest, h=hidden, n=name: f"{d}.{mlp_index(m, 1, h)}.{n}", fn)  # type: ignore[misc]  # mypy cannot infer a lambda with defaults

        def single(prefix: str, dest: str) -> None:
            for part, (name, fn) in lin.items():
                add(rf"{prefix}/{part}", lambda m, d=dest, n=name: f"{d}.{n}", fn)  # type: ignore[misc]  # mypy cannot infer a lambda with defaults

        mlp("encoder/proprio_obs_proj", "encoder.proprio_proj", n_proprio)
        mlp("encoder/latent_mlp", "encoder.latent_mlp", n_latent)
        mlp("encoder/hm_enc/hm_proj", "encoder.heightmap.proj", n_proj)
        single("encoder/act_proj/output_layer", "encoder.act_proj")
        for part, name in (("kernel", "weight"), ("bias", "bias")):
            add(rf"encoder/hm_enc/hm_cnn/cnn/{MLP_INDEX}/{part}",
                lambda m, n=name: f"encoder.heightmap.convs.{mlp_index(m, 1, n_conv) // 2}.{n}",  # type: ignore[misc]  # mypy cannot infer a lambda with defaults
                conv if part == "kernel" else same)
        add(r"encoder/hm_enc/h_l_conv_enc", lambda m: "encoder.heightmap.pos_h", same)
        add(r"encoder/hm_enc/h_w_conv_enc", lambda m: "encoder.heightmap.pos_w", same)
        add(r"encoder/(temporal_enc|type_enc)", lambda m: f"encoder.{m.group(1)}", same)
        for official, ours in (("fut_acts_embed", "action_embedding"), ("fut_cmds_embed", "command_embedding"),
                               ("reward_emb", "reward.embed"), ("value_emb", "value.embed")):
            single(f"{official}/enc/output_layer", f"{ours}.proj")
            add(rf"{official}/pos_emb", lambda m, o=ours: f"{o}.pos", same)  # type: ignore[misc]  # mypy cannot infer a lambda with defaults
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
                add(rf"{official}/layers/(\d+)/dense_proj/{MLP_INDEX}/{part}",
                    lambda m, o=ours, n=name: f"{o}.layers.{m.group(1)}.mlp.{mlp_index(m, 2, 1)}.{n}", fn)  # type: ignore[misc]  # mypy cannot infer a lambda with defaults
            add(rf"{official}/layers/(\d+)/layernorm_(\d)/(scale|bias)",
                lambda m, o=ours: f"{o}.layers.{m.group(1)}.norm{m.group(2)}.{_LN[m.group(3)]}", same)  # type: ignore[misc]  # mypy cannot infer a lambda with defaults
        return rules
