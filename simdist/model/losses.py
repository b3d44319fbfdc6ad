"""SimDist's training objective (paper equation 2, SIMDIST.md section 3), in normalised units."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import torch
from torch import Tensor, nn


class WorldModelLoss(nn.Module):
    """L = w_dyn·L_dyn + w_r·L_r + w_v·L_v + w_a·L_a; each term a mean of squared errors.

    L_dyn: predicted latents against stop-gradient targets E(o_{t+1..t+T}) from the same encoder; with an
    ensemble dynamics, the mean over its members of each member's error (:meth:`consistency`).
    ``reconstruction`` > 0 adds L_rec, the model's decoder reconstructing o_{t+1..t+T} from E(o) (the raw
    observation, normalised; Table I's ablation, not part of SimDist).
    L_a: behaviour cloning masked to the leading run of expert steps (cumulative product of the expert
    flags), averaged over all elements as the official code does. Terms with weight 0 are skipped.

    ``consistency_decay`` ρ weights L_dyn's horizon step k by ρ^k, normalised to a mean weight of 1 (1.0: every
    step alike, SimDist's; ρ < 1 stresses the near steps as TD-MPC2 does, ρ > 1 the far ones; not part of SimDist).

    ``decision`` > 0 adds L_dec, decision-aware consistency (not part of SimDist): the reward and value heads read
    on the predicted latents against the same heads read on the encoded true latents (stop-gradient targets),
    ‖r(ẑ) − sg r(z)‖² + ‖V(ẑ) − sg V(z)‖², averaged. Under dynamics-only finetuning the heads are frozen, so its
    gradient reaches only the dynamics, through the heads: the dynamics learn to put the predicted future where the
    frozen score of the true one is, which is what the planner ranks by, rather than only near it in latent space.

    ``value_target``: ``"label"`` regresses the value head on the dataset's value labels (simulation data:
    the critic's values); ``"td"`` on n-step bootstrapped returns of the window's logged rewards,
    y_h = r_{h+1} + γ y_{h+1} with y_{H-1} the head's own (stop-gradient) last prediction, for real data
    that has rewards but no value labels (the paper's value-unfreezing ablation; prior world-model
    finetuning does this).
    """

    def __init__(self, dynamics: float = 1.0, reward: float = 1.0, value: float = 1.0, action: float = 4.0,
                 value_target: str = "label", gamma: float = 0.99, reconstruction: float = 0.0,
                 consistency_decay: float = 1.0, decision: float = 0.0) -> None:
        super().__init__()
        if value_target not in ("label", "td"):
            raise ValueError(f"value_target must be 'label' or 'td', got {value_target!r}")
        if isinstance(consistency_decay, bool) or not 0.0 < float(consistency_decay) < float("inf"):
            raise ValueError(f"consistency_decay must be a finite number > 0, got {consistency_decay!r}")
        self.consistency_decay = float(consistency_decay)
        self.weights = {"dynamics": dynamics, "reward": reward, "value": value, "action": action}
        if reconstruction:  # Table I's ablation only: SimDist's objective has no reconstruction term
            self.weights["reconstruction"] = reconstruction
        if decision:  # beyond SimDist: decision-aware consistency
            self.weights["decision"] = decision
        self.value_target = value_target
        self.gamma = float(gamma)

    @classmethod
    def dynamics_only(cls) -> WorldModelLoss:
        """Finetuning loss: latent consistency alone (no reward, value or action labels needed)."""
        return cls(1.0, 0.0, 0.0, 0.0)

    def forward(self, model: Any, batch: Mapping[str, Any], all_terms: bool = False) -> dict[str, Tensor]:
        """Loss terms and ``loss``; ``all_terms`` also evaluates zero-weight terms (for reporting)."""
        need = {k for k, w in self.weights.items() if w != 0 or all_terms}
        pred = model.predict(batch, heads=bool(need - {"dynamics"}))
        norm = model.normalizer
        terms: dict[str, Tensor] = {}
        if need & {"dynamics", "decision"}:
            targets = model.consistency_targets(batch)
            if "dynamics" in need:
                terms["dynamics"] = self.consistency(pred, targets)
            if "decision" in need:
                with torch.no_grad():
                    true_rewards, true_values = model.heads_on_latents(batch, targets, pred.encoding)
                terms["decision"] = ((pred.rewards - true_rewards).pow(2).mean()
                                     + (pred.values - true_values).pow(2).mean())
        if "reward" in need:
            target = norm.normalize("rewards", batch["rewards"].unsqueeze(-1)).squeeze(-1)
            terms["reward"] = (pred.rewards - target).pow(2).mean()
        if "value" in need and self.value_target == "td":
            target = self.td_targets(norm, batch["rewards"], pred.values.detach())
            terms["value"] = (pred.values[..., :-1] - target).pow(2).mean()
        elif "value" in need:
            target = norm.normalize("values", batch["values"].unsqueeze(-1)).squeeze(-1)
            terms["value"] = (pred.values - target).pow(2).mean()
        if "action" in need and pred.actions is not None:
            mask = torch.cumprod(batch["expert"].float(), dim=-1).unsqueeze(-1)
            target = norm.normalize("actions", batch["fut_acts"])
            terms["action"] = ((pred.actions - target) * mask).pow(2).mean()
        if "reconstruction" in need:
            terms["reconstruction"] = model.reconstruction_error(batch["fut_obs"])
        terms["loss"] = cast(Tensor, sum(self.weights[k] * v for k, v in terms.items() if self.weights[k] != 0))
        return terms

    def horizon_weights(self, horizon: int, like: Tensor) -> Tensor:
        """(horizon,) weights ρ^k of the consistency term's steps, mean 1 (all ones for ρ = 1)."""
        w = self.consistency_decay ** torch.arange(horizon, device=like.device, dtype=like.dtype)
        return w / w.mean()

    def consistency(self, pred: Any, targets: Tensor) -> Tensor:
        """L_dyn: the squared error of the predicted latents against ``targets`` (B, T, D), step k weighted by
        :meth:`horizon_weights`; with an ensemble's ``member_latents`` (K, B, T, D) the mean over members of each
        member's error (members are equal in size, so the mean over all of them), so every member learns the targets
        on its own rather than through the members' mean."""
        members = getattr(pred, "member_latents", None)
        error = ((pred.latents if members is None else members) - targets).pow(2)
        if self.consistency_decay != 1.0:
            error = error * self.horizon_weights(error.shape[-2], error)[:, None]
        return error.mean()

    def td_targets(self, norm: Any, rewards: Tensor, values: Tensor) -> Tensor:
        """Normalised targets for positions 0..H-2: y_h = r_{h+1} + γ y_{h+1}, y_{H-1} = V_{H-1}.

        ``rewards`` (B, H) in environment units, ``values`` (B, H) normalised predictions; a value label at
        step t is the return from the next state (SIMDIST 4.4), hence the reward of step h+1.
        """
        if rewards.shape[-1] < 2:
            raise ValueError(f"TD value targets need a horizon of at least 2 steps, got {rewards.shape[-1]}")
        v = norm.denormalize("values", values.unsqueeze(-1)).squeeze(-1)
        y = v[..., -1]
        out = []
        for h in range(rewards.shape[-1] - 2, -1, -1):
            y = rewards[..., h + 1] + self.gamma * y
            out.append(y)
        target = torch.stack(out[::-1], dim=-1)
        return norm.normalize("values", target.unsqueeze(-1)).squeeze(-1)
