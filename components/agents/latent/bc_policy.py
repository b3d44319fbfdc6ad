"""``BCPolicy``: SimDist's registered encoder with an MLP head to one action, and the freeze policies that apply
to it. Inputs are normalised by the library's :class:`~simdist.model.normalization.Normalizer`."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor, nn

from simdist.components.agents.latent.bc_config import BCConfig
from simdist.model.config import ConfigError
from simdist.model.freeze import ALL, FreezePolicy
from simdist.model.nn import mlp
from simdist.model.normalization import Normalizer, normalize_groups
from simdist.model.world_model import build_component

__all__ = ["HORIZON", "BCPolicy", "bc_freeze_policy"]

#: BC windows look one step ahead: the target is the action at the current step
HORIZON = 1


class BCPolicy(nn.Module):
    """Encoder → current-step latent (‖ normalised command) → MLP → action; environment units in and out."""

    def __init__(self, config: BCConfig | Mapping[str, Any]) -> None:
        super().__init__()
        cfg = config if isinstance(config, BCConfig) else BCConfig.from_dict(config)
        self.config = cfg
        standard = {"obs_spec": {k: tuple(v) for k, v in cfg.obs_spec.items()}, "action_dim": cfg.action_dim,
                    "command_dim": cfg.command_dim, "latent_dim": cfg.latent_dim, "history": cfg.history,
                    "horizon": HORIZON}
        self.encoder = build_component("encoder", cfg.encoder, standard)
        self.policy = mlp(cfg.latent_dim + cfg.command_dim, cfg.hidden, cfg.action_dim)
        #: groups the encoder reads unnormalised (e.g. raw pixels): no statistics, as in the world model
        self.raw_obs_keys = frozenset(getattr(self.encoder, "raw_obs_keys", ()))
        shapes: dict[str, list[int]] = {f"obs/{k}": v for k, v in cfg.obs_spec.items() if k not in self.raw_obs_keys}
        shapes["actions"] = [cfg.action_dim]
        if cfg.command_dim:
            shapes["commands"] = [cfg.command_dim]
        self.normalizer = Normalizer(shapes)
        bounded = cfg.action_low is not None and cfg.action_high is not None
        self.register_buffer("action_low", torch.tensor(cfg.action_low) if bounded else None, persistent=False)
        self.register_buffer("action_high", torch.tensor(cfg.action_high) if bounded else None, persistent=False)
        if cfg.stats is not None:
            self.set_stats(cfg.stats)

    @classmethod
    def from_world_model(cls, world_model: Any, hidden: list[int] | None = None) -> BCPolicy:
        """A policy on a SimDist world model's encoder: its config's observations, actions and encoder, a copy
        of its encoder weights and its normaliser statistics (observations, actions, commands), and a fresh MLP
        head of ``hidden`` sizes. Freeze the encoder (``heads_only``) to keep it SimDist's (the paper's rule for
        its baselines)."""
        stats = world_model.normalizer.stats() if bool(world_model.normalizer.fitted) else None
        policy = cls(BCConfig.from_world_model_config(world_model.config, hidden=hidden, stats=stats))
        policy.encoder.load_state_dict(world_model.encoder.state_dict(), strict=True)
        return policy.to(world_model.device)

    # ------------------------------------------------------------------ structure
    @property
    def components(self) -> dict[str, nn.Module]:
        """Named parts for :class:`~simdist.model.freeze.FreezePolicy`: encoder, policy (the MLP head), normalizer."""
        return {"encoder": self.encoder, "policy": self.policy, "normalizer": self.normalizer}

    def count_parameters(self) -> dict[str, int]:
        counts = {name: sum(p.numel() for p in mod.parameters()) for name, mod in self.components.items()}
        counts["total"] = sum(counts.values())
        return counts

    @property
    def device(self) -> torch.device:
        return self.normalizer.fitted.device

    def set_stats(self, stats: Mapping[str, Mapping[str, Any]]) -> None:
        """Load normaliser statistics (extra keys are ignored) and record them in :attr:`config`."""
        try:
            self.normalizer.set_stats(stats)
        except KeyError as err:
            raise ConfigError(f"stats: {err.args[0]}") from err
        self.config.stats = self.normalizer.stats()

    def export_config(self) -> BCConfig:
        """:attr:`config` as saved: the current statistics, and each encoder kwarg its ``portable_kwargs``
        rewrites (a local pretrained file whose weights are now in ``model.safetensors``)."""
        cfg = copy.deepcopy(self.config)
        cfg.stats = self.normalizer.stats() if bool(self.normalizer.fitted) else None
        hook = getattr(self.encoder, "portable_kwargs", None)
        if callable(hook):
            cfg.encoder.kwargs = hook(dict(cfg.encoder.kwargs))
        return cfg

    # ------------------------------------------------------------------ forward
    def normalize_obs(self, obs: Mapping[str, Tensor]) -> dict[str, Tensor]:
        return normalize_groups(self.normalizer, obs, self.config.obs_spec, self.raw_obs_keys, "the policy")

    @property
    def feature_dim(self) -> int:
        """Size of :meth:`features`: the latent plus the command."""
        return self.config.latent_dim + self.config.command_dim

    def features(self, obs_hist: Mapping[str, Tensor], act_hist: Tensor, command: Tensor | None = None) -> Tensor:
        """The head's input (B, latent + command) for o_{t-H..t} (each (B, H+1, *shape)), a_{t-H..t-1} (B, H, A)
        and the current command (B, C), all in environment units: the encoder's latent ‖ the normalised command."""
        encoding = self.encoder(self.normalize_obs(obs_hist), self.normalizer.normalize("actions", act_hist))
        features = encoding.latent
        if self.config.command_dim:
            if command is None:
                raise ValueError(f"this policy is command-conditioned (command_dim={self.config.command_dim}); "
                                 "pass the current command")
            features = torch.cat([features, self.normalizer.normalize("commands", command)], dim=-1)
        return features

    def forward(self, obs_hist: Mapping[str, Tensor], act_hist: Tensor, command: Tensor | None = None) -> Tensor:
        """Normalised action (B, A) for the inputs of :meth:`features`."""
        return self.policy(self.features(obs_hist, act_hist, command))

    def clip(self, actions: Tensor) -> Tensor:
        """``actions`` clipped to the configured bounds (unchanged when the config has none)."""
        if self.action_low is None or self.action_high is None:
            return actions
        return torch.clamp(actions, self.action_low, self.action_high)

    @torch.no_grad()
    def act(self, obs_hist: Mapping[str, Tensor], act_hist: Tensor, command: Tensor | None = None) -> Tensor:
        """Actions (B, A) in environment units, within the bounds; inputs are moved to the policy's device."""
        dev = self.device
        obs = {k: v.to(dev, torch.float32) for k, v in obs_hist.items()}
        cmd = command.to(dev, torch.float32) if command is not None else None
        out = self(obs, act_hist.to(dev, torch.float32), cmd)
        return self.clip(self.normalizer.denormalize("actions", out))

    def loss(self, batch: Mapping[str, Any], expert_only: bool = False) -> Tensor | None:
        """MSE (normalised units) between the predicted action and each window's first future action; with
        ``expert_only`` over the windows whose first future step is expert-flagged (None when there are none)."""
        for key in ("obs_hist", "act_hist", "fut_acts", "fut_cmds", "expert"):
            if key not in batch:
                raise KeyError(f"batch is missing {key!r}; it has {sorted(batch)}")
        pred = self(batch["obs_hist"], batch["act_hist"], batch["fut_cmds"][:, 0])
        target = self.normalizer.normalize("actions", batch["fut_acts"][:, 0])
        err = ((pred - target) ** 2).mean(dim=-1)
        if expert_only:
            err = err[batch["expert"][:, 0] > 0.5]
            if err.numel() == 0:
                return None
        return err.mean()


def bc_freeze_policy(freeze: str | FreezePolicy | Any) -> FreezePolicy:
    """The library freeze policy ``freeze`` as it applies to a BC policy (components ``encoder``, ``policy``).

    ``"all"`` trains everything; a policy training only heads (``"heads_only"``: reward, value, policy) trains
    the MLP head with the encoder frozen; component sets name ``encoder`` and/or ``policy``. Policies that train
    parts a BC model lacks (``"dynamics_only"``, ``"dynamics,encoder"``) raise a ValueError naming ``freeze``.
    """
    policy = FreezePolicy.parse(freeze)  # text from the Python API; a policy passes through
    if policy.trainable == ALL:
        return policy
    names = set(policy.trainable)
    own, heads_lacked = {"encoder", "policy"}, {"reward", "value"}
    if not names & own or not names <= own | heads_lacked:
        raise ValueError(f"freeze={policy.spec!r} trains {sorted(names)}, which a BC model does not have (it has "
                         f"{sorted(own)}); use 'all', 'heads_only' (encoder frozen) or a set of {sorted(own)}")
    return FreezePolicy(names & own, eval_frozen=policy.eval_frozen)
