"""``BCAgent``: the paper's single-step behaviour-cloning baseline (SimDist's encoder with an MLP policy head).

:class:`BCPolicy` encodes the observation/action history with the same registered encoder a SimDist world model
uses, takes the latent of the current step (plus the current command for command-conditioned tasks) through an
MLP to one action, and clips it to the action bounds. Inputs are normalised by the library's
:class:`~simdist.model.normalization.Normalizer`, fitted from the dataset's statistics as pretraining does.

``BCModule`` (a LightningModule in :mod:`.training`, imported only to train) regresses the window's first
future action (MSE in normalised units) on :class:`~simdist.data.TrajectoryDataModule` windows; with
``expert_only`` only windows whose first future step is expert-flagged count. The Hub folder is
``config.json`` (``agent_type: "bc"``), ``model.safetensors`` and a model card, written atomically.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from simdist.agents import Agent
from simdist.components.agents.latent.bc_config import BCConfig
from simdist.components.agents.latent.bc_policy import HORIZON, BCPolicy, bc_freeze_policy
from simdist.model.config import WorldModelConfig, config_file
from simdist.model.freeze import FreezePolicy
from simdist.registry import register

__all__ = ["BCAgent", "count_windows"]

AGENT_TYPE = "bc"
#: the window paddings of :class:`~simdist.data.TrajectoryDataModule` (defaults, as pretraining uses them)
BEG_PAD = END_PAD = 5


def count_windows(data: str | Path | list[str], history: int, *, front_pad: int = 0, expert_only: bool = False,
                  stop_at: int | None = 1) -> int:
    """Training windows of the dataset ``data`` (only those whose first future step is expert-flagged with
    ``expert_only``), counted up to ``stop_at`` (None: all) so a check stops at the first one."""
    from simdist.data import front_pad as pad
    from simdist.data import iter_episodes, window_starts

    found = 0
    source = [str(d) for d in data] if isinstance(data, list) else str(data)
    for ep in iter_episodes(source, shuffle_shards=False, split_by_node=False, split_by_worker=False):
        ep = pad(ep, front_pad) if front_pad else ep
        starts = window_starts(len(ep), history, HORIZON, BEG_PAD, END_PAD)
        found += int(ep.expert[starts + history].sum()) if expert_only else len(starts)
        if stop_at is not None and found >= stop_at:
            break
    return found


def _check_positive(**values: Any) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


@register("agent", AGENT_TYPE)
class BCAgent(Agent):
    """A :class:`BCPolicy` acting deterministically on observation histories; ``train`` fits one on a dataset."""

    plans = False

    def __init__(self, policy: BCPolicy, source: str | None = None) -> None:
        self.policy = policy.eval()
        self.source = source  # the id or folder it was loaded from (the card's base model after finetuning)
        self.seed: int | None = None
        #: per-step training losses of the run that produced this agent (empty for a loaded one)
        self.train_losses: list[float] = []

    @property
    def config(self) -> BCConfig:
        return self.policy.config

    @property
    def device(self) -> torch.device:
        return self.policy.device

    def to(self, device: str | torch.device) -> BCAgent:
        """Move the policy to ``device``; returns self."""
        self.policy.to(device)
        return self

    # -- acting ------------------------------------------------------------------------------
    def act(self, history: Any) -> Tensor:
        """Actions (B, A) for the envs of the :class:`~simdist.planning.ObservationHistory` ``history``."""
        from simdist.planning.inputs import finite_actions

        obs_hist, act_hist, command = self.checked_inputs(history, self.config)
        return finite_actions(self.policy.act(obs_hist, act_hist, command), type(self).__name__)

    def reset(self, ids: Any = None, seed: int | None = None) -> None:
        """No per-env state; acting is deterministic, so the seed is only recorded."""
        if seed is not None:
            self.seed = int(seed)

    def new_history(self, num_envs: int) -> Any:
        from simdist.planning.history import ObservationHistory

        cfg = self.config
        return ObservationHistory(cfg.obs_spec, cfg.action_dim, cfg.command_dim, cfg.history, num_envs,
                                  device=self.device)

    # -- training ----------------------------------------------------------------------------
    @classmethod
    def train(cls, data: str | Path | list[str], config: BCConfig | WorldModelConfig, *, steps: int | None = None,
              epochs: int = 1, windows_per_epoch: int = 10_000, batch_size: int = 256, lr: float = 1e-3,
              end_lr: float | None = None, warmup_steps: int = 0, obs_noise: Any = None, front_pad: int = 0,
              seed: int = 0, out: str | Path | None = None, expert_only: bool = True,
              progress: bool = False) -> BCAgent:
        """Fit a new policy on the dataset folder(s) ``data``: the normaliser from the dataset's statistics
        (unless ``config.stats`` are given), then BC on its windows. ``steps`` (if given) replaces ``epochs`` and
        ``windows_per_epoch`` with one epoch of ``steps`` batches. ``expert_only`` (simulation data) trains on
        the expert-flagged steps only and raises before training when the dataset has none."""
        if isinstance(config, WorldModelConfig):
            config = BCConfig.from_world_model_config(config)
        if steps is not None:
            _check_positive(steps=steps, batch_size=batch_size)
            epochs, windows_per_epoch = 1, steps * batch_size
        policy, losses = _fit(copy.deepcopy(config), data, None, freeze="all", expert_only=expert_only,
                              epochs=epochs, windows_per_epoch=windows_per_epoch, batch_size=batch_size, lr=lr,
                              end_lr=end_lr, warmup_steps=warmup_steps, obs_noise=obs_noise, front_pad=front_pad,
                              seed=seed, out=out, progress=progress)
        agent = cls(policy)
        agent.train_losses = losses
        return agent

    @classmethod
    def train_on_encoder(cls, data: str | Path | list[str], world_model: Any, *, hidden: list[int] | None = None,
                         steps: int = 2_000, batch_size: int = 256, lr: float = 1e-3, seed: int = 0,
                         out: str | Path | None = None, expert_only: bool = True,
                         progress: bool = False) -> BCAgent:
        """The paper's single-step BC baseline: an MLP head on SimDist's frozen encoder (``world_model``'s weights
        and normaliser statistics, :meth:`BCPolicy.from_world_model`), trained for ``steps`` batches on the
        dataset folder(s) ``data``, on their expert-flagged steps with ``expert_only`` (BASELINES.md 6)."""
        _check_positive(steps=steps, batch_size=batch_size)
        start = BCPolicy.from_world_model(world_model, hidden=hidden)
        policy, losses = _fit(copy.deepcopy(start.config), data, start.state_dict(), freeze="heads_only",
                              expert_only=expert_only, epochs=1, windows_per_epoch=steps * batch_size,
                              batch_size=batch_size, lr=lr, end_lr=None, warmup_steps=0, obs_noise=None,
                              front_pad=start.config.history, seed=seed, out=out, progress=progress)
        agent = cls(policy)
        agent.train_losses = losses
        return agent

    def check_freeze(self, freeze: FreezePolicy | str) -> None:
        bc_freeze_policy(freeze)

    def finetune(self, data: str | Path, *, freeze: FreezePolicy | str = "all", out: str | Path | None = None,
                 seed: int = 0, epochs: int = 3, windows_per_epoch: int = 6_000, batch_size: int = 32, lr: float = 2e-4,
                 end_lr: float | None = None, warmup_steps: int = 0, obs_noise: Any = None,
                 front_pad: int | None = None, progress: bool = False) -> BCAgent:
        """A copy trained further by BC on every step of the demonstrations in ``data`` (expert flags ignored),
        keeping its normaliser statistics. ``freeze``: ``"all"`` or ``"heads_only"`` (encoder frozen), or a set
        of ``encoder``/``policy``; ``front_pad`` defaults to the history (as SimDist finetuning pads)."""
        policy, losses = _fit(copy.deepcopy(self.config), data, self.policy.state_dict(), freeze=freeze,
                              expert_only=False, epochs=epochs, windows_per_epoch=windows_per_epoch,
                              batch_size=batch_size, lr=lr, end_lr=end_lr, warmup_steps=warmup_steps,
                              obs_noise=obs_noise, front_pad=self.config.history if front_pad is None else front_pad,
                              seed=seed, out=out, progress=progress)
        agent = BCAgent(policy.to(self.device), self.source)
        agent.train_losses = losses
        return agent

    # -- Hub I/O -----------------------------------------------------------------------------
    def save_pretrained(self, folder: str | Path, *, base_model: str | None = None,
                        metrics: Mapping[str, Any] | None = None, description: str = "") -> Path:
        """Write ``config.json`` (with ``agent_type: "bc"``), ``model.safetensors`` and ``README.md`` into
        ``folder`` atomically (a temporary sibling replaces it once complete); returns the folder. An existing
        ``folder`` must be empty or a previous export."""
        from simdist.agents import AGENT_TYPE_KEY
        from simdist.hub.files import CARD_NAME
        from simdist.hub.folder import save_target, write_folder

        target = save_target(folder)
        card = self._model_card(target.name, base_model=base_model, metrics=metrics, description=description)
        config = {**self.policy.export_config().to_dict(), AGENT_TYPE_KEY: self.agent_type}
        return write_folder(target, config, self.policy, {CARD_NAME: card})

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, *, map_location: str | torch.device = "cpu",
                        **hub: Any) -> BCAgent:
        """Load from a folder or Hub id (``hub``: ``revision``, ``cache_dir``, ``local_files_only``, ``token``);
        the weights must match the architecture exactly (strict loading)."""
        from simdist.agents import open_agent_folder
        from simdist.hub.files import CONFIG_NAME, WEIGHTS_NAME
        from simdist.hub.load import load_state, read_weights

        folder, source, data = open_agent_folder(name_or_path, AGENT_TYPE, hub, "BCAgent.from_pretrained")
        with config_file(folder / CONFIG_NAME):
            policy = BCPolicy(BCConfig.from_dict(data))
        load_state(policy, read_weights(folder / WEIGHTS_NAME), strict=True, where=f"{WEIGHTS_NAME} of {source}")
        policy.config.stats = policy.normalizer.stats() if bool(policy.normalizer.fitted) else None
        return cls(policy.to(map_location), source=str(name_or_path))

    def _model_card(self, folder_name: str, *, base_model: str | None, metrics: Mapping[str, Any] | None,
                    description: str) -> str:
        from huggingface_hub import ModelCardData

        from simdist.hub.files import DEFAULT_LICENSE, LIBRARY_NAME, PIPELINE_TAG
        from simdist.hub.resolve import hub_repo_id

        cfg = self.config
        tags = ["simdist", "behavior-cloning", "robotics", *(t for t in (cfg.task, cfg.robot) if t)]
        tags = list(dict.fromkeys(tags))
        base = hub_repo_id(base_model) if base_model else None
        data = ModelCardData(library_name=LIBRARY_NAME, pipeline_tag=PIPELINE_TAG, license=DEFAULT_LICENSE,
                             tags=tags, base_model=base)
        counts = self.policy.count_parameters()
        obs = ", ".join(f"`{k}` {v}" for k, v in cfg.obs_spec.items())
        lines = [
            "---", data.to_yaml(), "---", "",
            f"# {folder_name or 'bc'}", "",
            *([description, ""] if description else []),
            f"A single-step behaviour-cloning policy{f' for the task `{cfg.task}`' if cfg.task else ''}: the "
            f"registered `{cfg.encoder.name}` encoder of the observation history (as in a SimDist world model) and "
            f"an MLP head {cfg.hidden} that outputs one action, clipped to the action bounds.",
            *(["", f"Finetuned from `{base_model}`."] if base_model else []), "",
            "| Setting | Value |", "|---|---|",
            f"| observations | {obs} |", f"| action dim | {cfg.action_dim} |", f"| command dim | {cfg.command_dim} |",
            f"| history | {cfg.history} steps (dt = {cfg.dt} s) |", f"| latent dim | {cfg.latent_dim} |",
            f"| parameters | {counts['total']:,} (encoder {counts['encoder']:,}, head {counts['policy']:,}) |",
            f"| normaliser fitted | {'yes' if bool(self.policy.normalizer.fitted) else 'no'} |",
            *(f"| {k} | {v} |" for k, v in (metrics or {}).items()), "",
            "## Usage", "", "```python", "from simdist.agents import load_agent", "",
            f'agent = load_agent("{folder_name or "<folder>"}")', "history = agent.new_history(num_envs=1)",
            "history.reset(obs)  # then agent.act(history) -> (1, action_dim)", "```", "",
        ]
        return "\n".join(lines)


def _fit(config: BCConfig, data: str | Path | list[str], init_state: Mapping[str, Tensor] | None, *,
         freeze: Any, expert_only: bool, epochs: int, windows_per_epoch: int, batch_size: int, lr: float,
         end_lr: float | None, warmup_steps: int, obs_noise: Any, front_pad: int, seed: int,
         out: str | Path | None, progress: bool) -> tuple[BCPolicy, list[float]]:
    """Train a policy (initialised from ``init_state`` when given) with Lightning; returns it and its losses."""
    from simdist.data import TrajectoryDataModule
    from simdist.training.module import epoch_trainer

    _check_positive(epochs=epochs, windows_per_epoch=windows_per_epoch, batch_size=batch_size)
    policy = bc_freeze_policy(freeze)  # a bad option fails before any data is read; the policy travels on
    source = [str(d) for d in data] if isinstance(data, list) else str(data)
    if count_windows(source, config.history, front_pad=front_pad) == 0:
        raise ValueError(f"{data}: no training windows (episodes need more than history + {HORIZON} + "
                         f"{BEG_PAD + END_PAD} steps; front_pad={front_pad})")
    if expert_only and count_windows(source, config.history, front_pad=front_pad, expert_only=True) == 0:
        raise ValueError(f"expert_only=True but {data} has no expert-flagged steps to imitate; pass "
                         "expert_only=False to train on every step (demonstrations recorded by rollouts)")
    torch.manual_seed(seed)
    from simdist.components.agents.bc.training import BCModule

    module = BCModule(config=config.to_dict(), freeze=policy, expert_only=expert_only, lr=lr, end_lr=end_lr,
                      warmup_steps=warmup_steps, decay_steps=max(epochs * windows_per_epoch // batch_size, 1),
                      obs_noise=obs_noise)
    if init_state is not None:
        module.policy.load_state_dict(init_state, strict=True)
    dm = TrajectoryDataModule(source, history=config.history, horizon=HORIZON, batch_size=batch_size,
                              windows_per_epoch=windows_per_epoch, heldout_fraction=0.0, front_pad=front_pad,
                              beg_pad=BEG_PAD, end_pad=END_PAD, seed=seed)
    root = Path(out) if out is not None else Path("lightning_logs")
    with warnings.catch_warnings():
        for noise in (".*does not have many workers.*", ".*no `validation_step`.*", ".*`__len__` defined.*"):
            warnings.filterwarnings("ignore", message=noise)  # no workers and no validation here, by design
        epoch_trainer(root, epochs, progress).fit(module, dm)
    return module.policy.eval(), list(module.step_losses)
