"""The official Go2 architecture (``WorldModel.from_preset("go2")``) and its MLP-head ablation."""

from __future__ import annotations

from simdist.model.config import WorldModelConfig
from simdist.model.presets import preset


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
