"""``SimDistBCAgent``: the paper's SimDist+BC, SimDist plus behaviour cloning of the base policy head on demos.

Finetuning runs SimDist's (supervised system identification of the dynamics on the logged real episodes), then,
when the agent has demonstrations, trains only the world model's policy head π_θ (the action-chunk head that
warm-starts MPPI) on them with the BC loss; encoder, reward and value stay frozen. Acting is SimDist's planner.
The demonstrations are a dataset folder named in the agent's :class:`SimDistBCConfig` (or given to
:meth:`SimDistBCAgent.finetune`), so the adaptation loop, which passes only SimDist's finetuning options, uses
them. The Hub folder is SimDist's (``agent_type: "simdist_bc"``) plus ``simdist_bc.json``.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import torch

from simdist.components.agents.simdist.bc.configuration import BC_CONFIG_NAME, SimDistBCConfig
from simdist.components.agents.simdist.configuration import SimDistAgentConfig
from simdist.components.agents.simdist.modeling import SimDistAgent
from simdist.model.config import WorldModelConfig, config_file
from simdist.model.freeze import FINETUNE, FreezePolicy
from simdist.model.world_model import WorldModel
from simdist.registry import register

__all__ = ["SimDistBCAgent"]

AGENT_TYPE = "simdist_bc"
_CARD_DESCRIPTION = ("A SimDist+BC agent: a SimDist world model whose dynamics are finetuned on real episodes and "
                     f"whose base policy head is cloned on demonstrations (`{BC_CONFIG_NAME}` names them). Load it "
                     "with `simdist.agents.load_agent`.")


def _folder(path: str | Path | None) -> str | None:
    return None if path is None else str(Path(path).expanduser().resolve())


@register("agent", AGENT_TYPE)
class SimDistBCAgent(SimDistAgent):
    """A SimDist agent whose finetuning also clones the policy head on :attr:`demos`."""


    def __init__(self, world_model: WorldModel, config: SimDistAgentConfig | None = None, source: str | None = None,
                 bc_config: SimDistBCConfig | None = None) -> None:
        super().__init__(world_model, config, source)
        self.bc_config = bc_config or SimDistBCConfig()

    @property
    def demos(self) -> str | None:
        """The demonstrations' dataset folder (None: finetuning is SimDist's)."""
        return self.bc_config.demos

    @classmethod
    def from_simdist(cls, agent: SimDistAgent, demos: str | Path | None = None, **bc: Any) -> SimDistBCAgent:
        """SimDist+BC from a SimDist agent (its world model, planner settings and source), with the demonstrations
        ``demos`` (stored as an absolute path) and optional ``bc_epochs``, ``bc_windows_per_epoch``, ``bc_lr``."""
        return cls(agent.world_model, copy.deepcopy(agent.config), agent.source,
                   SimDistBCConfig(demos=_folder(demos), **bc))

    def with_demos(self, demos: str | Path | None) -> SimDistBCAgent:
        """The same agent with the demonstrations ``demos`` (None: none)."""
        return self._like(self.world_model, self.config, dataclasses.replace(self.bc_config, demos=_folder(demos)))

    def with_settings(self, **settings: Any) -> SimDistBCAgent:
        planning = super().with_settings(**settings)
        return self._like(planning.world_model, planning.config)

    def _like(self, world_model: WorldModel, config: SimDistAgentConfig,
              bc_config: SimDistBCConfig | None = None) -> SimDistBCAgent:
        return type(self)(world_model, config, self.source, copy.deepcopy(bc_config or self.bc_config))

    # -- finetuning --------------------------------------------------------------------------
    def finetune(self, data: str | Path, *, demos: str | Path | None = None,
                 freeze: FreezePolicy | str = FINETUNE.freeze, out: str | Path | None = None, seed: int = 0,
                 epochs: int = FINETUNE.epochs,
                 windows_per_epoch: int = FINETUNE.windows_per_epoch, batch_size: int = FINETUNE.batch_size,
                 lr: float = FINETUNE.lr, warmup_steps: int = FINETUNE.warmup_steps, obs_noise: Any = None,
                 loss_weights: dict[str, float] | None = None, progress: bool = False, bc_epochs: int | None = None,
                 bc_windows_per_epoch: int | None = None, bc_lr: float | None = None) -> SimDistBCAgent:
        """SimDist's finetuning on ``data`` (``freeze``, ``loss_weights`` and the schedule apply to it), then BC
        of the policy head alone on the demonstrations (``demos``, else the agent's :attr:`demos`; none: SimDist's
        finetuning only) with the action loss alone, every demo step counting (:class:`DemoBCModule`).

        ``bc_epochs``, ``bc_windows_per_epoch``, ``bc_lr`` (else the agent's settings, else ``epochs``,
        ``windows_per_epoch``, ``lr``) schedule the BC phase, seeded by ``seed``; its logs go to ``out/bc``.
        The copy records the demonstrations and BC settings it was trained with."""
        given = {"demos": _folder(demos), "bc_epochs": bc_epochs, "bc_windows_per_epoch": bc_windows_per_epoch,
                 "bc_lr": bc_lr}
        bc = dataclasses.replace(self.bc_config, **{k: v for k, v in given.items() if v is not None})
        if bc.demos is not None:
            self._check_demos(bc.demos)
        tuned = super().finetune(data, freeze=freeze, out=out, seed=seed, epochs=epochs,
                                 windows_per_epoch=windows_per_epoch, batch_size=batch_size, lr=lr,
                                 warmup_steps=warmup_steps, obs_noise=obs_noise, loss_weights=loss_weights,
                                 progress=progress)
        model = tuned.world_model
        if bc.demos is not None:
            root = (Path(out) if out is not None else Path("lightning_logs")) / "bc"
            model = clone_policy_head(model, bc.demos, root=root, seed=seed, epochs=bc.bc_epochs or epochs,
                                      windows_per_epoch=bc.bc_windows_per_epoch or windows_per_epoch,
                                      batch_size=batch_size, lr=bc.bc_lr or lr, warmup_steps=warmup_steps,
                                      obs_noise=obs_noise, progress=progress)
        return self._like(model, copy.deepcopy(self.config), bc)

    def _check_demos(self, demos: str) -> None:
        """Refuse, before any training, demonstrations that are not a dataset folder or a model without a policy
        head."""
        if not (Path(demos) / "dataset.json").is_file():
            raise FileNotFoundError(f"demos {demos!r}: not a dataset folder (no dataset.json); record one with "
                                    "`simdist demos`")
        if self.world_model.policy is None:
            raise ValueError("SimDist+BC clones the world model's policy head, and this model has none "
                             "(policy_head in its config)")

    # -- Hub I/O -----------------------------------------------------------------------------
    def save_pretrained(self, folder: str | Path, **kwargs: Any) -> Path:
        """SimDist's folder (``config.json`` with ``agent_type: "simdist_bc"``, weights, card, ``planner.json``)
        plus ``simdist_bc.json``, one more extra file of the same atomic write."""
        card = dict(kwargs.pop("model_card_kwargs", None) or {})
        card.setdefault("description", _CARD_DESCRIPTION)
        extra = {BC_CONFIG_NAME: self.bc_config.to_dict(), **(kwargs.pop("extra_files", None) or {})}
        return super().save_pretrained(folder, model_card_kwargs=card, extra_files=extra, **kwargs)

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, *, strict: bool = True,
                        map_location: str | torch.device = "cpu", **hub: Any) -> SimDistBCAgent:
        """Load the world model (``strict``: the weights must match the architecture exactly), ``planner.json``
        and ``simdist_bc.json`` from a folder or Hub id (``hub``: ``revision``, ``cache_dir``,
        ``local_files_only``, ``token``)."""
        from simdist.agents import open_agent_folder
        from simdist.hub.files import CONFIG_NAME, WEIGHTS_NAME
        from simdist.hub.load import load_state, read_weights

        folder, source, data = open_agent_folder(name_or_path, cls.agent_type, hub, f"{cls.__name__}.from_pretrained")
        with config_file(folder / CONFIG_NAME):
            model = WorldModel(WorldModelConfig.from_dict(data))
        load_state(model, read_weights(folder / WEIGHTS_NAME), strict=strict, where=f"{WEIGHTS_NAME} of {source}")
        return cls(model.to(map_location).eval(), SimDistAgentConfig.from_folder(folder), source=str(name_or_path),
                   bc_config=SimDistBCConfig.from_folder(folder)).checked(folder)


def clone_policy_head(world_model: WorldModel, demos: str | Path, *, root: str | Path, seed: int, epochs: int,
                      windows_per_epoch: int, batch_size: int, lr: float, warmup_steps: int, obs_noise: Any = None,
                      progress: bool = False) -> WorldModel:
    """A copy of ``world_model`` whose policy head alone is trained by BC on every step of the dataset folder
    ``demos`` (SimDist's finetuning schedule: warmup, then decay to ``lr / 2``; ``front_pad`` = the history)."""
    from simdist.components.agents.simdist.bc.training import BC_LOSS_WEIGHTS, DemoBCModule
    from simdist.data import TrajectoryDataModule
    from simdist.training.module import epoch_trainer

    torch.manual_seed(seed)
    mcfg = world_model.config
    module = DemoBCModule(model=mcfg.to_dict(), freeze=["policy"], lr=lr, end_lr=lr / 2, warmup_steps=warmup_steps,
                          decay_steps=max(10 * warmup_steps, 2_000), obs_noise=obs_noise,
                          loss_weights=BC_LOSS_WEIGHTS)
    module.world_model.load_state_dict(world_model.state_dict())
    dm = TrajectoryDataModule(str(demos), history=mcfg.history, horizon=mcfg.horizon, batch_size=batch_size,
                              windows_per_epoch=windows_per_epoch, heldout_fraction=0.0, front_pad=mcfg.history,
                              seed=seed)
    epoch_trainer(Path(root), epochs, progress).fit(module, dm)
    return module.world_model.eval()
