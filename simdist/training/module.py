"""Lightning modules for pretraining and finetuning a :class:`~simdist.WorldModel`."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import lightning as L
import numpy as np
import torch
from torch import Tensor

from simdist.model.freeze import OFFICIAL_FINETUNE, FreezePolicy
from simdist.model.losses import WorldModelLoss
from simdist.model.world_model import WorldModel
from simdist.training.schedule import warmup_cosine

if TYPE_CHECKING:
    from lightning.pytorch.utilities.types import OptimizerLRSchedulerConfig

CKPT_CONFIG_KEY = "simdist_world_model_config"
CKPT_BASE_KEY = "simdist_base_model"


class WorldModelModule(L.LightningModule):
    """Trains a world model with :class:`~simdist.WorldModelLoss` under a :class:`~simdist.FreezePolicy`.

    The model comes from ``model`` (a WorldModelConfig dict), a ``preset`` name (``preset_overrides``
    replaces config fields, e.g. ``{reward_head: {name: mlp}, value_head: {name: mlp}}``: Table I's per-step
    MLP heads), or ``init_from`` (a Hub id or folder with pretrained weights, for finetuning). Normalisation
    statistics are taken from the datamodule's training data when the model has none yet
    (``fit_normalizer``); a finetuned model keeps its simulation statistics. ``fit_normalizer`` may instead
    list normaliser keys (e.g. ``[values]``) that are refitted from the training data even on a pretrained
    model, for data relabelled since (new value labels for a value head trained anew). Adam with the warmup-cosine
    schedule of SIMDIST.md 4.5 by default. ``diagnostics`` (on by default) logs the action-information
    diagnostic on held-out windows after every validation epoch (``val/diag/*``,
    :class:`~simdist.diagnostics.callback.ActionInformationCallback`). ``anchor`` > 0 adds ``anchor`` · Σ ‖θ − θ₀‖²
    over the trainable weights, θ₀ the weights the run starts from (for finetuning: an L2 pull towards the
    pretrained dynamics; not part of SimDist), logged as ``train/anchor``. ``consistency_decay`` ρ weights the
    consistency loss's horizon steps by ρ^k (:class:`~simdist.WorldModelLoss`; 1.0, the default: uniform).
    ``compile`` runs the training loss through ``torch.compile`` (same loss and gradients within float
    tolerance; the first step pays the compilation; validation stays eager).
    """

    def __init__(
        self,
        model: dict[str, Any] | None = None,
        preset: str | None = None,
        init_from: str | None = None,
        freeze: str | list[str] | FreezePolicy = "all",
        loss_weights: dict[str, float] | None = None,
        lr: float = 2e-4,
        end_lr: float = 1e-4,
        warmup_steps: int = 10_000,
        decay_steps: int = 400_000,
        obs_noise: dict[str, list[float]] | str | None = None,
        fit_normalizer: bool | list[str] = True,
        eval_frozen: bool = True,
        value_target: str = "label",
        history_dropout: float = 0.0,
        history_dropout_obs: dict[str, list[int]] | None = None,
        preset_overrides: dict[str, Any] | None = None,
        diagnostics: bool = True,
        anchor: float = 0.0,
        consistency_decay: float = 1.0,
        compile: bool = False,
    ) -> None:
        super().__init__()
        self.save_hyperparameters()
        if not isinstance(compile, bool):
            raise ValueError(f"model.init_args.compile must be true or false, got {compile!r}")
        if not (isinstance(anchor, int | float) and not isinstance(anchor, bool) and 0.0 <= anchor < float("inf")):
            raise ValueError(f"model.init_args.anchor must be a finite number >= 0, got {anchor!r}")
        if preset_overrides and preset is None:
            raise ValueError("model.init_args.preset_overrides needs model.init_args.preset")
        if not 0.0 <= history_dropout < 1.0:
            raise ValueError(f"history_dropout must be a probability in [0, 1), got {history_dropout!r}")
        self.history_dropout = float(history_dropout)
        self.history_dropout_obs = {str(k): [int(i) for i in v] for k, v in (history_dropout_obs or {}).items()}
        if sum(x is not None for x in (model, preset, init_from)) != 1:
            raise ValueError("give exactly one of model (a config dict), preset, or init_from")
        if init_from is not None:
            self.world_model = WorldModel.from_pretrained(init_from)
        elif preset is not None:
            self.world_model = WorldModel.from_preset(preset, **(preset_overrides or {}))
        else:
            assert model is not None  # exactly one of the three was given
            self.world_model = WorldModel(model)
        self.base_model = init_from
        # The recipe's text (LightningCLI) is parsed here, the edge; a policy object passes through unchanged.
        self.freeze_policy = FreezePolicy.parse(freeze)
        if not eval_frozen:
            self.freeze_policy = self.freeze_policy.with_eval_frozen(False)
        self.loss_fn = WorldModelLoss(**(loss_weights or self.default_loss_weights()), value_target=value_target,
                                      consistency_decay=consistency_decay)
        self.obs_noise = resolve_obs_noise(obs_noise)
        self.freeze_policy.apply(self.world_model)
        if not isinstance(fit_normalizer, bool):
            unknown = [k for k in fit_normalizer if k not in self.world_model.normalizer.keys]
            if unknown or not fit_normalizer:
                raise ValueError(f"model.init_args.fit_normalizer must be true, false or normaliser keys to refit "
                                 f"({', '.join(self.world_model.normalizer.keys)}); got {list(fit_normalizer)}")
        self._compiled_loss: Any = None  # built at the first training step (keeps the module picklable)
        #: the trainable weights as they start (a finetuned model: the pretrained ones), for the ``anchor`` pull
        self._anchor_weights = ({n: p.detach().clone() for n, p in self.world_model.named_parameters()
                                 if p.requires_grad} if anchor else {})

    def default_loss_weights(self) -> dict[str, float]:
        """The loss weights used when ``loss_weights`` is not given: :class:`WorldModelLoss`'s own defaults."""
        return {}

    # ------------------------------------------------------------------ modes and setup
    def train(self, mode: bool = True) -> WorldModelModule:
        """Like ``nn.Module.train`` but frozen components stay in eval mode."""
        super().train(mode)
        if hasattr(self, "freeze_policy"):
            self.freeze_policy.set_modes(self.world_model, mode)
        return self

    def setup(self, stage: str) -> None:
        """Lightning hook: fit the normaliser to the datamodule's statistics when asked (``fit_normalizer``)."""
        if self.freeze_policy.trainable != "all" and self.freeze_policy.eval_frozen:
            # Lightning warns about modules in eval mode at fit start; here that is the point.
            warnings.filterwarnings("ignore", message=".*module\\(s\\) in eval mode.*")
        normalizer, refit = self.world_model.normalizer, self.hparams["fit_normalizer"]
        if stage == "fit" and (refit is True and not bool(normalizer.fitted) or not isinstance(refit, bool)):
            datamodule = getattr(self.trainer, "datamodule", None)
            stats = getattr(datamodule, "stats", None)
            if stats is None:
                raise RuntimeError("fit_normalizer needs the datamodule's statistics, and it provides none")
            stats = stats.to_dict() if hasattr(stats, "to_dict") else dict(stats)
            if not isinstance(refit, bool):  # only the listed keys change; the rest keep the model's statistics
                stats = normalizer.stats() | {k: stats[k] for k in refit}
            normalizer.set_stats(stats)
        if stage == "fit" and not bool(normalizer.fitted):
            warnings.warn("training a world model whose normaliser was never fitted", stacklevel=2)

    def configure_callbacks(self) -> list[L.Callback]:
        """The action-information validation metric (``diagnostics``), beside the trainer's own callbacks."""
        from simdist.diagnostics.callback import ActionInformationCallback

        return [ActionInformationCallback()] if self.hparams.get("diagnostics", True) else []

    # ------------------------------------------------------------------ steps
    def on_fit_start(self) -> None:
        """Lightning hook: record the run's seed (the augmentation noise derives from it)."""
        self._seed_base = int(torch.initial_seed())

    def on_train_batch_start(self, batch: Any, batch_idx: int) -> None:
        """Seed the step's randomness (input noise, dropout) from the run's seed, the epoch, the batch and the
        rank, not from how many draws came before: a run resumed from a checkpoint draws what an
        uninterrupted one does."""
        base = getattr(self, "_seed_base", None)
        if base is None:
            base = self._seed_base = int(torch.initial_seed())
        seq = np.random.SeedSequence([base, int(self.current_epoch), int(batch_idx), int(self.global_rank)])
        torch.manual_seed(int(seq.generate_state(1)[0]))

    def _augment(self, batch: Mapping[str, Any]) -> dict[str, Any]:
        """Training inputs only (targets and labels stay clean): Gaussian noise on the observation history, and
        with probability ``history_dropout`` per window the past actions zeroed (the action history and the
        ``history_dropout_obs`` dims of observation groups that repeat the last action), so that the policy
        head cannot copy the previous action and must read the state ("copycat" shortcuts)."""
        batch = dict(batch)
        obs = dict(batch["obs_hist"])
        if self.history_dropout > 0.0:
            act = batch["act_hist"]
            keep = (torch.rand(act.shape[0], device=act.device) >= self.history_dropout).to(act.dtype)
            batch["act_hist"] = act * keep.view(-1, *([1] * (act.dim() - 1)))
            for key, dims in self.history_dropout_obs.items():
                x = obs[key].clone()
                x[..., dims] = x[..., dims] * keep.view(-1, *([1] * (x.dim() - 1)))
                obs[key] = x
        batch["obs_hist"] = add_obs_noise(obs, self.obs_noise)
        return batch

    def _log_terms(self, prefix: str, terms: Mapping[str, Tensor], batch_size: int) -> None:
        for name, value in terms.items():
            self.log(f"{prefix}/{name}", value, prog_bar=name == "loss", batch_size=batch_size,
                     on_step=prefix == "train", on_epoch=True)

    def _loss_terms(self, batch: Mapping[str, Any]) -> dict[str, Tensor]:
        return self.loss_fn(self.world_model, batch)

    def _train_loss(self, batch: Mapping[str, Any]) -> dict[str, Tensor]:
        """The training loss terms, through ``torch.compile`` when ``compile`` is set."""
        if not self.hparams.get("compile", False):
            return self._loss_terms(batch)
        if self._compiled_loss is None:
            self._compiled_loss = torch.compile(self._loss_terms)
        return self._compiled_loss(batch)

    def training_step(self, batch: Mapping[str, Any], batch_idx: int) -> Tensor:
        """One optimisation step's loss on a batch of windows (logged per term)."""
        terms = dict(self._train_loss(self._augment(batch)))
        if self._anchor_weights:
            terms["anchor"] = self.anchor_distance()
            terms["loss"] = terms["loss"] + self.hparams["anchor"] * terms["anchor"]
        if not torch.isfinite(terms["loss"]):
            bad = [k for k, v in terms.items() if not torch.isfinite(v)]
            raise FloatingPointError(f"training diverged at step {self.global_step}: non-finite loss terms {bad}")
        self._log_terms("train", terms, batch["act_hist"].shape[0])
        return terms["loss"]

    def anchor_distance(self) -> Tensor:
        """Σ ‖θ − θ₀‖² over the trainable weights, θ₀ as they started (the ``anchor`` term, an L2 pull)."""
        params = dict(self.world_model.named_parameters())
        return cast(Tensor, sum(((params[n] - w.to(params[n].device)) ** 2).sum()
                                for n, w in self._anchor_weights.items()))

    def validation_step(self, batch: Mapping[str, Any], batch_idx: int) -> None:
        """Every loss term on a validation batch, logged."""
        terms = self.loss_fn(self.world_model, batch, all_terms=True)
        self._log_terms("val", terms, batch["act_hist"].shape[0])

    # ------------------------------------------------------------------ optimisation
    def configure_optimizers(self) -> OptimizerLRSchedulerConfig:
        """Adam over the trainable parameters: warm-up, then cosine decay to ``end_lr``, stepped per batch."""
        params = [p for p in self.world_model.parameters() if p.requires_grad]
        if not params:
            raise ValueError(f"freeze policy {self.freeze_policy!r} leaves nothing to train")
        hp = self.hparams
        optimizer = torch.optim.Adam(params, lr=hp["lr"])
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer,
            lambda step: warmup_cosine(step, 1.0, hp["warmup_steps"], hp["decay_steps"], hp["end_lr"] / hp["lr"]),
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}

    # ------------------------------------------------------------------ checkpoints
    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Lightning hook: store the model config and its base model in the checkpoint."""
        checkpoint[CKPT_CONFIG_KEY] = self.world_model.config.to_dict()
        checkpoint[CKPT_BASE_KEY] = self.base_model


class PretrainModule(WorldModelModule):
    """Simulation pretraining: everything trains, loss weights 1/1/1/4, normaliser fitted on the data."""


class FinetuneModule(WorldModelModule):
    """SimDist adaptation: only the dynamics trains on the latent-consistency loss; sim statistics kept.

    Defaults follow the official finetuning config (SIMDIST.md 5.2): peak LR 2e-4, warmup 2,000 steps
    (:meth:`simdist.model.freeze.FinetuneConfig.official`, beside the adaptation loop's short-run defaults).
    Ablations that also train the value head give it a weight in ``loss_weights``; real data has no value
    labels, so its target is then the n-step bootstrapped return of the logged rewards (``value_target="td"``).
    """

    def __init__(
        self,
        init_from: str | None = None,
        model: dict[str, Any] | None = None,
        preset: str | None = None,
        freeze: str | list[str] | FreezePolicy = OFFICIAL_FINETUNE.freeze,
        loss_weights: dict[str, float] | None = None,
        lr: float = OFFICIAL_FINETUNE.lr,
        end_lr: float = OFFICIAL_FINETUNE.final_lr,
        warmup_steps: int = OFFICIAL_FINETUNE.warmup_steps,
        decay_steps: int = OFFICIAL_FINETUNE.schedule_steps,
        obs_noise: dict[str, list[float]] | str | None = None,
        fit_normalizer: bool | list[str] = False,
        eval_frozen: bool = True,
        value_target: str = OFFICIAL_FINETUNE.value_target,
        diagnostics: bool = True,
        anchor: float = 0.0,
        consistency_decay: float = 1.0,
        compile: bool = False,
    ) -> None:
        super().__init__(
            model=model, preset=preset, init_from=init_from, freeze=freeze,
            loss_weights=loss_weights,
            lr=lr, end_lr=end_lr, warmup_steps=warmup_steps, decay_steps=decay_steps, obs_noise=obs_noise,
            fit_normalizer=fit_normalizer, eval_frozen=eval_frozen, value_target=value_target,
            diagnostics=diagnostics, anchor=anchor, consistency_decay=consistency_decay, compile=compile,
        )

    def default_loss_weights(self) -> dict[str, float]:
        """The loss the freeze policy means on real data (:meth:`~simdist.model.freeze.FreezePolicy.loss_weights`)."""
        return self.freeze_policy.loss_weights(self.world_model)


def world_model_from_checkpoint(
    path: str, map_location: str = "cpu", current_weights: bool = False
) -> tuple[WorldModel, str | None]:
    """Rebuild the world model stored in a Lightning checkpoint; returns it and its base model id.

    A run with weight averaging (Lightning's ``EMAWeightAveraging`` in the recipe's callbacks) stores the
    averaged weights as the checkpoint's ``state_dict``, which is what this loads; ``current_weights``
    loads the raw training weights (``current_model_state``) instead.
    """
    from simdist.hub.load import CheckpointError
    from simdist.model.config import config_file

    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=False)
    except Exception as err:  # torch raises many types for a corrupt file
        raise CheckpointError(f"cannot read checkpoint {path}: {err}") from err
    if not isinstance(ckpt, dict) or CKPT_CONFIG_KEY not in ckpt:
        raise CheckpointError(f"{path} is not a simdist checkpoint (no {CKPT_CONFIG_KEY!r} entry)")
    key = "current_model_state" if current_weights else "state_dict"
    if key not in ckpt:
        why = ": it was not written by a run with weight averaging" if current_weights else ""
        raise CheckpointError(f"{path} has no {key!r}{why}")
    with config_file(f"{path} (key {CKPT_CONFIG_KEY!r})"):
        model = WorldModel(ckpt[CKPT_CONFIG_KEY])
    prefix = "world_model."
    state = {k[len(prefix):]: v for k, v in ckpt[key].items() if k.startswith(prefix)}
    model.load_state_dict(state, strict=True)
    return model.eval(), ckpt.get(CKPT_BASE_KEY)


def epoch_trainer(root: str | Path, epochs: int, progress: bool = False,
                  callbacks: list[L.Callback] | None = None) -> L.Trainer:
    """A plain CPU trainer for scripted runs (demo, adaptation loop): fixed epochs, no logger,
    no validation; no checkpoints unless ``callbacks`` hold a checkpoint callback (:func:`resumable_fit`)."""
    from lightning.pytorch.callbacks import Checkpoint

    callbacks = list(callbacks or [])
    return L.Trainer(
        accelerator="cpu", max_epochs=epochs, logger=False, default_root_dir=str(root), callbacks=callbacks,
        enable_progress_bar=progress, enable_model_summary=False, num_sanity_val_steps=0,
        enable_checkpointing=any(isinstance(c, Checkpoint) for c in callbacks), limit_val_batches=0,
    )


#: how often a resumable scripted fit (:func:`resumable_fit`) saves its checkpoint, besides every epoch's end
RESUME_EVERY_MINUTES = 10.0


def resumable_fit(module: L.LightningModule, data: L.LightningDataModule, root: str | Path, epochs: int,
                  signature: Mapping[str, Any], progress: bool = False,
                  every_minutes: float = RESUME_EVERY_MINUTES, callbacks: list[L.Callback] | None = None) -> None:
    """Fit ``module`` on ``data`` for ``epochs`` as :func:`epoch_trainer` does, saving ``root/resume/last.ckpt``
    (atomically) every ``every_minutes`` and at each epoch's end, and resuming from it when a killed fit with the
    same ``signature`` (everything its result depends on, JSON) left one: the data module's window order depends
    only on the seed and the epoch, and Lightning restores the batches consumed, so a resumed fit ends with the
    weights of an uninterrupted one. A checkpoint of another signature is removed. The folder is removed once
    the fit ends (its result is the caller's to save). ``callbacks``: more Lightning callbacks."""
    import json
    import shutil
    from datetime import timedelta

    from lightning.pytorch.callbacks import ModelCheckpoint

    from simdist.fsutil import atomic_write_json
    from simdist.training.checkpoint_io import use_atomic_checkpoints

    folder = Path(root) / "resume"
    stamp, last = folder / "signature.json", folder / "last.ckpt"
    wanted = json.loads(json.dumps(dict(signature), default=str))
    if folder.is_dir() and (not stamp.is_file() or json.loads(stamp.read_text()) != wanted):
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_json(stamp, wanted)
    saver = ModelCheckpoint(dirpath=folder, save_last=True, save_top_k=0, save_on_train_epoch_end=True,
                            train_time_interval=timedelta(minutes=every_minutes))
    trainer = epoch_trainer(root, epochs, progress, [saver, *(callbacks or [])])
    use_atomic_checkpoints(trainer)
    trainer.fit(module, data, ckpt_path=str(last) if last.is_file() else None)
    shutil.rmtree(folder, ignore_errors=True)


def add_obs_noise(obs: Mapping[str, Tensor], obs_noise: Mapping[str, list[float]]) -> dict[str, Tensor]:
    """``obs`` with Gaussian noise of per-dimension stds ``obs_noise[key]`` (raw units) on the groups it names."""
    out = dict(obs)
    for key, x in obs.items():
        if key in obs_noise:
            std = torch.as_tensor(obs_noise[key], dtype=x.dtype, device=x.device)
            out[key] = x + torch.randn_like(x) * std
    return out


def resolve_obs_noise(obs_noise: dict[str, list[float]] | str | None) -> dict[str, list[float]]:
    """Training-input noise: a mapping of per-group stds (raw units), or a registered task's name for that
    task's recipe noise (e.g. ``obs_noise: <task>`` in a recipe), or None for none."""
    if obs_noise is None:
        return {}
    if isinstance(obs_noise, str):
        from simdist.capabilities import EnvFactory, require_class
        from simdist.tasks import task_class

        return dict(require_class(task_class(obs_noise), EnvFactory, "obs_noise: TASK").obs_noise or {})
    return dict(obs_noise)
