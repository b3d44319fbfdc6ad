"""``SimDistAgent``: plans with MPPI (or any registered planner) over a SimDist world model's imagination.

Finetuning is the paper's supervised system identification: a :class:`~simdist.training.FinetuneModule`
on the logged real episodes, by default with only the dynamics trainable. Its Hub folder is the world
model's (``config.json``, ``model.safetensors``, card) plus ``planner.json``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from simdist.agents import Agent
from simdist.components.agents.simdist.configuration import SimDistAgentConfig
from simdist.model.freeze import FINETUNE, FinetuneConfig, FreezePolicy
from simdist.model.world_model import WorldModel
from simdist.registry import register


@register("agent", "simdist")
class SimDistAgent(Agent):
    """A world model and its planner settings; ``act`` runs the planner, ``world_model`` is the model."""

    plans = True

    def __init__(self, world_model: WorldModel, config: SimDistAgentConfig | None = None,
                 source: str | None = None) -> None:
        self.world_model = world_model
        self.config = config or SimDistAgentConfig()
        self.source = source  # the id or folder it was loaded from (the card's base model after finetuning)
        self._planner: Any = None

    # -- acting ------------------------------------------------------------------------------
    @property
    def planner(self) -> Any:
        """The planner, built on first use from :attr:`config`."""
        if self._planner is None:
            from simdist.planning.base import build_planner

            self._planner = build_planner(self.world_model, self.config.to_planner_dict())
        return self._planner

    def act(self, history: Any) -> Tensor:
        return self.planner.act(history)

    def plan(self, history: Any) -> Any:
        return self.planner.plan(history)

    def reset(self, ids: Any = None, seed: int | None = None) -> None:
        self.planner.reset(ids=ids, seed=seed)

    @property
    def per_env_state(self) -> bool:
        return bool(getattr(self.planner, "per_env_state", True))

    def new_history(self, num_envs: int) -> Any:
        from simdist.planning.history import ObservationHistory

        return ObservationHistory.for_model(self.world_model, num_envs=num_envs)

    def with_settings(self, **settings: Any) -> SimDistAgent:
        """The same model acting with other planner settings. With ``planner`` given, ``settings`` are the
        whole planner spec (as ``planner.json``; unset keys take the planner's defaults); without it they
        replace single keys of the current spec (``seed``, ``num_samples``, ...). None values are unset."""
        settings = {k: v for k, v in settings.items() if v is not None}
        flat = settings if "planner" in settings else {**self.config.to_planner_dict(), **settings}
        return SimDistAgent(self.world_model, SimDistAgentConfig.from_planner_dict(flat), self.source)

    # -- finetuning --------------------------------------------------------------------------
    def finetune_options(self, budget: Mapping[str, Any]) -> dict[str, Any]:
        """The whole budget: a world model finetunes on the adaptation run's schedule."""
        return dict(budget)

    def finetune(self, data: str | Path, *, freeze: FreezePolicy | str = FINETUNE.freeze,
                 out: str | Path | None = None, seed: int = 0, epochs: int = FINETUNE.epochs,
                 windows_per_epoch: int | None = FINETUNE.windows_per_epoch,
                 batch_size: int = FINETUNE.batch_size, lr: float = FINETUNE.lr,
                 warmup_steps: int = FINETUNE.warmup_steps, decay_steps: int | None = None, obs_noise: Any = None,
                 loss_weights: dict[str, float] | None = None, progress: bool = False) -> SimDistAgent:
        """Finetune a copy on the dataset folder ``data`` (``front_pad`` = the model's history, no held-out
        split) under ``freeze`` (a :class:`~simdist.model.freeze.FreezePolicy`, or text parsed here); the defaults
        and the schedule (warm-up over ``warmup_steps``, decay to ``lr / 2`` over ``decay_steps``) are
        :class:`~simdist.model.freeze.FinetuneConfig`'s; ``windows_per_epoch`` None: each epoch is one pass.
        ``loss_weights`` None: those of the policy (:meth:`~simdist.model.freeze.FreezePolicy.loss_weights`).
        With ``out``, a killed finetuning resumes where it stopped when called again with the same arguments
        (:func:`~simdist.training.module.resumable_fit`)."""
        from simdist.data import TrajectoryDataModule
        from simdist.training import FinetuneModule
        from simdist.training.module import epoch_trainer, resumable_fit

        ft = FinetuneConfig(freeze=FreezePolicy.parse(freeze), epochs=epochs, windows_per_epoch=windows_per_epoch,
                            batch_size=batch_size, lr=lr, warmup_steps=warmup_steps, decay_steps=decay_steps)
        torch.manual_seed(seed)
        mcfg = self.world_model.config
        module = FinetuneModule(model=mcfg.to_dict(), freeze=ft.freeze, lr=ft.lr, end_lr=ft.final_lr,
                                warmup_steps=ft.warmup_steps, decay_steps=ft.schedule_steps,
                                value_target=ft.value_target, obs_noise=obs_noise, loss_weights=loss_weights)
        module.world_model.load_state_dict(self.world_model.state_dict())
        dm = TrajectoryDataModule(str(data), history=mcfg.history, horizon=mcfg.horizon, batch_size=ft.batch_size,
                                  windows_per_epoch=ft.windows_per_epoch, heldout_fraction=0.0,
                                  front_pad=mcfg.history, seed=seed)
        if out is None:
            epoch_trainer(Path("lightning_logs"), ft.epochs, progress).fit(module, dm)
        else:
            from simdist.data.shards import read_dataset_info
            from simdist.provenance import weights_fingerprint

            index = read_dataset_info(data)
            signature = {"data": str(Path(data).resolve()), "steps": index.get("num_steps"),
                         "episodes": index.get("num_episodes"), "start": weights_fingerprint(self.world_model),
                         "seed": seed, "finetune": ft.budget(), "freeze": str(ft.freeze), "obs_noise": obs_noise,
                         "loss_weights": loss_weights}
            resumable_fit(module, dm, out, ft.epochs, signature, progress)
        return SimDistAgent(module.world_model.eval(), copy.deepcopy(self.config), self.source)

    # -- Hub I/O -----------------------------------------------------------------------------
    def save_pretrained(self, folder: str | Path, **kwargs: Any) -> Path:
        """The world model's folder plus ``planner.json`` (``kwargs`` go to ``WorldModel.save_pretrained``);
        ``config.json`` names this class's ``agent_type``."""
        from simdist.agents import AGENT_TYPE_KEY
        from simdist.hub.files import PLANNER_NAME

        extra = {PLANNER_NAME: self.config.to_planner_dict(), **(kwargs.pop("extra_files", None) or {})}
        config = {**self.world_model.hub_config(), AGENT_TYPE_KEY: self.agent_type}
        return self.world_model.save_pretrained(folder, config=config, extra_files=extra, **kwargs)

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, **kwargs: Any) -> SimDistAgent:
        """Load the world model and ``planner.json`` (default planner settings when the folder has none)."""
        from simdist.hub.resolve import resolve_folder

        hub = {k: kwargs.pop(k) for k in ("revision", "cache_dir", "local_files_only", "token") if k in kwargs}
        folder, _ = resolve_folder(name_or_path, **hub)
        wm = WorldModel.from_pretrained(folder, **kwargs)
        return cls(wm, SimDistAgentConfig.from_folder(folder), source=str(name_or_path)).checked(folder)

    def checked(self, folder: Path) -> SimDistAgent:
        """Self, once its planner is built: settings of ``folder``'s ``planner.json`` that the planner refuses
        raise a ConfigError naming the file before any work."""
        from simdist.hub.files import PLANNER_NAME
        from simdist.model.config import config_file

        with config_file(Path(folder) / PLANNER_NAME):
            self.planner  # noqa: B018 (built for its checks)
        return self

