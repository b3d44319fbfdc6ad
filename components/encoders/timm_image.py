"""``encoder/timm_image``: timm backbones on the current camera images, plus optional proprioception.

Image layout and values. Each image group's layout follows its ``obs_spec`` shape: ``(H, W, C)`` with C in
{1, 3} is channels-last (the UR5e env's and renderer's ``image_<cam>`` arrays), anything else ``(C, H, W)``;
channels-last input is permuted to ``(C, H, W)`` here. With ``raw_pixels`` the groups arrive as pixel values
in [0, 255] (uint8, or float as the data pipeline and the planner's history hold them): the world model's
normaliser leaves them alone (:attr:`TimmImageEncoder.raw_obs_keys`) and the encoder scales them to [0, 1]
and applies the ImageNet mean/std, as the pretrained backbones expect. Without it (the default, the old
behaviour) the world model standardises the images with the dataset's per-pixel statistics and the backbone
sees those values unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from simdist.model.nn import init_linear_, mlp
from simdist.registry import register

from .history import InterleavedHistoryEncoder

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
RANDOM_INIT = "random init (no pretrained file given)"


def channels_last(shape: Sequence[int]) -> bool:
    """Whether an image group of per-step ``shape`` is (H, W, C): three dims, the last 1 or 3, the first not."""
    return len(shape) == 3 and shape[-1] in (1, 3) and shape[0] not in (1, 3)


def file_weights_source(path: str | Path) -> str:
    """The card's note for backbone weights read from ``path``: its file name and a sha256 prefix."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return f"pretrained (ImageNet) weights from the local file {Path(path).name} (sha256 {digest.hexdigest()[:12]})"


def _create_backbone(timm: Any, name: str, pretrained_file: str | None) -> nn.Module:
    """A headless timm model; ``pretrained_file`` (checked to exist) loads its weights, nothing is downloaded."""
    if not pretrained_file:
        return timm.create_model(name, pretrained=False, num_classes=0)
    try:
        return timm.create_model(name, pretrained=True, num_classes=0,
                                 pretrained_cfg_overlay={"file": str(pretrained_file)})
    except RuntimeError as err:  # a state dict of another architecture
        raise ValueError(f"encoder 'timm_image': pretrained_file {str(pretrained_file)!r} does not fit backbone "
                         f"{name!r}: {err}") from err


@register("encoder", "timm_image")
class TimmImageEncoder(InterleavedHistoryEncoder):
    """z = head([backbone_k(image_k) for each camera k, proprio_mlp(o_p)]). Only the latest images are encoded;
    the history tokens carry the proprioception (``proprio_key``) and the actions.

    ``separate_backbones``: one backbone per image key (the paper's manipulation encoder: a ResNet-18 per
    camera); else the cameras share one (``self.backbone``). ``head_hidden``: hidden widths of an MLP head
    (:func:`simdist.model.nn.mlp`, GELU); empty: one Linear (the old head). ``pretrained_file`` loads every backbone
    from a local file (safetensors or torch state dict; nothing is downloaded); without one the backbones are
    randomly initialised. :attr:`weights_source` says which (the model card shows it; ``save_pretrained``
    stores it as ``weights_source`` in place of the local path, the weights being in ``model.safetensors``).
    ``raw_pixels``: see the module docstring.
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
        separate_backbones: bool = False,
        head_hidden: Sequence[int] = (),
        raw_pixels: bool = False,
        weights_source: str | None = None,
    ) -> None:
        super().__init__(latent_dim, action_dim, history)
        try:
            import timm  # heavy import, only when this encoder is used
        except ImportError as err:
            raise ImportError("encoder 'timm_image' needs timm: pip install 'simdist[vision]'") from err
        self.image_keys, self.proprio_key = list(image_keys), proprio_key
        self.channels_last = {k: channels_last(obs_spec[k]) for k in self._check_keys(obs_spec, raw_pixels)}
        self.separate_backbones, self.raw_pixels = separate_backbones, raw_pixels
        #: groups the world model passes through unnormalised (raw pixel values)
        self.raw_obs_keys = tuple(self.image_keys) if raw_pixels else ()
        self.weights_source = self._weights_source(pretrained_file, weights_source)
        if separate_backbones:
            self.backbones = nn.ModuleDict({k: _create_backbone(timm, backbone, pretrained_file)
                                            for k in self.image_keys})
        else:
            self.backbone = _create_backbone(timm, backbone, pretrained_file)
        if freeze_backbone:
            for net in self._backbone_modules():
                net.requires_grad_(False)
        self.register_buffer("pixel_mean", torch.tensor(IMAGENET_MEAN).view(3, 1, 1), persistent=False)
        self.register_buffer("pixel_std", torch.tensor(IMAGENET_STD).view(3, 1, 1), persistent=False)
        feat = self._backbone_modules()[0].num_features * len(self.image_keys)
        self.proprio = mlp(obs_spec[proprio_key][0], [2 * latent_dim], latent_dim) if proprio_key else None
        head_in = feat + (latent_dim if proprio_key else 0)
        if head_hidden:
            self.head = mlp(head_in, list(head_hidden), latent_dim)
        else:
            self.head = nn.Linear(head_in, latent_dim)
            init_linear_(self.head)

    def _check_keys(self, obs_spec: dict[str, Sequence[int]], raw_pixels: bool) -> list[str]:
        """The image keys, after checking that every named group is in ``obs_spec`` (and RGB for raw pixels)."""
        if not self.image_keys:
            raise ValueError("encoder 'timm_image' needs at least one image key")
        named = [*self.image_keys, *([self.proprio_key] if self.proprio_key else [])]
        missing = [k for k in named if k not in obs_spec]
        if missing:
            raise KeyError(f"encoder 'timm_image': groups {missing} are not in obs_spec {sorted(obs_spec)}")
        if raw_pixels:
            not_rgb = [k for k in self.image_keys
                       if (obs_spec[k][-1] if channels_last(obs_spec[k]) else obs_spec[k][0]) != 3]
            if not_rgb:
                raise ValueError(f"encoder 'timm_image': raw_pixels needs RGB (3-channel) images; {not_rgb} are not")
        return self.image_keys

    @staticmethod
    def _weights_source(pretrained_file: str | None, recorded: str | None) -> str:
        if pretrained_file:
            if not Path(pretrained_file).expanduser().is_file():
                raise FileNotFoundError(f"encoder 'timm_image': pretrained_file {str(pretrained_file)!r} does not "
                                        "exist (give a local safetensors or torch state dict; nothing is downloaded)")
            return file_weights_source(Path(pretrained_file).expanduser())
        return recorded or RANDOM_INIT

    def _backbone_modules(self) -> list[nn.Module]:
        return list(self.backbones.values()) if hasattr(self, "backbones") else [self.backbone]

    def portable_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The config kwargs to save with the weights: no local ``pretrained_file`` (the trained weights are in
        the checkpoint, and the file need not exist where the model is loaded), ``weights_source`` instead."""
        return {**kwargs, "pretrained_file": None, "weights_source": self.weights_source}

    def pixels(self, key: str, img: Tensor) -> Tensor:
        """Image group ``key`` (..., *shape) as the backbone's (N, C, H, W) float input."""
        x = img.reshape(-1, *img.shape[-3:])
        if self.channels_last[key]:
            x = x.permute(0, 3, 1, 2)
        x = x.to(self.pixel_mean.dtype)
        if self.raw_pixels:
            x = (x / 255.0 - self.pixel_mean) / self.pixel_std
        return x

    def encode_latent(self, obs: dict[str, Tensor]) -> Tensor:
        feats = []
        for key in self.image_keys:
            img = obs[key]
            net = self.backbones[key] if self.separate_backbones else self.backbone
            feats.append(net(self.pixels(key, img)).reshape(*img.shape[:-3], -1))
        if self.proprio is not None:
            feats.append(self.proprio(obs[self.proprio_key]))
        return self.head(torch.cat(feats, dim=-1))

    def obs_tokens(self, obs_hist: dict[str, Tensor]) -> Tensor | None:
        return self.proprio(obs_hist[self.proprio_key]) if self.proprio is not None else None
