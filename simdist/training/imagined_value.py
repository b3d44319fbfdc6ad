"""Fit a world model's value head on its own imagined λ-returns (beyond the paper; TD-MPC2 and DreamerV3 train their
critics this way).

SimDist's value head learns the simulator's critic labels on dataset states, yet the planner reads it on the
dynamics' imagined end state ẑ_T of its own candidates, where those labels never were. This objective trains it
there, on targets the model itself imagines, with no true return at all:

1. from each training state (a :class:`~simdist.training.candidate_ranking.CandidateSet`'s states: histories the
   planner had, with K of the sequences it scored there) the frozen dynamics imagines every candidate's T steps
   ẑ_1..ẑ_T;
2. where the encoder can assemble a window from imagined latents (``Encoder.from_latents``, the planner's value
   expansion check), the frozen policy head acts T more steps from the window at ẑ_T
   (:func:`~simdist.model.expansion.extended_window`), ẑ_{T+1}..ẑ_{2T}; elsewhere the rollout is the candidate's
   own (logged) T actions alone;
3. the frozen reward head gives r̂ along the rollout and a slow copy of the value head (its EMA, rate ``ema``)
   V̄ at every imagined latent; the λ-return G_j = r̂_{j+o} + γ((1 − λ) V̄(ẑ_{j+1}) + λ G_{j+1}) runs back from
   the rollout's last latent (o the model's ``value_offset``: the value head's pairing of ẑ_j with the critic's
   value, G bootstrapped there with V̄);
4. the value head regresses every imagined latent but the last on G: the within-state error (each state's mean
   over its K candidates removed, what a ranking depends on) in units of G's within-state standard deviation,
   plus ``level_weight`` × the plain error in units of G's overall standard deviation (as
   :func:`~simdist.training.candidate_ranking.ranking_loss`); the units are fixed from the first states' targets;
5. the anchor, ``anchor_weight`` × the plain squared error between the head and a frozen copy of the sim-trained
   head on the same latents, in the level's units: it holds the value's level where the simulator's critic put
   it (a level the imagination cannot correct drifts otherwise), and costs nothing within a state (the level's
   units are tens of times the within-state ones), where the order is left to the imagined returns.

What stops the gradients, and why: the encoder runs under ``no_grad``; the dynamics, reward head, policy head and
embeddings have ``requires_grad=False`` and stay in eval mode (freeze policy ``value``), and the whole rollout,
the targets (EMA head) and the anchor (frozen copy) are computed under ``no_grad``, so the only gradient is that of
the online value head's outputs on fixed imagined latents. The value then learns the model's own imagined return
where the planner reads it, without teaching the dynamics or the policy to flatter it (a gradient through the
rollout would move the latents toward high value, not toward the truth), and the EMA target keeps the bootstrap
from chasing the head it trains.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import lightning as L
import torch
from torch import Tensor

from simdist.model.expansion import check_expansion, extended_window
from simdist.model.freeze import FreezePolicy
from simdist.training.candidate_ranking import CandidateSet, loss_scales, ranking_loss, train_on_states


def lambda_returns(rewards: Tensor, values: Tensor, *, gamma: float, lam: float, offset: int = 0) -> Tensor:
    """λ-returns (N, L) for the values at ẑ_1..ẑ_L from rewards (N, L) r̂_0..r̂_{L-1} and target values (N, L)
    V̄(ẑ_1..ẑ_L): G_j = r̂_{j+offset} + γ((1 − λ) V̄(ẑ_{j+1}) + λ G_{j+1}) back from G_{L−offset} = V̄(ẑ_{L−offset})
    (its last ``offset`` entries are V̄ itself: no reward to bootstrap them with). λ = 0: one-step TD targets;
    λ = 1: the discounted imagined rewards to the end and the last value."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    if rewards.shape != values.shape:
        raise ValueError(f"rewards {tuple(rewards.shape)} and values {tuple(values.shape)} must be the same (N, L)")
    n = values.shape[-1]
    out = values.clone()
    for j in range(n - 1 - offset, 0, -1):  # 1-based latent index j ↔ column j - 1
        out[..., j - 1] = rewards[..., j + offset] + gamma * ((1 - lam) * values[..., j] + lam * out[..., j])
    return out


class ImaginedValueModule(L.LightningModule):
    """Trains ``world_model``'s value head on λ-returns of its own imagined rollouts from ``data``'s states (the
    module docstring); everything else frozen and in eval mode."""

    #: the slow (EMA) copy of the value head the λ-returns bootstrap with, and the frozen sim-trained one
    target: torch.nn.Module
    anchor: torch.nn.Module

    def __init__(self, world_model: Any, data: CandidateSet, *, gamma: float, lam: float, lr: float, steps: int,
                 level_weight: float, ema: float, anchor_weight: float) -> None:
        super().__init__()
        if not 0.0 < ema <= 1.0:
            raise ValueError(f"ema must be in (0, 1], got {ema}")
        self.world_model, self.data = world_model, data
        self.gamma, self.lam, self.lr, self.steps = gamma, lam, lr, steps
        self.level_weight, self.ema, self.anchor_weight = level_weight, ema, anchor_weight
        self.trainable = FreezePolicy({"value"})
        self.trainable.apply(world_model)
        horizon = world_model.config.horizon
        try:
            self.policy_steps = check_expansion(world_model, horizon)
        except ValueError:
            self.policy_steps = 0  # the encoder cannot assemble an imagined window: the candidates' own steps alone
        # plain attributes (not submodules): Lightning neither trains nor moves them as the model's parameters
        self.__dict__["target"] = self._frozen_copy(world_model.value)
        self.__dict__["anchor"] = self._frozen_copy(world_model.value)
        with torch.no_grad():
            _, targets, _ = self.rollout(data.rows(range(min(64, len(data)))))
        self.scales = loss_scales(targets[..., -1])

    @staticmethod
    def _frozen_copy(head: torch.nn.Module) -> torch.nn.Module:
        out = copy.deepcopy(head).eval()
        for p in out.parameters():
            p.requires_grad_(False)
        return out

    def on_train_epoch_start(self) -> None:
        """Lightning hook: keep the frozen components in eval mode."""
        self.trainable.set_modes(self.world_model, training=True)

    def rollout(self, batch: CandidateSet) -> tuple[list[tuple[Any, ...]], Tensor, Tensor]:
        """(the heads' inputs of each window, λ-returns (B, K, L), anchor values (B, K, L)) over the imagined
        latents of ``batch``'s candidates (and the policy's continuation), env units; call under ``no_grad``."""
        wm, dev = self.world_model, self.device
        t, norm = wm.config.horizon, wm.normalizer
        encoding = wm.encode({k: v.to(dev) for k, v in batch.obs_hist.items()}, batch.act_hist.to(dev))
        command = batch.command.to(dev) if wm.config.command_dim else None
        actions = batch.candidates.to(dev)
        b, k = actions.shape[:2]
        latents = wm.imagine_latents(encoding, actions)
        commands_n = norm.normalize("commands", wm._commands(command, b, dev))
        # each window: (encoding, latents, normalised actions, normalised commands), its heads' outputs (B, K, T)
        windows: list[tuple[Any, ...]] = [(encoding, latents, norm.normalize("actions", actions), commands_n)]
        if self.policy_steps:  # flat (B·K) rows, one assembled window per candidate
            windows.append(extended_window(wm, encoding, latents, actions, command, self.policy_steps)[:4])
        rewards, targets, anchors = [], [], []
        for window in windows:
            r, v = wm._heads(*window, value_head=self.target)
            anchors.append(wm._values(*window, value_head=self.anchor).reshape(b, k, t))
            rewards.append(r.reshape(b, k, t))
            targets.append(v.reshape(b, k, t))
        unit = {"rewards": torch.cat(rewards, -1), "values": torch.cat(targets, -1)}
        r_env, v_env = (norm.denormalize(key, x.unsqueeze(-1)).squeeze(-1) for key, x in unit.items())
        returns = lambda_returns(r_env.reshape(b * k, -1), v_env.reshape(b * k, -1), gamma=self.gamma, lam=self.lam,
                                 offset=wm.config.value_offset).reshape(b, k, -1)
        anchor = norm.denormalize("values", torch.cat(anchors, -1).unsqueeze(-1)).squeeze(-1)
        return windows, returns, anchor

    def losses(self, batch: CandidateSet) -> dict[str, Tensor]:
        """``loss`` and its terms (``within``, ``level``: the λ-return regression; ``anchor``) on ``batch``'s states."""
        wm = self.world_model
        with torch.no_grad():
            windows, returns, anchor = self.rollout(batch)
        online = torch.cat([wm._values(*w).reshape(returns.shape[0], returns.shape[1], -1) for w in windows], -1)
        value = wm.normalizer.denormalize("values", online.unsqueeze(-1)).squeeze(-1)
        last = returns.shape[-1] - 1 - wm.config.value_offset  # the bootstrapped latents have no target
        units = {"within_scale": self.scales[0], "level_scale": self.scales[1], "level_weight": self.level_weight}
        fit, within, level = ranking_loss(value[..., :last].transpose(1, 2).flatten(0, 1),
                                          returns[..., :last].transpose(1, 2).flatten(0, 1), **units)
        held = (value - anchor).pow(2).mean() / self.scales[1] ** 2
        return {"loss": fit + self.anchor_weight * held, "within": within, "level": level, "anchor": held}

    def training_step(self, index: Tensor, _: int) -> Tensor:
        """The value head's λ-return regression and anchor on a batch of states' imagined candidates."""
        terms = self.losses(self.data.rows(index.cpu()))
        self.log_dict({f"train/{k}": v for k, v in terms.items()}, prog_bar=True)
        return terms["loss"]

    def on_train_batch_end(self, *_: Any) -> None:
        """Lightning hook: the target head follows the online one at rate ``ema``."""
        with torch.no_grad():
            for slow, fast in zip(self.target.parameters(), self.world_model.value.parameters()):
                slow.lerp_(fast.to(slow.device), self.ema)

    def configure_optimizers(self) -> Any:
        """Adam over the value head, cosine-annealed to a tenth of ``lr`` over the run."""
        opt = torch.optim.Adam([p for p in self.world_model.value.parameters() if p.requires_grad], lr=self.lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.steps, eta_min=self.lr / 10)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def fit_imagined_value(world_model: Any, data: CandidateSet, *, steps: int = 600, batch_states: int = 32,
                       lr: float = 3e-4, level_weight: float = 0.1, gamma: float = 0.99, lam: float = 0.95,
                       ema: float = 0.01, anchor_weight: float = 0.1,
                       trainable: str | Iterable[str] | FreezePolicy = "value",
                       seed: int = 0, log_dir: str | Path | None = None, progress: bool = False) -> dict[str, float]:
    """Train ``world_model``'s value head in place on its imagined λ-returns from ``data``'s states
    (:class:`ImaginedValueModule`) for ``steps`` Adam steps of ``batch_states`` states with all their candidates.
    ``trainable`` must name the value head alone. Returns the last logged loss terms and ``policy_steps`` (how
    many steps the policy head acted after each candidate; 0 where the encoder cannot assemble its window)."""
    policy = FreezePolicy.parse(trainable)
    if policy.trainable != frozenset({"value"}):
        raise ValueError(f"--train {policy.spec}: the imagined value objective trains the value head alone "
                         "(--train value)")
    module = ImaginedValueModule(world_model, data, gamma=gamma, lam=lam, lr=lr, steps=steps,
                                 level_weight=level_weight, ema=ema, anchor_weight=anchor_weight)
    metrics = train_on_states(module, len(data), steps=steps, batch_states=batch_states, seed=seed, log_dir=log_dir,
                              progress=progress)
    return metrics | {"policy_steps": float(module.policy_steps)}
