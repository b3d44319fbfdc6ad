"""Named architectures (``WorldModel.from_preset``): ``go2`` is the official quadruped model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simdist.config import WorldModelConfig

_PRESETS: dict[str, Callable[..., WorldModelConfig]] = {}


def preset(name: str) -> Callable[[Callable[..., WorldModelConfig]], Callable[..., WorldModelConfig]]:
    def deco(fn: Callable[..., WorldModelConfig]) -> Callable[..., WorldModelConfig]:
        _PRESETS[name] = fn
        return fn

    return deco


def preset_config(name: str, **overrides: Any) -> WorldModelConfig:
    if name not in _PRESETS:
        raise KeyError(f"unknown preset {name!r}; known presets: {sorted(_PRESETS)}")
    cfg = _PRESETS[name]()
    return cfg.replace(**overrides) if overrides else cfg


def list_presets() -> list[str]:
    return sorted(_PRESETS)


@preset("go2")
def go2() -> WorldModelConfig:
    """SIMDIST.md section 2: 35-D proprio, 21×15 height scan, 12 actions, 3-D command, H = T = 25."""
    return WorldModelConfig(
        obs_spec={"proprio": [35], "extero": [315]},
        action_dim=12,
        command_dim=3,
        history=25,
        horizon=25,
        latent_dim=64,
        dt=0.02,
        encoder={"name": "quadruped"},
        dynamics={"name": "transformer", "kwargs": {"num_layers": 2, "num_heads": 8}},
        reward_head={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 4}},
        value_head={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 4}},
        policy_head={"name": "transformer", "kwargs": {"num_layers": 4, "num_heads": 8}},
        task="go2",
        robot="unitree_go2",
    )


@preset("go2-mlp")
def go2_mlp() -> WorldModelConfig:
    """The Go2 model with the autoregressive MLP dynamics and per-step MLP heads (ablations)."""
    return go2().replace(
        dynamics={"name": "mlp"}, reward_head={"name": "mlp"}, value_head={"name": "mlp"}, task="go2",
    )


@preset("toy")
def toy() -> WorldModelConfig:
    """The ``toy-reach`` point mass: 4-D state, 2 actions in [-1, 1], no command; tiny, CPU-trainable.

    Its dynamics is the autoregressive ``mlp``: on 40k transitions it reaches a held-out consistency
    loss of ~0.007, where the one-layer ``transformer`` (whose output LayerNorm the encoder must learn
    to match, SIMDIST.md 11.1h) is still at ~0.5; the transformer is the Go2 preset's dynamics.
    """
    one = {"num_layers": 1, "num_heads": 4}
    return WorldModelConfig(
        obs_spec={"state": [4]},
        action_dim=2,
        command_dim=0,
        history=8,
        horizon=8,
        latent_dim=32,
        dt=0.1,
        encoder={"name": "mlp"},
        dynamics={"name": "mlp", "kwargs": {"hidden": [128, 128]}},
        reward_head={"name": "transformer", "kwargs": dict(one)},
        value_head={"name": "transformer", "kwargs": dict(one)},
        policy_head={"name": "transformer", "kwargs": dict(one)},
        action_low=[-1.0, -1.0],
        action_high=[1.0, 1.0],
        task="toy-reach",
        robot="pointmass",
    )
