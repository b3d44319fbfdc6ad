"""``WorldModel``: encoder, dynamics, reward/value/policy heads and normaliser, assembled from a config."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from simdist.hub.files import StrPath
from simdist.hub.mixin import HubMixin
from simdist.model.config import ComponentBuildError, ComponentSpec, WorldModelConfig
from simdist.model.nn import SequenceEmbedding
from simdist.model.normalization import Normalizer, normalize_groups
from simdist.model.types import Encoding, Imagination, Prediction
from simdist.registry import get as get_component


def build_component(kind: str, spec: ComponentSpec, standard: Mapping[str, Any]) -> nn.Module:
    """Instantiate a registered ``kind`` component from ``spec``, passing the ``standard`` arguments (latent_dim,
    action_dim, history, ...) its constructor accepts; for plug-ins that compose components (an ensemble of
    dynamics, an agent's encoder)."""
    cls = get_component(kind, spec.name)
    params = inspect.signature(cls.__init__).parameters
    kwargs = {k: v for k, v in standard.items() if k in params}
    kwargs.update(spec.kwargs)
    try:
        return cls(**kwargs)
    except TypeError as err:
        raise ComponentBuildError(f"cannot build {kind} {spec.name!r} with arguments {sorted(kwargs)}: {err}",
                                  f"{kind}.kwargs") from err


def _lead_expand(x: Tensor, lead: torch.Size) -> Tensor:
    """Broadcast (B, L, F) to (*lead, L, F) where lead = (B, *S)."""
    if x.shape[:-2] == lead:
        return x
    view = x.reshape(x.shape[0], *([1] * (len(lead) - 1)), *x.shape[-2:]) if x.dim() == 3 else x
    return view.expand(*lead, *x.shape[-2:])


class WorldModel(nn.Module, HubMixin):
    """A SimDist latent world model.

    Inputs are in environment units; the model normalises them with statistics stored as buffers.
    ``imagine`` returns rewards and values in environment units, ready for a planner.
    """

    # Registered plug-in components, duck-typed beyond their interfaces (simdist.model.interfaces): an ensemble
    # dynamics adds ``members``, an image encoder ``raw_obs_keys`` and ``pixels``.
    encoder: Any
    dynamics: Any
    reward: Any
    value: Any
    policy: Any
    decoder: Any

    def __init__(self, config: WorldModelConfig | Mapping[str, Any]) -> None:
        super().__init__()
        cfg = config if isinstance(config, WorldModelConfig) else WorldModelConfig.from_dict(dict(config))
        self.config = cfg
        standard = {
            "obs_spec": {k: tuple(v) for k, v in cfg.obs_spec.items()},
            "action_dim": cfg.action_dim,
            "command_dim": cfg.command_dim,
            "latent_dim": cfg.latent_dim,
            "history": cfg.history,
            "horizon": cfg.horizon,
        }
        self.encoder = build_component("encoder", cfg.encoder, standard)
        self.dynamics = build_component("dynamics", cfg.dynamics, standard)
        self.reward = build_component("reward_head", cfg.reward_head, standard)
        self.value = build_component("value_head", cfg.value_head, standard)
        self.policy = build_component("policy_head", cfg.policy_head, standard) if cfg.policy_head else None
        d, t = cfg.latent_dim, cfg.horizon
        self.action_embedding = (
            SequenceEmbedding(cfg.action_dim, d, t) if self.dynamics.uses_action_embedding else None
        )
        uses_cmd = self.policy is not None and self.policy.uses_command_embedding
        self.command_embedding = SequenceEmbedding(cfg.command_dim, d, t) if uses_cmd else None
        #: groups the encoder reads unnormalised (e.g. raw pixels, which it scales itself): no statistics
        self.raw_obs_keys = frozenset(getattr(self.encoder, "raw_obs_keys", ()))
        raw = {"raw_obs_keys": sorted(self.raw_obs_keys)}
        self.decoder = (build_component("decoder_head", cfg.decoder_head, {**standard, **raw})
                        if cfg.decoder_head else None)
        shapes = {f"obs/{k}": v for k, v in cfg.obs_spec.items() if k not in self.raw_obs_keys}
        shapes.update(actions=[cfg.action_dim], commands=[cfg.command_dim], rewards=[1], values=[1])
        self.normalizer = Normalizer(shapes)

    # ------------------------------------------------------------------ structure
    @property
    def components(self) -> dict[str, nn.Module]:
        """Named parts: encoder, dynamics, reward, value, policy, decoder, action/command embeddings, normalizer."""
        names = ("encoder", "dynamics", "reward", "value", "policy", "decoder", "action_embedding",
                 "command_embedding", "normalizer")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}

    def count_parameters(self, trainable_only: bool = False) -> dict[str, int]:
        """Parameter count per component, plus ``total``."""
        counts = {
            name: sum(p.numel() for p in mod.parameters() if p.requires_grad or not trainable_only)
            for name, mod in self.components.items()
        }
        counts["total"] = sum(counts.values())
        return counts

    @property
    def device(self) -> torch.device:
        """The device the model's weights are on."""
        return self.normalizer.fitted.device

    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> WorldModel:
        """Build a named architecture, registered by a task (``simdist tasks`` lists each task's preset)."""
        from simdist.model.presets import preset_config

        return cls(preset_config(name, **overrides))

    # ------------------------------------------------------------------ encoding
    def normalize_obs(self, obs: Mapping[str, Tensor]) -> dict[str, Tensor]:
        """Normalise the groups the model reads (those in :attr:`raw_obs_keys` pass unchanged); other keys are
        ignored. Raises on a missing group."""
        return normalize_groups(self.normalizer, obs, self.config.obs_spec, self.raw_obs_keys, "the model")

    def encode(self, obs_hist: Mapping[str, Tensor], act_hist: Tensor) -> Encoding:
        """Encode o_{t-H..t} (each (B, H+1, *shape)) and a_{t-H..t-1} (B, H, A), environment units.

        With the config's ``policy_input`` the encoding also carries the tokens the policy head reads
        (``policy_context``): without the past actions, the current latent alone, and/or an encoding of the
        observations with ``mask_obs`` dims zeroed."""
        obs_n = self.normalize_obs(obs_hist)
        act_n = self.normalizer.normalize("actions", act_hist)
        encoding = self.encoder(obs_n, act_n)
        spec = self.config.policy_input
        if spec is None or self.policy is None:
            return encoding
        source = encoding
        if spec["mask_obs"]:
            masked = dict(obs_n)
            for group, dims in spec["mask_obs"].items():
                x = masked[group].clone()
                x[..., dims] = 0.0
                masked[group] = x
            source = self.encoder(masked, act_n)
        if not spec["history"]:
            encoding.policy_context = source.latent[:, None]
        elif not spec["actions"]:
            if source.action_tokens is None:
                raise RuntimeError(f"policy_input.actions false needs an encoder that marks its action tokens; "
                                   f"{type(self.encoder).__name__} does not")
            encoding.policy_context = source.context[:, ~source.action_tokens]
        else:
            encoding.policy_context = source.context
        return encoding

    def encode_latent(self, obs: Mapping[str, Tensor]) -> Tensor:
        """Per-step latent E(o) of observations with any leading dims (consistency targets)."""
        return self.encoder.encode_latent(self.normalize_obs(obs))

    @property
    def dynamics_members(self) -> int:
        """How many dynamics predict: K for an ensemble (a dynamics with ``members`` and ``forward_members``, such
        as ``dynamics/ensemble``), 1 for a single dynamics."""
        if not hasattr(self.dynamics, "forward_members"):
            return 1
        return len(self.dynamics.members)

    # ------------------------------------------------------------------ prediction
    def _rollout(self, encoding: Encoding, actions_n: Tensor, prepared: Any = None) -> tuple[Tensor, Tensor | None]:
        """(latents, member latents): an ensemble's mean and its (K, ..., T, D) members; else (latents, None)."""
        if prepared is None:
            prepared = self.dynamics.prepare(encoding)
        inputs = self.action_embedding(actions_n) if self.action_embedding is not None else actions_n
        if self.dynamics_members > 1:
            members = self.dynamics.forward_members(prepared, encoding.z, inputs)
            return members.mean(0), members
        return self.dynamics(prepared, encoding.z, inputs), None

    def _heads(
        self, encoding: Encoding, latents: Tensor, actions_n: Tensor, commands_n: Tensor, last_value_only: bool = False,
        value_head: nn.Module | None = None,
    ) -> tuple:
        """(rewards, values), normalised, of the trajectory [z_t, latents]; ``value_head`` in place of the model's
        (e.g. a slow target copy of it)."""
        trajectory, commands_n = self._head_inputs(encoding, latents, commands_n)
        head: Any = self.value if value_head is None else value_head
        value = head.forward_last if last_value_only else head
        return self.reward(trajectory, actions_n, commands_n), value(trajectory, actions_n, commands_n)

    def _values(self, encoding: Encoding, latents: Tensor, actions_n: Tensor, commands_n: Tensor,
                value_head: nn.Module | None = None) -> Tensor:
        """The values of :meth:`_heads` alone (the reward head not run)."""
        trajectory, commands_n = self._head_inputs(encoding, latents, commands_n)
        head: Any = self.value if value_head is None else value_head
        return head(trajectory, actions_n, commands_n)

    @staticmethod
    def _head_inputs(encoding: Encoding, latents: Tensor, commands_n: Tensor) -> tuple[Tensor, Tensor]:
        """The heads' trajectory [z_t, latents] and the commands expanded to its leading shape."""
        lead = latents.shape[:-2]
        z_tok = encoding.latent.reshape(encoding.latent.shape[0], *([1] * (len(lead) - 1)), 1, -1)
        trajectory = torch.cat([z_tok.expand(*lead, 1, -1), latents], dim=-2)
        return trajectory, _lead_expand(commands_n, lead)

    def _policy(self, encoding: Encoding, commands_n: Tensor, prepared: Any = None) -> Tensor:
        if self.policy is None:
            raise RuntimeError("this world model has no policy head")
        if prepared is None:
            prepared = self.policy.prepare(encoding)
        t = self.config.horizon
        queries = commands_n[..., :t, :]
        if self.command_embedding is not None:
            queries = self.command_embedding(queries)
        return self.policy(prepared, queries)

    def predict(self, batch: Mapping[str, Any], heads: bool = True) -> Prediction:
        """Training forward pass on a window batch; every output in normalised units.

        ``heads=False`` computes only the latents (dynamics-only finetuning skips the heads). With an ensemble
        dynamics ``member_latents`` holds every member's latents and ``latents`` their mean, which the heads read.
        """
        self._check_batch(batch)
        encoding = self.encode(batch["obs_hist"], batch["act_hist"])
        actions_n = self.normalizer.normalize("actions", batch["fut_acts"])
        latents, members = self._rollout(encoding, actions_n)
        if not heads:
            return Prediction(latents=latents, rewards=None, values=None, actions=None, member_latents=members,
                              encoding=encoding)
        commands_n = self.normalizer.normalize("commands", batch["fut_cmds"])
        rewards, values = self._heads(encoding, latents, actions_n, commands_n)
        actions = self._policy(encoding, commands_n) if self.policy is not None else None
        return Prediction(latents=latents, rewards=rewards, values=values, actions=actions, member_latents=members,
                          encoding=encoding)

    def heads_on_latents(self, batch: Mapping[str, Any], latents: Tensor,
                         encoding: Encoding | None = None) -> tuple[Tensor, Tensor]:
        """The reward and value heads (normalised units, (B, T) each) of a window batch read on ``latents``
        (B, T, D) in place of the predicted ones: on the encoded true future, the scores the heads would give
        the future that happened (the decision-aware finetuning term's targets). ``encoding``: the batch's
        window encoding when the caller has it (a :meth:`predict`'s), else encoded here."""
        if encoding is None:
            encoding = self.encode(batch["obs_hist"], batch["act_hist"])
        actions_n = self.normalizer.normalize("actions", batch["fut_acts"])
        commands_n = self.normalizer.normalize("commands", batch["fut_cmds"])
        return self._heads(encoding, latents, actions_n, commands_n)

    def reconstruction_error(self, obs: Mapping[str, Tensor]) -> Tensor:
        """The decoder's squared error reconstructing ``obs`` (each (B, T, *shape)) from E(o); gradients reach
        the encoder (Table I's reconstruction ablation).

        A decoder with ``reconstruction_error(latents, obs, pixels)`` computes it from the observations as the
        encoder reads them (state groups normalised, raw groups as recorded) and the encoder's ``pixels`` (how
        its backbone sees an image group, ``None`` without): ``decoder_head/mlp`` the mean over every state
        element, ``decoder_head/pixels`` the mean of its pixel and state terms. Any other decoder: the mean
        squared error of its output against ``decoder.groups`` concatenated, normalised units."""
        if self.decoder is None:
            raise ValueError("the reconstruction loss needs a decoder: set decoder_head in the model config")
        normed = self.normalize_obs(obs)
        latents = self.encoder.encode_latent(normed)
        if hasattr(self.decoder, "reconstruction_error"):
            return self.decoder.reconstruction_error(latents, normed, getattr(self.encoder, "pixels", None))
        target = torch.cat([normed[k].flatten(start_dim=latents.dim() - 1) for k in self.decoder.groups], dim=-1)
        return (self.decoder(latents) - target).pow(2).mean()

    @torch.no_grad()
    def target_latents(self, fut_obs: Mapping[str, Tensor]) -> Tensor:
        """Stop-gradient consistency targets E(o_{t+1..t+T}) from the same (online) encoder."""
        return self.encode_latent(fut_obs)

    @torch.no_grad()
    def consistency_targets(self, batch: Mapping[str, Any]) -> Tensor:
        """:meth:`target_latents` of a window batch: from ``batch["fut_steps"]`` when it has them (chunks of
        consecutive windows, :func:`simdist.data.chunks.expand_chunks`: each step encoded once, the windows'
        rows gathered), else from ``batch["fut_obs"]`` window by window."""
        steps = batch.get("fut_steps")
        if steps is None:
            return self.target_latents(batch["fut_obs"])
        return self.encode_latent(steps["obs"])[steps["index"]]

    def imagine(
        self, encoding: Encoding, actions: Tensor, commands: Tensor | None = None, *,
        prepared: Any = None, last_value_only: bool = False,
    ) -> Imagination:
        """Imagine futures for action sequences ``actions`` (B, [N,] T, A) from one ``encoding`` per env.

        ``commands`` (B, [N,] T+1, C) or (B, C) held constant; rewards/values come back unnormalised.
        ``last_value_only``: values (B, [N,] 1) for the last latent only, all a bootstrapped return needs.
        With an ensemble dynamics ``disagreement`` (B, [N,] T) is the members' spread (:class:`Imagination`).
        """
        commands = self._commands(commands, actions.shape[0], actions.device)
        actions_n = self.normalizer.normalize("actions", actions)
        latents, members = self._rollout(encoding, actions_n, prepared)
        return self._scored(encoding, latents, actions_n, self.normalizer.normalize("commands", commands),
                            last_value_only, members)

    def score_latents(self, encoding: Encoding, latents: Tensor, actions: Tensor, commands: Tensor | None = None, *,
                      last_value_only: bool = False) -> Imagination:
        """The reward and value heads on given latents (B, [N,] T, D) instead of imagined ones, for the actions
        (B, [N,] T, A) that led there: what the heads say of a trajectory that really happened (e.g. the encoded
        observations a candidate reached in the environment), in the units and layout of :meth:`imagine`."""
        if latents.shape[:-1] != actions.shape[:-1]:
            raise ValueError(f"latents {tuple(latents.shape)} and actions {tuple(actions.shape)} must share their "
                             "leading (B, [N,] T) dims")
        commands = self._commands(commands, actions.shape[0], actions.device)
        return self._scored(encoding, latents, self.normalizer.normalize("actions", actions),
                            self.normalizer.normalize("commands", commands), last_value_only)

    def _scored(self, encoding: Encoding, latents: Tensor, actions_n: Tensor, commands_n: Tensor,
                last_value_only: bool, members: Tensor | None = None) -> Imagination:
        lead = actions_n.shape[:-2]
        rewards, values = self._heads(encoding, latents, actions_n, commands_n, last_value_only)
        if rewards.shape[:-1] != lead:
            raise RuntimeError(f"head output {tuple(rewards.shape)} does not match the action batch {tuple(lead)}")
        return Imagination(
            latents=latents,
            rewards=self.normalizer.denormalize("rewards", rewards.unsqueeze(-1)).squeeze(-1),
            values=self.normalizer.denormalize("values", values.unsqueeze(-1)).squeeze(-1),
            disagreement=None if members is None else members.std(0, correction=0).mean(-1),
        )

    def imagine_latents(self, encoding: Encoding, actions: Tensor, *, prepared: Any = None) -> Tensor:
        """The dynamics alone: latents (B, [N,] T, D) for ``actions`` (B, [N,] T, A), no reward or value heads (an
        ensemble's member mean, as :meth:`imagine`'s)."""
        return self._rollout(encoding, self.normalizer.normalize("actions", actions), prepared)[0]

    def policy_actions(self, encoding: Encoding, commands: Tensor | None = None) -> Tensor:
        """Base-policy action chunk (B, T, A) in environment units."""
        commands = self._commands(commands, encoding.z.shape[0], encoding.z.device)
        actions_n = self._policy(encoding, self.normalizer.normalize("commands", commands))
        return self.normalizer.denormalize("actions", actions_n)

    def _commands(self, commands: Tensor | None, batch: int, device: torch.device) -> Tensor:
        t1, c = self.config.horizon + 1, self.config.command_dim
        if commands is None:
            if c:
                raise ValueError(f"this model is command-conditioned (command_dim={c}); pass commands")
            return torch.zeros(batch, t1, 0, device=device)
        if commands.dim() == 2:  # one command per env, held over the horizon
            return commands[:, None, :].expand(-1, t1, -1)
        return commands

    def _check_batch(self, batch: Mapping[str, Any]) -> None:
        required = ("obs_hist", "act_hist", "fut_acts", "fut_cmds")
        missing = [k for k in required if k not in batch]
        if missing:
            raise KeyError(f"batch is missing keys {missing}; it has {sorted(batch)}")
        h, t, a = self.config.history, self.config.horizon, self.config.action_dim
        expect = {"act_hist": (h, a), "fut_acts": (t, a), "fut_cmds": (t + 1, self.config.command_dim)}
        for key, shape in expect.items():
            if tuple(batch[key].shape[-2:]) != shape:
                raise ValueError(f"batch[{key!r}] has shape {tuple(batch[key].shape)}, expected (B, {shape})")

    # ------------------------------------------------------------------ hub I/O (simdist.hub.mixin.HubMixin)
    def save_pretrained(self, save_directory: StrPath, *, model_card_kwargs: Mapping[str, Any] | None = None,
                        extra_files: Mapping[str, Any] | None = None, config: Mapping[str, Any] | None = None,
                        **kwargs: Any) -> Path:
        """Write ``config.json``, ``model.safetensors``, a ``README.md`` model card and ``extra_files`` (name →
        text or a mapping written as JSON, e.g. ``{"planner.json": settings}``) into ``save_directory``, atomically.

        ``base_model``, ``metrics``, ``tags`` and ``model_card_kwargs`` (``repo_id``, ``model_name``,
        ``description``, ``citation``, ``datasets``, ``license``) feed the card; ``train_config`` (a mapping, YAML
        text or a YAML file's path) is written as ``train_config.yaml``; ``config``: the ``config.json`` dict
        (default :meth:`hub_config`). An existing target must be empty or a previous export. ``planner_config``
        and ``agent_type`` are deprecated: the SimDist agent writes its planner settings and type."""
        extras = dict(extra_files or {})
        planner = kwargs.pop("planner_config", None)
        agent_type = kwargs.pop("agent_type", None)
        if planner is not None or agent_type is not None:
            import warnings

            from simdist.hub.files import PLANNER_NAME
            from simdist.model.config import AGENT_TYPE_KEY

            warnings.warn("WorldModel.save_pretrained(planner_config=..., agent_type=...) is deprecated: pass "
                          f"extra_files={{{PLANNER_NAME!r}: ...}} and config=, or save the agent", DeprecationWarning,
                          stacklevel=2)
            if planner is not None:
                extras.setdefault(PLANNER_NAME, planner)
            if agent_type is not None:
                config = {**(config if config is not None else self.hub_config()), AGENT_TYPE_KEY: agent_type}
        return super().save_pretrained(save_directory, model_card_kwargs=model_card_kwargs, extra_files=extras,
                                       config=config, **kwargs)

    def hub_config(self) -> dict[str, Any]:
        """``config.json``: the portable config (:func:`simdist.model.model_card.portable_config`) and the agent type
        that reads a world model's folder."""
        from simdist.model.config import AGENT_TYPE_KEY, WORLD_MODEL_AGENT_TYPE
        from simdist.model.model_card import portable_config

        return {**portable_config(self).to_dict(), AGENT_TYPE_KEY: WORLD_MODEL_AGENT_TYPE}

    def _hub_files(self, folder_name: str, extra_files: Mapping[str, Any], model_card_kwargs: Mapping[str, Any], *,
                   base_model: str | None = None, metrics: Mapping[str, Any] | None = None,
                   train_config: Any = None, tags: Any = None, **unknown: Any) -> dict[str, Any]:
        """The model card and ``train_config.yaml``."""
        super()._hub_files(folder_name, extra_files, model_card_kwargs, **unknown)  # a TypeError naming unknown ones
        from simdist.hub.files import CARD_NAME, PLANNER_NAME, TRAIN_CONFIG_NAME
        from simdist.model.model_card import render_model_card, train_config_text

        train_text = train_config_text(train_config) if train_config is not None else None
        card = render_model_card(
            self, base_model=base_model, metrics=metrics, tags=tags,
            has_train_config=train_text is not None or extra_files.get(TRAIN_CONFIG_NAME) is not None,
            has_planner=extra_files.get(PLANNER_NAME) is not None, folder_name=folder_name, **model_card_kwargs,
        )
        return {CARD_NAME: card, TRAIN_CONFIG_NAME: train_text}

    @classmethod
    def _from_hub_config(cls, config: dict[str, Any], path: Path) -> WorldModel:
        """The architecture a saved folder's ``config.json`` describes; a ConfigError naming ``path`` when the folder
        holds another agent, or a config that does not build."""
        from simdist.model.config import config_file

        model_config = WorldModelConfig.from_saved(config, path)
        with config_file(path):
            return cls(model_config)

    def _hub_commit_message(self) -> str:
        from simdist import __version__

        task = self.config.task
        return f"Upload simdist world model{f' for {task}' if task else ''} (simdist {__version__})"
