"""``DiffusionPolicyAgent``: the paper's Diffusion Policy baseline (Chi et al.) on SimDist's frozen encoder.

The agent is behaviour cloning with a conditional DDPM over action chunks (BASELINES.md 5): given the frozen
encoder latents of the last T_o = 2 steps (‖ the command) it denoises a chunk of T_p = 16 normalised actions with a
FiLM-conditioned 1-D conv U-Net, executes T_a = 8 of them, then replans (receding horizon, one action queue per
env). Schedulers come from ``diffusers`` (DDPM, K = 100 cosine steps, for training; DDIM with 16 steps or DDPM at
act time). Training: ε-prediction MSE, AdamW with warmup and cosine decay, an EMA of the weights that acts.

Scaled to CPU where the official recipe is out of reach (BASELINES.md 5.6): the condition is SimDist's frozen
latent instead of a vision stack trained end to end (the paper's fairness rule for shared encoders, section 8),
the U-Net's default ``down_dims`` are [64, 128, 256] (official low-dim: [256, 512, 1024], a setting) and the
default batch is 64 (official 256).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from simdist.agents import Agent, check_encoder_frozen
from simdist.components.agents.diffusion_policy.configuration import (
    SETTINGS,
    DiffusionPolicyConfig,
    check_settings,
)
from simdist.components.agents.diffusion_policy.policy import DiffusionPolicy
from simdist.components.agents.latent.bc_policy import BCPolicy
from simdist.model.config import ConfigError, config_file
from simdist.model.freeze import FreezePolicy
from simdist.registry import register

__all__ = ["DiffusionPolicyAgent"]

AGENT_TYPE = "diffusion_policy"
Folders = str | Path | Sequence[str | Path]


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    return value


def _backbone(source: Any) -> BCPolicy:
    """A CPU copy of the frozen feature extractor of ``source``: a SimDist world model (its encoder and
    normaliser), a :class:`BCPolicy`, or an agent holding either (``policy`` / ``world_model``)."""
    if isinstance(source, BCPolicy):
        return copy.deepcopy(source).cpu()
    if isinstance(getattr(source, "policy", None), BCPolicy):
        return copy.deepcopy(source.policy).cpu()
    model = getattr(source, "world_model", source)
    if hasattr(model, "encoder") and hasattr(model, "normalizer") and hasattr(model, "config"):
        if not bool(model.normalizer.fitted):
            raise ValueError("the world model's normaliser was never fitted: its encoder cannot give the features "
                             "(load a trained SimDist model, or set its statistics)")
        return BCPolicy.from_world_model(model, hidden=[]).cpu()
    raise TypeError(f"expected a SimDist world model, a BCPolicy or an agent holding one, got {type(source).__name__}")


@register("agent", AGENT_TYPE)
class DiffusionPolicyAgent(Agent):
    """A :class:`DiffusionPolicy` acting by receding horizon; ``train`` fits one on demonstrations."""

    plans = False

    def __init__(self, model: DiffusionPolicy, source: str | None = None) -> None:
        self.model = model.eval()
        self.source = source  # the id or folder it was loaded from (the card's base model after finetuning)
        self.seed: int | None = None
        self._generator = torch.Generator(device="cpu")
        self._queue: Tensor | None = None  # (B, T_a, A) planned actions per env
        self._left: Tensor | None = None  # (B,) how many of them are still to execute
        #: per-step training losses of the run that produced this agent (empty for a loaded one)
        self.train_losses: list[float] = []
        #: what the run that produced this agent trained on (windows, distinct target steps)
        self.train_counts: dict[str, int] = {}

    @property
    def config(self) -> DiffusionPolicyConfig:
        return self.model.config

    @property
    def device(self) -> torch.device:
        return self.model.device

    def to(self, device: str | torch.device) -> DiffusionPolicyAgent:
        """Move the model (and the action queues) to ``device``; returns self."""
        self.model.to(device)
        self._queue = self._left = None
        return self

    @classmethod
    def from_world_model(cls, world_model: Any, **settings: Any) -> DiffusionPolicyAgent:
        """An untrained agent on the frozen encoder of ``world_model`` (a SimDist world model, a BCPolicy or an
        agent holding one) with ``settings`` (:data:`~.configuration.SETTINGS`); :meth:`train` fits one."""
        check_settings(settings)
        backbone = _backbone(world_model)
        config = DiffusionPolicyConfig(policy=backbone.config, **copy.deepcopy(settings))
        return cls(DiffusionPolicy(config, backbone=backbone))

    # -- acting ------------------------------------------------------------------------------
    def act(self, history: Any) -> Tensor:
        """The next action (B, A) of each env of the :class:`~simdist.planning.ObservationHistory` ``history``
        (from :meth:`new_history`); the envs whose queue is empty replan together first (one batched denoising)."""
        model, cfg = self.model, self.config
        if not model.fitted:
            raise RuntimeError("this Diffusion Policy was never trained (no action range); train it first")
        from simdist.planning.inputs import finite_actions, history_inputs

        obs_hist, act_hist, command = history_inputs(history, cfg.bc.obs_spec, cfg.action_dim, cfg.bc.command_dim,
                                                     cfg.history)
        dev, n = self.device, act_hist.shape[0]
        if self._queue is None or self._left is None or self._queue.shape[0] != n:
            self._queue = torch.zeros(n, cfg.action_steps, cfg.action_dim, device=dev)
            self._left = torch.zeros(n, dtype=torch.int64, device=dev)
        need = (self._left == 0).nonzero().flatten()
        if need.numel():
            idx = need.cpu()
            obs = {k: v[idx].to(dev, torch.float32) for k, v in obs_hist.items()}
            cmd = command[idx].to(dev, torch.float32) if cfg.bc.command_dim else None
            with torch.no_grad():
                chunk = model.sample(model.condition(obs, act_hist[idx].to(dev, torch.float32), cmd), self._generator)
            start = cfg.obs_steps - 1  # the chunk starts at t - T_o + 1: execute a_t .. a_{t+T_a-1}
            chunk = model.to_env(chunk[:, start:start + cfg.action_steps])
            self._queue[need] = finite_actions(chunk, type(self).__name__)
            self._left[need] = cfg.action_steps
        out = self._queue[torch.arange(n, device=dev), cfg.action_steps - self._left]
        self._left -= 1
        return out

    def reset(self, ids: Sequence[int] | Tensor | None = None, seed: int | None = None) -> None:
        """Empty the action queues of envs ``ids`` (all if None), so they replan at the next act; with ``seed``,
        restart the noise generator (the same seed and observations give the same actions)."""
        if ids is None:
            self._queue = self._left = None
        elif self._left is not None:
            idx = torch.as_tensor(np.asarray(ids) if not isinstance(ids, Tensor) else ids)
            self._left[idx.to(self._left.device)] = 0
        if seed is not None:
            self.seed = int(seed)
            self._generator.manual_seed(int(seed))

    def new_history(self, num_envs: int) -> Any:
        """An observation history of H + T_o - 1 steps (the encoder's history H, plus the T_o - 1 earlier steps
        whose latents the condition also reads)."""
        from simdist.planning.history import ObservationHistory

        cfg, bc = self.config, self.config.bc
        return ObservationHistory(bc.obs_spec, bc.action_dim, bc.command_dim, cfg.history, num_envs, device=self.device)

    def with_settings(self, **settings: Any) -> DiffusionPolicyAgent:
        """``sampler`` (``"ddim"`` | ``"ddpm"``), ``inference_steps`` and ``seed``; the queues are emptied. A
        ConfigError names a bad value; other settings raise a TypeError."""
        changes = {k: settings.pop(k) for k in ("sampler", "inference_steps") if settings.get(k) is not None}
        settings = {k: v for k, v in settings.items() if v is not None}
        if changes:
            unknown = sorted(k for k in settings if k != "seed")
            if unknown:
                raise TypeError(f"{type(self).__name__} takes no act-time settings {unknown}")
            config = self.config.replace(**changes)
            config.policy = self.model.backbone.config
            self.model.config = config
            self.reset()
        return super().with_settings(**settings)  # type: ignore[return-value]

    # -- training ----------------------------------------------------------------------------
    @classmethod
    def train(cls, demos: Folders, world_model_or_policy: Any, *, prior: Folders | None = None,
              expert_only_prior: bool = True, steps: int = 10_000, batch_size: int | None = None, seed: int = 0,
              out: str | Path | None = None, progress: bool = False, **settings: Any) -> DiffusionPolicyAgent:
        """Fit a Diffusion Policy on the demonstration folder(s) ``demos`` (every step counts) on the frozen
        encoder of ``world_model_or_policy`` (see :meth:`from_world_model`), for ``steps`` batches of
        ``batch_size`` windows (default: the ``batch_size`` setting, 64).

        ``prior``: simulation folder(s) to co-train on; with ``expert_only_prior`` only windows whose executed
        actions are expert-flagged count, and the loss is masked to the expert-flagged chunk positions
        (BASELINES.md 5.5). Each co-training batch draws ``round(batch_size * prior_fraction)`` windows (setting,
        default 0.5: equal weight) from the prior and the rest from the demos, uniformly. The action range
        ([-1, 1] scaling) is fitted on the target actions of both. ``settings``: :data:`~.configuration.SETTINGS`.
        Bad settings raise a ConfigError naming the key before any data is read.
        """
        from simdist.components.agents.diffusion_policy.training import fit, load_windows

        check_settings(settings)
        settings = copy.deepcopy(settings)
        _count(steps, "steps")
        if batch_size is not None:
            settings["batch_size"] = _count(batch_size, "batch_size")
        if not isinstance(expert_only_prior, bool):
            raise ConfigError(f"expert_only_prior must be true or false, got {expert_only_prior!r}")
        backbone = _backbone(world_model_or_policy)
        config = DiffusionPolicyConfig(policy=backbone.config, **settings)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = DiffusionPolicy(config, backbone=backbone)
        demo_windows = load_windows(model, demos, expert_only=False)
        if demo_windows is None:
            raise ValueError(f"{demos}: no training windows (episodes need more than horizon - obs_steps - "
                             f"action_steps + 1 = {config.horizon - config.obs_steps - config.action_steps + 1} steps)")
        prior_windows = None
        if prior is not None:
            prior_windows = load_windows(model, prior, expert_only=expert_only_prior)
            if prior_windows is None:
                what = "expert-flagged windows" if expert_only_prior else "windows"
                raise ValueError(f"prior {prior}: no {what} to co-train on (a window needs its {config.action_steps} "
                                 "executed actions expert-flagged); pass prior=None to train on the demos only")
        targets = torch.cat([w.target_actions() for w in (demo_windows, prior_windows) if w is not None])
        model.set_action_range(targets.min(dim=0).values.tolist(), targets.max(dim=0).values.tolist())
        demo_windows = demo_windows.normalized(model.normalize_actions)
        prior_windows = prior_windows.normalized(model.normalize_actions) if prior_windows is not None else None
        losses = fit(model, demo_windows, prior_windows, steps=steps, warmup_steps=config.warmup_steps, seed=seed,
                     out=out, progress=progress)
        agent = cls(model)
        agent.train_losses = losses
        agent.train_counts = {"demo_windows": len(demo_windows), "demo_steps": demo_windows.steps_used(),
                              "prior_windows": len(prior_windows) if prior_windows is not None else 0,
                              "prior_steps": prior_windows.steps_used() if prior_windows is not None else 0}
        return agent

    def check_freeze(self, freeze: FreezePolicy | str) -> None:
        check_encoder_frozen(freeze, "a diffusion_policy agent trains its U-Net")

    def finetune(self, data: str | Path, *, freeze: FreezePolicy | str = "heads_only", out: str | Path | None = None,
                 seed: int = 0, progress: bool = False, steps: int = 500, **unused: Any) -> DiffusionPolicyAgent:
        """A copy whose U-Net is trained ``steps`` more batches on every step of the demonstrations in ``data``,
        with the saved recipe (lr, batch size, EMA continuing; warmup min(warmup_steps, steps // 10)) and the
        saved action range. The paper's Diffusion Policy does not adapt; this exists for the agent interface.

        ``freeze``: ``heads_only``, ``policy`` or ``all``, which mean the same here (the encoder stays frozen);
        others raise a ValueError. ``unused``: the world-model finetuning options the adaptation loop passes every
        agent (epochs, windows_per_epoch, batch_size, lr, warmup_steps, obs_noise, loss_weights, prior), ignored.
        """
        from simdist.components.agents.diffusion_policy.training import fit, load_windows

        self.check_freeze(freeze)
        _count(steps, "steps")
        model = copy.deepcopy(self.model).cpu()
        windows = load_windows(model, data, expert_only=False)
        if windows is None:
            raise ValueError(f"{data}: no training windows for finetuning")
        losses = fit(model, windows.normalized(model.normalize_actions), None, steps=steps,
                     warmup_steps=min(self.config.warmup_steps, steps // 10), seed=seed, out=out, progress=progress)
        agent = DiffusionPolicyAgent(model.to(self.device), self.source)
        agent.train_losses = losses
        agent.train_counts = {"demo_windows": len(windows), "demo_steps": windows.steps_used()}
        return agent

    # -- Hub I/O -----------------------------------------------------------------------------
    def export_config(self) -> DiffusionPolicyConfig:
        """:attr:`config` as saved (the encoder's config as :meth:`BCPolicy.export_config` writes it)."""
        config = copy.deepcopy(self.config)
        config.policy = self.model.backbone.export_config()
        return config

    def save_pretrained(self, folder: str | Path, *, base_model: str | None = None,
                        metrics: Mapping[str, Any] | None = None, description: str = "") -> Path:
        """Write ``config.json`` (``agent_type: "diffusion_policy"``, the settings, the action range and the
        encoder's config), ``model.safetensors`` (encoder, online and EMA U-Nets, EMA counter) and ``README.md``
        into ``folder`` atomically; returns the folder. An existing ``folder`` must be empty or a previous export."""
        from simdist.agents import AGENT_TYPE_KEY
        from simdist.hub.files import CARD_NAME
        from simdist.hub.folder import save_target, write_folder

        target = save_target(folder)
        card = self._model_card(target.name, base_model=base_model, metrics=metrics, description=description)
        config = {**self.export_config().to_dict(), AGENT_TYPE_KEY: self.agent_type}
        return write_folder(target, config, self.model, {CARD_NAME: card})

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, *, map_location: str | torch.device = "cpu",
                        **hub: Any) -> DiffusionPolicyAgent:
        """Load a folder or Hub id written by :meth:`save_pretrained` (``hub``: ``revision``, ``cache_dir``,
        ``local_files_only``, ``token``); the weights must match the architecture exactly (strict loading)."""
        from simdist.agents import open_agent_folder
        from simdist.hub.files import CONFIG_NAME, WEIGHTS_NAME
        from simdist.hub.load import load_state, read_weights

        folder, source, data = open_agent_folder(name_or_path, AGENT_TYPE, hub, f"{cls.__name__}.from_pretrained")
        with config_file(folder / CONFIG_NAME):
            model = DiffusionPolicy(DiffusionPolicyConfig.from_dict(data))
        load_state(model, read_weights(folder / WEIGHTS_NAME), strict=True, where=f"{WEIGHTS_NAME} of {source}")
        return cls(model.to(map_location), source=str(name_or_path))

    def _model_card(self, folder_name: str, *, base_model: str | None, metrics: Mapping[str, Any] | None,
                    description: str) -> str:
        from huggingface_hub import ModelCardData

        from simdist.hub.files import DEFAULT_LICENSE, LIBRARY_NAME, PIPELINE_TAG
        from simdist.hub.resolve import hub_repo_id

        cfg, bc = self.config, self.config.bc
        tags = list(dict.fromkeys(["simdist", "diffusion-policy", "robotics", *(t for t in (bc.task, bc.robot) if t)]))
        data = ModelCardData(library_name=LIBRARY_NAME, pipeline_tag=PIPELINE_TAG, license=DEFAULT_LICENSE, tags=tags,
                             base_model=hub_repo_id(base_model) if base_model else None)
        counts = self.model.count_parameters()
        settings = {k: getattr(cfg, k) for k in SETTINGS}
        lines = [
            "---", data.to_yaml(), "---", "",
            f"# {folder_name or AGENT_TYPE}", "",
            *([description, ""] if description else []),
            f"A Diffusion Policy (Chi et al.){f' for the task `{bc.task}`' if bc.task else ''}: a FiLM-conditioned "
            f"1-D conv U-Net {cfg.down_dims} denoises chunks of {cfg.horizon} actions conditioned on the frozen "
            f"`{bc.encoder.name}` encoder latents of the last {cfg.obs_steps} steps (a SimDist world model's "
            f"encoder); it executes {cfg.action_steps} actions, then replans. Acting uses the EMA weights and the "
            f"`{cfg.sampler}` sampler with {cfg.inference_steps} steps.",
            *(["", f"Finetuned from `{base_model}`."] if base_model else []), "",
            "| Setting | Value |", "|---|---|",
            f"| parameters | {counts['total']:,} (U-Net {counts['unet']:,} and its EMA copy, frozen encoder "
            f"{counts['encoder']:,}) |",
            f"| EMA updates | {int(self.model.ema_updates)} |",
            f"| action range | {cfg.action_min} .. {cfg.action_max} |",
            *(f"| {k} | {v} |" for k, v in settings.items()),
            *(f"| {k} | {v} |" for k, v in (metrics or {}).items()), "",
            "## Usage", "", "```python", "from simdist.agents import load_agent", "",
            f'agent = load_agent("{folder_name or "<folder>"}")', "history = agent.new_history(num_envs=1)",
            "history.reset(obs)  # then agent.act(history) -> (1, action_dim)", "```", "",
        ]
        return "\n".join(lines)
