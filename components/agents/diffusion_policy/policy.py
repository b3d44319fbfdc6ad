"""``DiffusionPolicy``: SimDist's frozen encoder (the condition), the noise-prediction U-Net and its EMA copy, the
action scaling to [-1, 1], the ε-prediction loss and the samplers."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor, nn

from simdist.components.agents.diffusion_policy.configuration import RANGE_EPS, DiffusionPolicyConfig
from simdist.components.agents.diffusion_policy.network import ConditionalUnet1D
from simdist.components.agents.latent.bc_policy import BCPolicy
from simdist.model.config import ConfigError

__all__ = ["DiffusionPolicy", "ema_decay"]


def ema_decay(updates: int, power: float = 0.75, max_decay: float = 0.9999) -> float:
    """The EMA decay of the official Diffusion Policy at the update that follows ``updates`` earlier ones:
    1 - (1 + s)^-power with s = updates - 1, capped at ``max_decay``; 0 (a plain copy) for the first two."""
    s = updates - 1
    return 0.0 if s <= 0 else min(1.0 - (1.0 + s) ** -power, max_decay)


class DiffusionPolicy(nn.Module):
    """The parts of a Diffusion Policy agent (see :class:`DiffusionPolicyConfig`).

    ``backbone`` is a :class:`BCPolicy` used only for its encoder and normaliser (frozen, always in eval mode; its
    MLP head is unused). ``net`` is trained; ``ema_net`` (its exponential moving average) samples actions.
    Actions inside the model are in [-1, 1] (min-max over the training data), clipped to the action bounds on the
    way out.
    """

    def __init__(self, config: DiffusionPolicyConfig | Mapping[str, Any], backbone: BCPolicy | None = None) -> None:
        super().__init__()
        cfg = config if isinstance(config, DiffusionPolicyConfig) else DiffusionPolicyConfig.from_dict(config)
        self.config = cfg
        #: the frozen feature extractor: ``backbone`` as given (its config replaces ``config.policy``) or built
        self.backbone = BCPolicy(cfg.bc) if backbone is None else backbone
        if not bool(self.backbone.normalizer.fitted):
            raise ConfigError("policy.stats: the frozen encoder has no normaliser statistics (a SimDist world model "
                              "whose normaliser was fitted gives them)")
        cfg.policy = self.backbone.config
        self.backbone.requires_grad_(False)
        self.net = ConditionalUnet1D(cfg.action_dim, cfg.cond_dim, cfg.down_dims, cfg.kernel_size, cfg.n_groups,
                                     cfg.step_embed_dim)
        self.ema_net = copy.deepcopy(self.net).requires_grad_(False)
        self.register_buffer("ema_updates", torch.zeros((), dtype=torch.int64))
        self.register_buffer("action_center", torch.zeros(cfg.action_dim), persistent=False)
        self.register_buffer("action_scale", torch.ones(cfg.action_dim), persistent=False)
        if cfg.action_min is not None and cfg.action_max is not None:
            self.set_action_range(cfg.action_min, cfg.action_max)
        self._schedulers: dict[Any, Any] = {}
        self.train(False)

    def train(self, mode: bool = True) -> DiffusionPolicy:
        """Like ``nn.Module.train``, but the frozen encoder and the EMA network stay in eval mode."""
        super().train(mode)
        self.backbone.eval()
        self.ema_net.eval()
        return self

    @property
    def device(self) -> torch.device:
        return self.ema_updates.device

    def count_parameters(self) -> dict[str, int]:
        counts = {"encoder": sum(p.numel() for p in self.backbone.encoder.parameters()),
                  "unet": sum(p.numel() for p in self.net.parameters())}
        counts["total"] = sum(p.numel() for p in self.parameters())
        return counts

    # ------------------------------------------------------------------ action scaling
    @property
    def fitted(self) -> bool:
        """Whether the action range is known (set by training)."""
        return self.config.action_min is not None

    @torch.no_grad()
    def set_action_range(self, low: Any, high: Any) -> None:
        """Map the per-dimension data range [``low``, ``high``] to [-1, 1] (a dimension of range below 1e-4 is only
        centred), and record it in :attr:`config`."""
        cfg = self.config
        self.config = cfg = cfg.replace(action_min=[float(v) for v in low], action_max=[float(v) for v in high])
        cfg.policy = self.backbone.config
        lo, hi = torch.tensor(cfg.action_min), torch.tensor(cfg.action_max)
        span = hi - lo
        self.action_center.copy_((lo + hi) / 2)
        self.action_scale.copy_(torch.where(span > RANGE_EPS, 2.0 / span.clamp_min(RANGE_EPS), torch.ones_like(span)))

    def normalize_actions(self, actions: Tensor) -> Tensor:
        return (actions - self.action_center) * self.action_scale

    def to_env(self, actions: Tensor) -> Tensor:
        """Normalised ``actions`` in environment units, clipped to the action bounds."""
        return self.backbone.clip(actions / self.action_scale + self.action_center)

    # ------------------------------------------------------------------ conditioning
    def condition(self, obs_hist: Mapping[str, Tensor], act_hist: Tensor, command: Tensor | None = None) -> Tensor:
        """The U-Net's condition (B, cond_dim) from o_{t-H-T_o+1..t} (each (B, H+T_o, *shape)), the actions before
        them (B, H+T_o-1, A) and the current command (B, C), in environment units: the encoder latents of the last
        T_o steps (oldest first), each from its own H-step sub-window, ‖ the normalised current command."""
        cfg, bc = self.config, self.config.bc
        h, steps, b = bc.history, cfg.obs_steps, act_hist.shape[0]
        if act_hist.shape[-2] != cfg.history:
            raise ValueError(f"the history holds {act_hist.shape[-2]} past actions; this agent reads {cfg.history} "
                             f"(the encoder's {h} plus obs_steps - 1)")
        obs = {k: torch.cat([v[:, i:i + h + 1] for i in range(steps)]) for k, v in obs_hist.items()}
        acts = torch.cat([act_hist[:, i:i + h] for i in range(steps)])
        cmd = command.repeat(steps, 1) if bc.command_dim and command is not None else None
        feats = self.backbone.features(obs, acts, cmd)
        latents = feats[:, :bc.latent_dim].reshape(steps, b, bc.latent_dim).transpose(0, 1).reshape(b, -1)
        return torch.cat([latents, feats[:b, bc.latent_dim:]], dim=-1)

    # ------------------------------------------------------------------ diffusion
    def training_scheduler(self) -> Any:
        from simdist.components.agents.diffusion_policy.schedulers import training_scheduler

        key = ("train", self.config.num_train_timesteps, self.config.beta_schedule, self.config.clip_sample)
        if key not in self._schedulers:
            self._schedulers[key] = training_scheduler(self.config)
        return self._schedulers[key]

    def inference_scheduler(self) -> Any:
        from simdist.components.agents.diffusion_policy.schedulers import inference_scheduler

        cfg = self.config
        key = (cfg.sampler, cfg.inference_steps, cfg.num_train_timesteps, cfg.beta_schedule, cfg.clip_sample)
        if key not in self._schedulers:
            self._schedulers[key] = inference_scheduler(cfg)
        return self._schedulers[key]

    def loss(self, batch: Mapping[str, Tensor], generator: torch.Generator | None = None) -> Tensor:
        """ε-prediction MSE of the online network on ``batch``: ``cond`` (B, cond_dim), normalised ``actions``
        (B, T_p, A) and ``mask`` (B, T_p), the chunk positions that count (expert-flagged ones when co-training)."""
        actions, cond, mask = batch["actions"], batch["cond"], batch["mask"]
        scheduler = self.training_scheduler()
        noise = torch.randn(actions.shape, generator=generator).to(actions.device)
        steps = torch.randint(0, self.config.num_train_timesteps, (actions.shape[0],), generator=generator)
        steps = steps.to(actions.device)
        noisy = scheduler.add_noise(actions, noise, steps)
        err = ((self.net(noisy, steps, cond) - noise) ** 2).mean(dim=-1)
        return (err * mask).sum() / mask.sum().clamp_min(1.0)

    @torch.no_grad()
    def sample(self, cond: Tensor, generator: torch.Generator | None = None, net: nn.Module | None = None) -> Tensor:
        """A normalised action chunk (B, T_p, A) per condition row, denoised from Gaussian noise drawn with
        ``generator`` by the configured sampler with the EMA network (or ``net``)."""
        net = self.ema_net if net is None else net
        cfg = self.config
        scheduler = self.inference_scheduler()
        x = torch.randn((cond.shape[0], cfg.horizon, cfg.action_dim), generator=generator).to(cond.device)
        for t in scheduler.timesteps:
            eps = net(x, t.to(cond.device), cond)
            x = scheduler.step(eps, t, x, generator=generator).prev_sample
        return x

    @torch.no_grad()
    def update_ema(self) -> float:
        """Move ``ema_net`` towards ``net`` by the official schedule; returns the decay used."""
        decay = ema_decay(int(self.ema_updates), self.config.ema_power, self.config.ema_max_decay)
        for avg, p in zip(self.ema_net.parameters(), self.net.parameters()):
            avg.lerp_(p.detach(), 1.0 - decay)
        for avg, b in zip(self.ema_net.buffers(), self.net.buffers()):
            avg.copy_(b)
        self.ema_updates += 1
        return decay
