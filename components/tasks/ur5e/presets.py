"""The paper's manipulation world models (``WorldModel.from_preset("ur5e-peg")`` and friends).

SIMDIST.md 13 §1.5: z = 64, H = T = 5 at 5 Hz, the quadruped's sequence design (a two-layer causal
transformer for the dynamics, one-layer transformer reward and value heads, a four-layer policy head).
The default encoder reads state (``proprio`` 29 + ``object`` 27, the leg 29); the ``-image`` variants read
the three cameras through one timm ResNet-18 each, concatenated with the six joint angles, through an MLP
to z, as the paper does.
"""

from __future__ import annotations

from simdist.model.config import WorldModelConfig
from simdist.model.presets import preset

#: The seven action dimensions (relative TCP pose delta, gripper) lie in [-1, 1].
_LOW, _HIGH = [-1.0] * 7, [1.0] * 7
CAMERAS = ("front", "side", "wrist")


def _manipulation(task: str, object_dim: int) -> WorldModelConfig:
    return WorldModelConfig(
        obs_spec={"proprio": [29], "object": [object_dim]},
        action_dim=7,
        command_dim=0,
        history=5,
        horizon=5,
        latent_dim=64,
        dt=0.2,
        encoder={"name": "mlp", "kwargs": {"hidden": [256, 256]}},
        dynamics={"name": "transformer", "kwargs": {"num_layers": 2, "num_heads": 8}},
        reward_head={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 4}},
        value_head={"name": "transformer", "kwargs": {"num_layers": 1, "num_heads": 4}},
        policy_head={"name": "transformer", "kwargs": {"num_layers": 4, "num_heads": 8}},
        action_low=list(_LOW),
        action_high=list(_HIGH),
        task=task,
        robot="universal_robots_ur5e",
    )


def _image(cfg: WorldModelConfig, image_size: int, pretrained_file: str | None) -> WorldModelConfig:
    """Images as the env and :mod:`.images` give them: (S, S, 3) uint8 pixels, which the encoder scales and
    ImageNet-normalises itself (``raw_pixels``; the model's normaliser leaves them alone)."""
    spec = {f"image_{c}": [image_size, image_size, 3] for c in CAMERAS}
    return cfg.replace(
        obs_spec={"joints": [6], **spec},
        encoder={"name": "timm_image", "kwargs": {
            "backbone": "resnet18", "image_keys": [f"image_{c}" for c in CAMERAS], "proprio_key": "joints",
            "separate_backbones": True, "head_hidden": [256], "raw_pixels": True,
            "pretrained_file": pretrained_file}},
    )


@preset("ur5e-peg")
def ur5e_peg() -> WorldModelConfig:
    """Peg insertion, state input: proprio 29 (joints, velocities, TCP pose, gripper, last action) and
    object 27 (peg and hole in the TCP frame, the peg in the hole frame)."""
    return _manipulation("ur5e-peg", 27)


@preset("ur5e-table-leg")
def ur5e_table_leg() -> WorldModelConfig:
    """Table leg, state input: as the peg, plus the thread's two extras in ``object`` (29)."""
    return _manipulation("ur5e-table-leg", 29)


@preset("ur5e-peg-image")
def ur5e_peg_image(image_size: int = 64, pretrained_file: str | None = None) -> WorldModelConfig:
    """Peg insertion from three cameras (64 px here, 224 in the paper) and the six joint angles."""
    return _image(ur5e_peg(), image_size, pretrained_file)


@preset("ur5e-table-leg-image")
def ur5e_table_leg_image(image_size: int = 64, pretrained_file: str | None = None) -> WorldModelConfig:
    """The table leg from three cameras and the six joint angles."""
    return _image(ur5e_table_leg(), image_size, pretrained_file)
