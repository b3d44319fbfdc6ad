"""``LatentAgent``: the shared body of the model-free baselines (IQL, RLPD, SGFT).

Each is an MLP actor and its critics on SimDist's frozen encoder (the paper's rule: "the same encoders as
SimDist, but with an MLP policy head"). The actor is a :class:`~simdist.components.agents.latent.BCPolicy` whose head
gives the mean of a Gaussian over normalised actions, with a state-independent log-std; it starts from the
single-step BC policy (:meth:`LatentAgent.from_bc`). Acting is deterministic (the mean) unless the agent was
set to ``explore`` (a sample: how the RL methods collect real data).

A subclass names its parts (:meth:`build_parts`), its hyperparameters (:attr:`default_settings`, from
BASELINES.md) and one gradient update (:meth:`update`). This class does the rest: the replay of a prior
(simulation data and demos) and the online real data, encoded once in the frozen feature space; online
finetuning with ``utd`` updates per new real transition (the paper's per-episode updates when called after
every episode); offline pretraining; and the Hub folder (``config.json`` with the BC policy config and the
settings, ``model.safetensors`` with every part, ``optimizer.pt`` with the optimisers and counters, so a run
resumed from a saved agent continues exactly).
"""

from __future__ import annotations

import abc
import copy
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor, nn

from simdist.agents import Agent, check_encoder_frozen
from simdist.components.agents.latent.replay import EncodedFolders, mixed_batch, uniform_batch
from simdist.components.agents.latent.transitions import REWARD_LABELS, Transitions, encode_transitions
from simdist.model.config import ConfigError, config_file
from simdist.model.freeze import FreezePolicy

__all__ = ["COMMON_SETTINGS", "LatentAgent", "LatentModel"]

OPTIMIZER_NAME = "optimizer.pt"

#: settings every latent agent takes (algorithm settings come on top)
COMMON_SETTINGS: dict[str, Any] = {
    "rewards": "sparse",  # reward labels of the replay: "sparse" success, the "logged" rewards or the "model"'s
    "reward_model": "",  # with rewards="model": the SimDist model (folder or Hub id) whose reward head labels them
    "gamma": 0.99,
    "batch_size": 256,
    "lr": 3e-4,
    "utd": 1,  # gradient updates per new real transition
    "online_fraction": 0.5,  # share of each batch from the online (real) buffer once it has data
    "init_log_std": -1.0,  # the Gaussian's log-std when the actor starts from BC (BASELINES.md 6)
    "hidden": [256, 256],  # critic / value MLP sizes
}


class LatentModel(nn.Module):
    """The policy (:class:`~simdist.components.agents.latent.BCPolicy`, encoder frozen), its Gaussian log-std and
    the algorithm's parts (``parts``: critics, targets, value, temperature ...)."""

    def __init__(self, policy: nn.Module, init_log_std: float) -> None:
        super().__init__()
        self.policy = policy
        self.log_std = nn.Parameter(torch.full((policy.config.action_dim,), float(init_log_std)))
        self.parts = nn.ModuleDict()
        self.policy.encoder.requires_grad_(False)

    @property
    def feature_dim(self) -> int:
        return int(self.policy.feature_dim)

    @property
    def action_dim(self) -> int:
        return int(self.policy.config.action_dim)

    def gaussian_head(self) -> GaussianHead:
        """The actor as a module ``features -> (mean, std)`` sharing this model's parameters."""
        return GaussianHead(self.policy.policy, self.log_std)

    def train(self, mode: bool = True) -> LatentModel:
        """Like ``nn.Module.train``, but the frozen encoder stays in eval mode (no dropout or batch statistics)."""
        super().train(mode)
        self.policy.encoder.eval()
        return self

    def mean_std(self, features: Tensor) -> tuple[Tensor, Tensor]:
        """The Gaussian over normalised actions at ``features``: mean and std, both (B, A)."""
        return self.gaussian_head()(features)


class GaussianHead(nn.Module):
    """``features -> (mean, std)``: the policy MLP's output and a state-independent std (log-std clamped to
    [-5, 2], as IQL's policy)."""

    def __init__(self, mlp: nn.Module, log_std: nn.Parameter) -> None:
        super().__init__()
        self.mlp = mlp
        self.log_std = log_std

    def forward(self, features: Tensor) -> tuple[Tensor, Tensor]:
        mean = self.mlp(features)
        return mean, self.log_std.clamp(-5.0, 2.0).exp().expand_as(mean)


def _check_settings(cls: type[LatentAgent], settings: Mapping[str, Any]) -> dict[str, Any]:
    defaults = {**COMMON_SETTINGS, **cls.default_settings}
    unknown = sorted(set(settings) - set(defaults))
    if unknown:
        raise ConfigError(f"{cls.agent_type}: unknown settings {unknown}; it takes {sorted(defaults)}")
    out = {**copy.deepcopy(defaults), **copy.deepcopy(dict(settings))}
    for key, default in defaults.items():
        value = out[key]
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, (int, float)):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            if ok and isinstance(default, int) and not isinstance(default, bool):
                ok = float(value).is_integer()
                value = int(value) if ok else value
        elif isinstance(default, list):
            ok = isinstance(value, (list, tuple)) and all(isinstance(v, int) and v > 0 for v in value)
            value = list(value) if ok else value
        else:
            ok = isinstance(value, type(default))
        if not ok:
            raise ConfigError(f"{cls.agent_type}: setting {key!r} must be like {default!r}, got {value!r}")
        out[key] = value
    if out["rewards"] not in REWARD_LABELS:
        raise ConfigError(f"{cls.agent_type}: setting 'rewards' must be one of {REWARD_LABELS}, got {out['rewards']!r}")
    if (out["rewards"] == "model") != bool(out["reward_model"]):
        raise ConfigError(f"{cls.agent_type}: setting 'reward_model' names the SimDist model whose reward head labels "
                          "the transitions; give it with rewards='model' (and only then)")
    for key in ("batch_size", "utd"):
        if out[key] < 1:
            raise ConfigError(f"{cls.agent_type}: setting {key!r} must be >= 1, got {out[key]!r}")
    if not 0.0 <= out["online_fraction"] <= 1.0:
        raise ConfigError(f"{cls.agent_type}: online_fraction must be in [0, 1], got {out['online_fraction']!r}")
    if not 0.0 < out["gamma"] <= 1.0 or out["lr"] <= 0:
        raise ConfigError(f"{cls.agent_type}: gamma must be in (0, 1] and lr > 0, got {out['gamma']}, {out['lr']}")
    return out


class LatentAgent(Agent):
    """A model-free agent on a frozen SimDist encoder; see the module docstring."""

    plans = False
    #: collection with a sampled (exploring) action; evaluation with the mean
    explores: ClassVar[bool] = True
    #: the algorithm's hyperparameters beyond :data:`COMMON_SETTINGS` (and overrides of those)
    default_settings: ClassVar[dict[str, Any]] = {}
    #: the actor's class, built from its config dict (the ``bc`` agent's ``BCPolicy``: an encoder with an MLP head
    #: and a normaliser, exposing ``features``, ``policy``, ``config``, ``export_config`` and ``clip``)
    policy_class: ClassVar[type[nn.Module]]

    def __init__(self, model: LatentModel, settings: Mapping[str, Any], source: str | None = None,
                 counters: Mapping[str, int] | None = None, optim_state: Mapping[str, Any] | None = None) -> None:
        self.model = model.eval()
        self.settings = _check_settings(type(self), settings)
        self.source = source
        self.counters = {"updates": 0, "online_seen": 0, **dict(counters or {})}
        self.explore = False
        #: "pretraining" or "finetuning" while updates run (an algorithm may update differently in each)
        self.phase = "finetuning"
        self.seed: int | None = None
        self._generator = torch.Generator(device="cpu")
        self._optimizers: dict[str, torch.optim.Optimizer] | None = None
        self._optim_state = dict(optim_state) if optim_state else None
        self._encoded: EncodedFolders | None = None
        self._target_updater: Any = None
        #: metrics of the last update run (mean per key)
        self.last_metrics: dict[str, float] = {}

    # -- the algorithm ------------------------------------------------------------------------
    @classmethod
    @abc.abstractmethod
    def build_parts(cls, model: LatentModel, settings: Mapping[str, Any]) -> dict[str, nn.Module]:
        """The algorithm's modules (critics, targets, value, temperature, loss modules ...) for ``settings`` on
        ``model`` (its policy and log-std exist already; parts may share their parameters)."""

    @classmethod
    def make_model(cls, policy: nn.Module, settings: Mapping[str, Any]) -> LatentModel:
        """``policy`` (taken as is) with its log-std and this algorithm's parts."""
        model = LatentModel(policy, settings["init_log_std"])
        model.parts.update(cls.build_parts(model, settings))
        return model

    @abc.abstractmethod
    def optimizer_groups(self) -> dict[str, list[nn.Parameter]]:
        """Parameters of each optimiser (one Adam per name, at the ``lr`` setting)."""

    @abc.abstractmethod
    def update(self, batch: Mapping[str, Tensor], optimizers: Mapping[str, torch.optim.Optimizer]) -> dict[str, float]:
        """One gradient update on ``batch`` (a :meth:`Transitions.take` dict); returns scalar metrics."""

    @property
    def loss_module(self) -> Any:
        """The torchrl loss module of the ``loss`` part (agents that build one in :meth:`build_parts`)."""
        return self.model.parts["loss"]

    def target_updater(self) -> Any:
        """torchrl's Polyak ``SoftUpdate`` (rate: the ``polyak`` setting) of the ``loss`` part's target networks."""
        if self._target_updater is None:
            from torchrl.objectives import SoftUpdate

            self._target_updater = SoftUpdate(self.loss_module, tau=float(self.settings["polyak"]))
        return self._target_updater

    # -- construction -------------------------------------------------------------------------
    @property
    def policy(self) -> Any:
        return self.model.policy

    @property
    def config(self) -> Any:
        return self.model.policy.config

    @property
    def device(self) -> torch.device:
        return self.model.policy.device

    @classmethod
    def build(cls, policy: nn.Module, **settings: Any) -> LatentAgent:
        """An agent whose actor starts from ``policy`` (a BCPolicy, copied; its encoder is frozen)."""
        full = _check_settings(cls, settings)
        policy = copy.deepcopy(policy)
        return cls(cls.make_model(policy, full).to(policy.device), full)

    @classmethod
    def from_bc(cls, bc: Any, **settings: Any) -> LatentAgent:
        """The paper's start: the actor is the single-step BC policy ``bc`` (a BCAgent or BCPolicy)."""
        return cls.build(bc if isinstance(bc, nn.Module) else bc.policy, **settings)

    # -- acting -------------------------------------------------------------------------------
    def act(self, history: Any) -> Tensor:
        from simdist.planning.inputs import finite_actions

        obs_hist, act_hist, command = self.checked_inputs(history, self.config)
        policy, dev = self.policy, self.device
        with torch.no_grad():
            obs = {k: v.to(dev, torch.float32) for k, v in obs_hist.items()}
            cmd = command.to(dev, torch.float32) if command is not None else None
            feats = policy.features(obs, act_hist.to(dev, torch.float32), cmd)
            mean, std = self.model.mean_std(feats)
            if self.explore:
                noise = torch.randn(mean.shape, generator=self._generator).to(dev)
                mean = mean + std * noise
            return finite_actions(policy.clip(policy.normalizer.denormalize("actions", mean)), type(self).__name__)

    def reset(self, ids: Any = None, seed: int | None = None) -> None:
        if seed is not None:
            self.seed = int(seed)
            self._generator.manual_seed(int(seed))

    def new_history(self, num_envs: int) -> Any:
        from simdist.planning.history import ObservationHistory

        cfg = self.config
        return ObservationHistory(cfg.obs_spec, cfg.action_dim, cfg.command_dim, cfg.history, num_envs,
                                  device=self.device)

    def with_settings(self, **settings: Any) -> LatentAgent:
        """``explore`` (sample actions, for collection: a shallow copy that shares the weights) and ``seed``;
        anything else is refused."""
        explore = settings.pop("explore", None)
        agent = self
        if explore is not None and bool(explore) != self.explore:
            agent = copy.copy(self)
            agent.explore = bool(explore)
            agent._generator = torch.Generator(device="cpu")
            agent._generator.set_state(self._generator.get_state())
        return Agent.with_settings(agent, **settings)

    # -- training -------------------------------------------------------------------------------
    def encoded_replay(self) -> EncodedFolders:
        """What encodes dataset folders into this agent's transitions (its policy's frozen encoder and reward
        labels), built on first use."""
        if self._encoded is None:
            reward_model = None
            if self.settings["rewards"] == "model":
                from simdist.agents import load_agent

                reward_model = load_agent(self.settings["reward_model"]).world_model.to(self.device)
            self._encoded = EncodedFolders(self.policy, self.settings["rewards"], reward_model)
        return self._encoded

    def transitions(self, episodes: Iterable[Any], rewards: str | None = None) -> Transitions:
        """``episodes`` as this agent learns from them: transitions in its frozen encoder's feature space, labelled
        with ``rewards`` (a label kind of :data:`REWARD_LABELS`; None: the agent's own)."""
        kind = self.settings["rewards"] if rewards is None else rewards
        reward_model = self.encoded_replay().reward_model if kind == "model" else None
        return encode_transitions(self.policy, episodes, kind, reward_model)

    def optimizers(self) -> dict[str, torch.optim.Optimizer]:
        """One Adam per :meth:`optimizer_groups` entry (state restored from a saved agent)."""
        if self._optimizers is None:
            self._optimizers = {name: torch.optim.Adam(params, lr=self.settings["lr"])
                                for name, params in self.optimizer_groups().items()}
            if self._optim_state:
                for name, opt in self._optimizers.items():
                    opt.load_state_dict(self._optim_state[name])
        return self._optimizers

    def _copy(self) -> LatentAgent:
        """A deep copy sharing the encoded-data cache (the encoder is frozen, so its features stay valid)."""
        model = self.make_model(copy.deepcopy(self.model.policy), self.settings).to(self.device)
        model.load_state_dict(self.model.state_dict(), strict=True)  # parts rebuilt, so shared parameters stay shared
        clone = type(self)(model, self.settings, self.source, dict(self.counters))
        if self._optimizers is not None:
            clone._optim_state = {k: copy.deepcopy(o.state_dict()) for k, o in self._optimizers.items()}
        elif self._optim_state:
            clone._optim_state = copy.deepcopy(self._optim_state)
        clone._encoded = self._encoded
        if clone._encoded is not None:
            clone._encoded.policy = clone.policy
        return clone

    def _run(self, updates: int, draw: Any, seed: int, progress: bool, what: str) -> list[dict[str, float]]:
        """``updates`` gradient updates on batches from ``draw``, seeded by ``seed`` and the update count (torch's
        global generator, which torchrl's losses sample from, is seeded inside and restored after)."""
        run_seed = int(np.random.SeedSequence([int(seed), self.counters["updates"]]).generate_state(1)[0])
        self._generator.manual_seed(run_seed)
        opts = self.optimizers()
        if "loss" in self.model.parts:
            self.target_updater()  # before the loss's first use (torchrl warns about a loss without one)
        self.phase = what
        self.model.train()
        history, started = [], time.perf_counter()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(run_seed)
            for i in range(updates):
                batch = {k: v.to(self.device) for k, v in draw().items()}  # replay stays on the CPU
                metrics = self.update(batch, opts)
                bad = [k for k, v in metrics.items() if not math.isfinite(v)]
                if bad:
                    raise FloatingPointError(f"{self.agent_type} {what} diverged at update "
                                             f"{self.counters['updates']}: { {k: metrics[k] for k in bad} }")
                history.append(metrics)
                self.counters["updates"] += 1
                if progress and (i + 1) % max(1, updates // 10) == 0:
                    rate = (i + 1) / (time.perf_counter() - started)
                    print(f"[{self.agent_type} {what}] {i + 1}/{updates} updates, ETA "
                          f"{(updates - i - 1) / rate:.0f}s", flush=True)
        self.model.eval()
        self.phase = "finetuning"
        self.last_metrics = {k: float(np.mean([m[k] for m in history])) for k in history[0]} if history else {}
        return history

    def pretrain(self, prior: str | Path | Sequence[str | Path], *, updates: int, seed: int = 0,
                 progress: bool = False) -> LatentAgent:
        """A copy trained offline for ``updates`` steps on the dataset folder(s) ``prior`` (simulation data and
        demonstrations), as IQL's offline phase or SGFT's V_sim regression."""
        if isinstance(updates, bool) or not isinstance(updates, int) or updates < 0:
            raise ValueError(f"updates must be an integer >= 0, got {updates!r}")
        agent = self._copy()
        data = agent.encoded_replay().load(prior)
        if data is None:
            raise ValueError(f"{prior}: no transitions to pretrain on")
        agent._run(updates, lambda: uniform_batch(data, agent.settings["batch_size"], agent._generator), seed, progress,
                   "pretraining")
        return agent

    def check_freeze(self, freeze: FreezePolicy | str) -> None:
        check_encoder_frozen(freeze, f"a {self.agent_type} agent trains its heads")

    def finetune(self, data: str | Path, *, prior: str | Path | Sequence[str | Path] | None = None,
                 freeze: FreezePolicy | str = "heads_only", out: str | Path | None = None, seed: int = 0,
                 updates: int | None = None, progress: bool = False, **unused: Any) -> LatentAgent:
        """A copy updated online: ``utd`` gradient updates per real transition of ``data`` not seen before
        (``updates`` overrides the count), on batches mixing the real data with the ``prior`` folders by
        ``online_fraction``. The encoder stays frozen (``freeze`` must be ``heads_only`` or ``all``, which here
        mean the same: an unfrozen encoder is not offered). ``unused``: the world-model finetuning options the
        adaptation loop passes every agent (epochs, lr, ...), ignored: this agent's settings hold its own."""
        self.check_freeze(freeze)
        agent = self._copy()
        enc = agent.encoded_replay()
        online = enc.load(data)
        offline = enc.load(prior) if prior is not None else None
        seen = len(online) if online is not None else 0
        count = updates if updates is not None else agent.settings["utd"] * max(seen - agent.counters["online_seen"], 0)
        s = agent.settings
        agent._run(count, lambda: mixed_batch(offline, online, s["batch_size"], s["online_fraction"],
                                              agent._generator), seed, progress, "finetuning")
        agent.counters["online_seen"] = seen
        return agent

    # -- Hub I/O ------------------------------------------------------------------------------------
    def save_pretrained(self, folder: str | Path, *, base_model: str | None = None,
                        metrics: Mapping[str, Any] | None = None, description: str = "") -> Path:
        """``config.json`` (``agent_type``, the policy config, the settings, the counters), ``model.safetensors``,
        ``optimizer.pt`` and a model card, written atomically."""
        from simdist.agents import AGENT_TYPE_KEY
        from simdist.hub.files import CARD_NAME
        from simdist.hub.folder import save_target, write_folder

        target = save_target(folder)
        config = {"policy": self.policy.export_config().to_dict(), "settings": self.settings,
                  "counters": dict(self.counters), AGENT_TYPE_KEY: self.agent_type}
        card = self._model_card(target.name, base_model, metrics, description)
        path = write_folder(target, config, self.model, {CARD_NAME: card})
        opt = {k: o.state_dict() for k, o in self._optimizers.items()} if self._optimizers else self._optim_state
        if opt:
            from simdist.fsutil import atomic_path

            with atomic_path(path / OPTIMIZER_NAME) as tmp:
                torch.save(opt, tmp)
        return path

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, *, map_location: str | torch.device = "cpu",
                        **hub: Any) -> LatentAgent:
        """Load a folder or Hub id written by :meth:`save_pretrained` (strict: the weights must match)."""
        from simdist.agents import open_agent_folder
        from simdist.hub.files import CONFIG_NAME, WEIGHTS_NAME
        from simdist.hub.load import load_state, read_weights

        folder, source, data = open_agent_folder(name_or_path, cls.agent_type, hub, f"{cls.__name__}.from_pretrained")
        for key in ("policy", "settings"):
            if not isinstance(data.get(key), Mapping):
                raise ConfigError(f"{folder / CONFIG_NAME}: {key!r} must be an object")
        with config_file(folder / CONFIG_NAME):
            settings = _check_settings(cls, data["settings"])
            model = cls.make_model(cls.policy_class(data["policy"]), settings)
        load_state(model, read_weights(folder / WEIGHTS_NAME), strict=True, where=f"{WEIGHTS_NAME} of {source}")
        optim = None
        if (folder / OPTIMIZER_NAME).is_file():
            optim = torch.load(folder / OPTIMIZER_NAME, map_location="cpu", weights_only=True)
        counters = data.get("counters") or {}
        return cls(model.to(map_location), settings, source=str(name_or_path), counters=counters, optim_state=optim)

    def _model_card(self, name: str, base_model: str | None, metrics: Mapping[str, Any] | None,
                    description: str) -> str:
        from huggingface_hub import ModelCardData

        from simdist.hub.files import DEFAULT_LICENSE, LIBRARY_NAME, PIPELINE_TAG
        from simdist.hub.resolve import hub_repo_id

        cfg = self.config
        tags = list(dict.fromkeys(["simdist", self.agent_type, "robotics", *(t for t in (cfg.task, cfg.robot) if t)]))
        data = ModelCardData(library_name=LIBRARY_NAME, pipeline_tag=PIPELINE_TAG, license=DEFAULT_LICENSE, tags=tags,
                             base_model=hub_repo_id(base_model) if base_model else None)
        rows = [f"| {k} | {v} |" for k, v in {**self.settings, **self.counters, **(metrics or {})}.items()]
        return "\n".join([
            "---", data.to_yaml(), "---", "", f"# {name or self.agent_type}", "",
            *([description, ""] if description else []),
            f"A `{self.agent_type}` baseline: an MLP actor and critics on the frozen `{cfg.encoder.name}` encoder of a "
            f"SimDist world model{f' for the task `{cfg.task}`' if cfg.task else ''}.", "",
            "| Setting | Value |", "|---|---|", *rows, "",
            "```python", "from simdist.agents import load_agent", f'agent = load_agent("{name or "<folder>"}")', "```",
            ""])
