"""The ``toy`` architecture of the toy-reach point mass."""

from __future__ import annotations

from simdist.model.config import WorldModelConfig
from simdist.model.presets import preset


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
