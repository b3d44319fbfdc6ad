"""``decoder_head/pixels``: camera images and state groups decoded from the per-step latent (Table I's
reconstruction ablation on image world models; SimDist itself trains no decoder).

Pixel target. Each image is reconstructed as the image encoder feeds it to its backbone: the world model
passes the encoder's ``pixels(key, img)`` (``encoder/timm_image``: with ``raw_pixels``, the [0, 255] values
scaled to [0, 1] and standardised with the ImageNet mean/std; without, the normaliser's standardised values),
so the pixel error is in units of about one, like the normalised state groups. An encoder without ``pixels``:
raw groups scaled to [0, 1]. The decoder's images and targets keep each group's recorded layout, ``(H, W, C)``
or ``(C, H, W)`` (:func:`~simdist.components.encoders.timm_image.channels_last`, as the encoder decides it).

Loss. The pixel term is the mean squared error over every element of every image group, the state term
that of ``decoder_head/mlp`` (its mean over every state element, normalised units); the reconstruction error
is the mean of the two terms present, so thousands of pixels do not drown the few state values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from torch import Tensor, nn

from simdist.components.encoders.timm_image import channels_last
from simdist.model.nn import GELU, init_linear_
from simdist.registry import register

from .decoder import MLPObservationDecoder

#: ``(key, img (..., *shape)) -> (N, C, H, W)``: an image group as the encoder's backbone reads it
PixelFn = Callable[[str, Tensor], Tensor]


class ImageDecoder(nn.Module):
    """z (N, D) → one image (N, C, H, W): a Linear to a ``(widths[0], h0, w0)`` grid, then per stage a nearest
    2× upsampling, a 3×3 convolution and GELU (the width halving from ``base_channels`` down to
    ``min_channels``), a last 3×3 convolution to C channels, cropped to (H, W). The stages are the fewest that
    bring a ``start``-pixel grid to the image size."""

    def __init__(
        self,
        latent_dim: int,
        channels: int,
        height: int,
        width: int,
        base_channels: int = 64,
        min_channels: int = 16,
        start: int = 4,
    ) -> None:
        super().__init__()
        stages = max(0, math.ceil(math.log2(max(height, width) / start)))
        self.size = (height, width)
        self.grid = (math.ceil(height / 2**stages), math.ceil(width / 2**stages))
        widths = [max(base_channels >> i, min_channels) for i in range(stages + 1)]
        self.stem = nn.Sequential(nn.Linear(latent_dim, widths[0] * self.grid[0] * self.grid[1]), GELU())
        layers: list[nn.Module] = []
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(a, b, 3, padding=1), GELU()]
        layers.append(nn.Conv2d(widths[-1], channels, 3, padding=1))
        self.net = nn.Sequential(*layers)
        init_linear_(self)

    def forward(self, z: Tensor) -> Tensor:
        x = self.stem(z).reshape(z.shape[0], -1, *self.grid)
        return self.net(x)[..., : self.size[0], : self.size[1]]


@register("decoder_head", "pixels")
class PixelObservationDecoder(nn.Module):
    """z → every image group (``image_keys``; by default those the encoder reads raw, ``raw_obs_keys``)
    through an :class:`ImageDecoder` each, and every other normalised (state) group through a
    ``decoder_head/mlp`` (:class:`MLPObservationDecoder`, ``hidden``). See the module docstring for the
    targets and the loss."""

    def __init__(
        self,
        latent_dim: int,
        obs_spec: Mapping[str, Sequence[int]],
        raw_obs_keys: Sequence[str] = (),
        image_keys: Sequence[str] | None = None,
        hidden: Sequence[int] = (256, 256),
        base_channels: int = 64,
        min_channels: int = 16,
    ) -> None:
        super().__init__()
        raw = set(raw_obs_keys)
        images = set(raw if image_keys is None else image_keys)
        unknown = sorted(images - set(obs_spec))
        if unknown:
            raise KeyError(f"decoder_head pixels: image_keys {unknown} are not in obs_spec {sorted(obs_spec)}")
        if not images:
            raise ValueError(
                "decoder_head pixels: the model has no pixel groups (its encoder reads none raw); "
                "decode its state groups with decoder_head: mlp (recipes/table1/reconstruction.yaml)"
            )
        not_images = sorted(k for k in images if len(obs_spec[k]) != 3)
        if not_images:
            raise ValueError(f"decoder_head pixels: groups {not_images} are not images of shape (H, W, C) or (C, H, W)")
        self.image_groups = [k for k in obs_spec if k in images]
        self.state_groups = [k for k in obs_spec if k not in images and k not in raw]
        #: every decoded group, in ``obs_spec`` order
        self.groups = [k for k in obs_spec if k in images or k not in raw]
        self.raw = {k: k in raw for k in self.image_groups}
        self.channels_last = {k: channels_last(obs_spec[k]) for k in self.image_groups}
        self.shapes = {k: tuple(int(s) for s in obs_spec[k]) for k in self.groups}
        self.images = nn.ModuleDict(
            {k: ImageDecoder(latent_dim, *self._chw(k), base_channels, min_channels) for k in self.image_groups}
        )
        state_spec = {k: obs_spec[k] for k in self.state_groups}
        self.state = MLPObservationDecoder(latent_dim, state_spec, hidden) if state_spec else None

    def _chw(self, key: str) -> tuple[int, int, int]:
        shape = self.shapes[key]
        return (shape[2], shape[0], shape[1]) if self.channels_last[key] else shape

    def _layout(self, key: str, chw: Tensor, lead: Sequence[int]) -> Tensor:
        """(N, C, H, W) → (*lead, *shape) in the group's recorded layout."""
        x = chw.permute(0, 2, 3, 1) if self.channels_last[key] else chw
        return x.reshape(*lead, *self.shapes[key])

    def default_pixels(self, key: str, img: Tensor) -> Tensor:
        """The pixel target without an encoder's ``pixels``: (N, C, H, W), raw groups scaled to [0, 1]."""
        x = img.reshape(-1, *img.shape[-3:]).float()
        x = x.permute(0, 3, 1, 2) if self.channels_last[key] else x
        return x / 255.0 if self.raw[key] else x

    def forward(self, latents: Tensor) -> dict[str, Tensor]:
        """(..., D) → {group: (..., *shape)}: images in the pixel target's units, state groups normalised."""
        lead = latents.shape[:-1]
        flat = latents.reshape(-1, latents.shape[-1])
        out = {k: self._layout(k, self.images[k](flat), lead) for k in self.image_groups}
        if self.state is not None:
            state = self.state(latents).split(self.state.sizes, dim=-1)
            out.update({k: x.reshape(*lead, *self.shapes[k]) for k, x in zip(self.state.groups, state)})
        return {k: out[k] for k in self.groups}

    def targets(self, obs: Mapping[str, Tensor], pixels: PixelFn | None = None) -> dict[str, Tensor]:
        """{group: (..., *shape)} in :meth:`forward`'s layout and units, from ``obs`` as the encoder reads it
        (state groups normalised, raw groups as recorded); ``pixels``: the encoder's, else
        :meth:`default_pixels`."""
        pixels = pixels or self.default_pixels
        out = {}
        for k in self.groups:
            x = obs[k]
            if k in self.images:
                lead = x.shape[: x.dim() - 3]
                x = self._layout(k, pixels(k, x), lead)
            out[k] = x
        return out

    def reconstruction_terms(
        self, latents: Tensor, obs: Mapping[str, Tensor], pixels: PixelFn | None = None
    ) -> dict[str, Tensor]:
        """``pixels``: the mean squared error over every image element; ``state`` (when the model has state
        groups): that over every state element, as ``decoder_head/mlp`` has it. ``latents`` (..., D) = E(``obs``)."""
        pred, target = self(latents), self.targets(obs, pixels)

        def mse(groups: Sequence[str]) -> Tensor:
            return sum((pred[k] - target[k]).pow(2).sum() for k in groups) / sum(pred[k].numel() for k in groups)

        terms = {"pixels": mse(self.image_groups)}
        if self.state_groups:
            terms["state"] = mse(self.state_groups)
        return terms

    def reconstruction_error(self, latents: Tensor, obs: Mapping[str, Tensor], pixels: PixelFn | None = None) -> Tensor:
        """The mean of :meth:`reconstruction_terms` (pixel and state terms weighted equally)."""
        terms = list(self.reconstruction_terms(latents, obs, pixels).values())
        return sum(terms) / len(terms)
