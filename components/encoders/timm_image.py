"""``encoder/timm_image``: any timm backbone on the current camera image, plus optional proprioception."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from simdist.nn import init_linear_, mlp
from simdist.registry import register

from .history import InterleavedHistoryEncoder


@register("encoder", "timm_image")
class TimmImageEncoder(InterleavedHistoryEncoder):
    """z = Linear([backbone(image_t), proprio_mlp(o_p)]). Only the latest image is encoded.

    ``pretrained_file`` loads backbone weights from a local file (safetensors or torch); nothing is
    downloaded at run time. ``image_keys`` are (C, H, W) groups; several cameras share the backbone.
    """

    def __init__(
        self,
        obs_spec: dict[str, Sequence[int]],
        action_dim: int,
        latent_dim: int = 64,
        history: int = 25,
        backbone: str = "resnet18",
        image_keys: Sequence[str] = ("image",),
        proprio_key: str | None = None,
        pretrained_file: str | None = None,
        freeze_backbone: bool = False,
    ) -> None:
        super().__init__(latent_dim, action_dim, history)
        try:
            import timm  # heavy import, only when this encoder is used
        except ImportError as err:
            raise ImportError("encoder 'timm_image' needs timm: pip install 'simdist[vision]'") from err

        kwargs = {"pretrained_cfg_overlay": {"file": pretrained_file}} if pretrained_file else {}
        self.backbone = timm.create_model(backbone, pretrained=bool(pretrained_file), num_classes=0, **kwargs)
        if freeze_backbone:
            self.backbone.requires_grad_(False)
        self.image_keys, self.proprio_key = list(image_keys), proprio_key
        feat = self.backbone.num_features * len(self.image_keys)
        self.proprio = mlp(obs_spec[proprio_key][0], [2 * latent_dim], latent_dim) if proprio_key else None
        self.head = nn.Linear(feat + (latent_dim if proprio_key else 0), latent_dim)
        init_linear_(self.head)

    def encode_latent(self, obs: dict[str, Tensor]) -> Tensor:
        feats = []
        for key in self.image_keys:
            img = obs[key]
            feats.append(self.backbone(img.reshape(-1, *img.shape[-3:])).reshape(*img.shape[:-3], -1))
        if self.proprio is not None:
            feats.append(self.proprio(obs[self.proprio_key]))
        return self.head(torch.cat(feats, dim=-1))

    def obs_tokens(self, obs_hist: dict[str, Tensor]) -> Tensor | None:
        return self.proprio(obs_hist[self.proprio_key]) if self.proprio is not None else None
