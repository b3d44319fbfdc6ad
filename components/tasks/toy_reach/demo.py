"""``simdist demo --task toy-reach``: the whole SimDist loop on the toy point-mass task, before/after table included.

The default ``simdist demo``: by default on the ``lag`` profile (actions act 0.4 s late through a 4x stronger
actuator), with the dynamics reading the four actions in flight, 96 logged real episodes and 12 finetuning
epochs, where dynamics-only adaptation beats zero-shot (docs/plan-ranking.md).

It runs the demo pipeline every task's demo runs (:mod:`simdist.workflows.demo_pipeline`) with the toy's hook
(:class:`ToyDemo`): generate sim data (expert + sub-optimal mixture + perturbation windows) → pretrain the world
model → :class:`~simdist.workflows.adaptation.AdaptationLoop` with the toy's parts
(:mod:`simdist.components.tasks.toy_reach.loop`): plan with MPPI in sim and on a
proxy-real profile (``--real``: a built-in name or a YAML file) → log real episodes → finetune the dynamics only → plan
again. Writes ``results.json``, ``results.md`` and ``progress.png`` (each bar with its 95 % interval); with the
``ranking`` option the plan-ranking diagnostic (:mod:`simdist.diagnostics.mechanism`) of both models on the profile
and of the pretrained one in simulation, and the action-information diagnostic
(:mod:`simdist.diagnostics.action_information`) on fresh simulation windows, go into ``results.json`` too. The
levers of the toy's experiments (:class:`ToyOptions`) are ``--option KEY=VALUE`` settings; ``python -m
results.toy.levers`` takes them as the flags docs/plan-ranking.md uses.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from simdist.model.freeze import FinetuneConfig
from simdist.workflows.adaptation import AdaptationLoop, AdaptConfig
from simdist.workflows.demo_pipeline import (
    DEMO_FILES,
    FINETUNE_FREEZE,
    LOOP_ENTRIES,
    Bar,
    DemoDefaults,
    DemoHook,
    Panel,
)
from simdist.workflows.loop_parts import EvaluationConfig

#: entries that make a folder a toy demo's output (``--out``; rerunning into one overwrites what it writes)
DEMO_MARKERS = ("results.json", "sim-data", "pretrain", "toy-sim", "real-data", "finetune", "toy-real", "sim-mix",
                *LOOP_ENTRIES, *DEMO_FILES)


@dataclass
class ToyScale:
    """How much work each stage does; ``quick`` is for tests, ``default`` for the README demo (96 logged real
    episodes, about 7 minutes, and 12 finetuning epochs: the budget at which adaptation beats zero-shot on ``lag``
    for every pretraining seed measured; the earlier 24 episodes and 3 epochs do not, docs/plan-ranking.md)."""

    sim_transitions: int = 40_000
    pretrain_epochs: int = 6
    windows_per_epoch: int = 24_000
    real_episodes: int = 96
    finetune_epochs: int = 12
    finetune_windows_per_epoch: int = 6_000
    eval_episodes: int = 32
    num_envs: int = 16
    samples: int = 128
    iterations: int = 4
    heldout_episodes: int = 4


@dataclass
class ToyOptions:
    """The levers of the loop (defaults: the paper's loop, with the dynamics reading the actions in flight;
    docs/plan-ranking.md measures each).

    Model: ``dynamics_context`` past actions the ``mlp`` dynamics reads at every step (``action_context``; 4, the
    default, carries the ``lag`` profile's four actions in flight; 0: the plain z_{k+1} = f(z_k, a_k), which
    cannot carry an actuation delay); ``dynamics_hidden`` its hidden
    widths (None: the preset's 128, 128); ``history`` the model's history length (None: the preset's 8);
    ``horizon`` the steps it is trained to predict and MPPI plans over (None: the preset's 8; the value head
    scores what lies after them).
    Pretraining data and training: ``perturb_sigma`` the largest noise σ and ``perturb_steps`` the longest
    noised window of the data's perturbation windows (1.0 and 5: the toy's manipulation windows);
    ``perturbed_repeat`` oversamples windows holding a perturbed action that many times; ``history_dropout``
    zeroes a window's past actions with that probability; ``consistency_decay`` weights consistency step k by
    ρ^k. Adaptation: ``explore`` the largest noise σ of the data engine's manipulation perturbation windows
    added to the planner's actions while logging real episodes (0: on-policy planner data), so the finetuned
    dynamics see actions like those MPPI samples; ``anchor`` an L2 pull towards the pretrained weights;
    ``sim_mix`` the share of simulation transitions mixed into the finetuning data (0: real data only);
    ``decision`` the weight of the decision-aware consistency term in finetuning (the frozen heads on the
    predicted against the true latents, :class:`~simdist.model.losses.WorldModelLoss`; 0: SimDist's loss).
    ``ranking``: run both diagnostics (module docstring); ``ranking_states``: cloned states per ranking.
    ``ensemble``: 1 a single dynamics; K >= 2 wraps the demo's dynamics spec (``action_context`` included) in a
    ``dynamics/ensemble`` of K members. ``disagreement``: MPPI's penalty λ on the members' disagreement (needs
    ``ensemble`` >= 2), used by every planner of the loop and of the diagnostics. Both go beyond the paper."""

    dynamics_context: int = 4
    dynamics_hidden: tuple[int, ...] | None = None
    history: int | None = None
    horizon: int | None = None
    perturb_sigma: float = 1.0
    perturb_steps: int = 5
    perturbed_repeat: int = 1
    history_dropout: float = 0.0
    consistency_decay: float = 1.0
    explore: float = 0.0
    anchor: float = 0.0
    sim_mix: float = 0.0
    decision: float = 0.0
    ranking: bool = False
    ranking_states: int = 40
    ensemble: int = 1
    disagreement: float = 0.0

    def __post_init__(self) -> None:
        def whole(name: str, low: int) -> None:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")

        whole("dynamics_context", 0)
        whole("perturb_steps", 1)
        whole("perturbed_repeat", 1)
        if self.horizon is not None:
            whole("horizon", 2)
        if self.history is not None:
            whole("history", 1)
            if self.history < self.dynamics_context:
                raise ValueError(f"history {self.history} must be >= dynamics_context {self.dynamics_context}")
        if self.dynamics_hidden is not None:
            self.dynamics_hidden = tuple(self.dynamics_hidden)
            if not self.dynamics_hidden or any(isinstance(h, bool) or not isinstance(h, int) or h < 1
                                               for h in self.dynamics_hidden):
                raise ValueError(f"dynamics_hidden must be positive integer widths, got {self.dynamics_hidden!r}")
        if not 0.0 < self.perturb_sigma <= 2.5:
            raise ValueError(f"perturb_sigma must be a noise std in (0, 2.5], got {self.perturb_sigma!r}")
        if not 0.0 <= self.history_dropout < 1.0:
            raise ValueError(f"history_dropout must be a probability in [0, 1), got {self.history_dropout!r}")
        if not 0.0 < self.consistency_decay < float("inf"):
            raise ValueError(f"consistency_decay must be a finite number > 0, got {self.consistency_decay!r}")
        if not 0.0 <= self.explore <= 2.5:
            raise ValueError(f"explore must be a noise std in [0, 2.5], got {self.explore!r}")
        if not 0.0 <= self.anchor < float("inf"):
            raise ValueError(f"anchor must be a finite number >= 0, got {self.anchor!r}")
        if not 0.0 <= self.decision < float("inf"):
            raise ValueError(f"decision must be a finite number >= 0, got {self.decision!r}")
        if not 0.0 <= self.sim_mix < 1.0:
            raise ValueError(f"sim_mix must be a share in [0, 1), got {self.sim_mix!r}")
        whole("ensemble", 1)
        if isinstance(self.disagreement, bool) or not isinstance(self.disagreement, (int, float)) \
                or not 0.0 <= self.disagreement < float("inf"):
            raise ValueError(f"disagreement must be a finite number >= 0, got {self.disagreement!r}")
        if self.disagreement > 0 and self.ensemble < 2:
            raise ValueError(f"disagreement {self.disagreement} penalises the spread of an ensemble dynamics: "
                             "set ensemble >= 2")

    def model_overrides(self) -> dict[str, Any] | None:
        """The toy preset's fields these options replace (None: the preset as it is)."""
        overrides: dict[str, Any] = {}
        dynamics = self.dynamics_override()
        if dynamics is not None:
            overrides["dynamics"] = dynamics
        if self.history is not None:
            overrides["history"] = self.history
        if self.horizon is not None:
            overrides["horizon"] = self.horizon
        return overrides or None

    def dynamics_override(self) -> dict[str, Any] | None:
        """The ``dynamics`` spec replacing the toy preset's (None: the preset's own); an ensemble wraps it."""
        spec = None
        if self.dynamics_context or self.dynamics_hidden is not None:
            kwargs: dict[str, Any] = {"hidden": list(self.dynamics_hidden or (128, 128))}
            if self.dynamics_context:
                kwargs["action_context"] = self.dynamics_context
            spec = {"name": "mlp", "kwargs": kwargs}
        if self.ensemble < 2:
            return spec
        if spec is None:
            from simdist.model.presets import preset_config

            spec = preset_config("toy").to_dict()["dynamics"]
        return {"name": "ensemble", "kwargs": {"members": self.ensemble, "member": spec}}

    def perturbation(self) -> Any:
        """The pretraining data's perturbation windows (the toy's manipulation ones by default)."""
        from simdist.data.engine import PerturbationConfig

        default = PerturbationConfig.manipulation(max_noise=self.perturb_sigma)
        return replace(default, noise_window=(1, self.perturb_steps + 1))


QUICK = ToyScale(sim_transitions=6_000, pretrain_epochs=2, windows_per_epoch=4_000, real_episodes=8,
                 finetune_epochs=3, finetune_windows_per_epoch=1_500, eval_episodes=8, num_envs=8,
                 samples=48, iterations=2)
#: the end-to-end test's scale: every stage runs, on real components, in well under a minute
TEST = ToyScale(sim_transitions=3_000, pretrain_epochs=1, windows_per_epoch=2_000, real_episodes=2,
                finetune_epochs=2, finetune_windows_per_epoch=600, eval_episodes=2, num_envs=2,
                samples=32, iterations=2, heldout_episodes=2)


def scale_defaults(scale: ToyScale) -> DemoDefaults:
    """The demo options' defaults of a :class:`ToyScale` (its pretraining budget is not an option)."""
    return DemoDefaults(real="lag", out="outputs/toy-demo", real_episodes=scale.real_episodes, progress=True,
                        loop=AdaptConfig(evaluation=EvaluationConfig(trials=scale.eval_episodes),
                                         num_envs=scale.num_envs,
                                         planner_overrides={"num_samples": scale.samples,
                                                            "iterations": scale.iterations},
                                         finetune=FinetuneConfig(epochs=scale.finetune_epochs,
                                                                 windows_per_epoch=scale.finetune_windows_per_epoch),
                                         heldout_episodes=scale.heldout_episodes))


def check_pretrained(folder: str | Path | None, ensemble: int | None = None) -> None:
    """A ``--pretrained`` folder must hold a saved world model (InputError naming it otherwise); None passes.
    ``ensemble``: the number of dynamics members the model must have (1: a single dynamics)."""
    from simdist.errors import InputError
    from simdist.fsutil import read_json_object
    from simdist.model.config import WorldModelConfig

    if folder is None:
        return
    path = Path(folder) / "config.json"
    if not path.is_file():
        raise InputError(f"--pretrained {folder}: no config.json there (a saved world-model folder)")
    if ensemble is not None:
        dynamics = WorldModelConfig.from_dict(read_json_object(path, InputError)).dynamics
        members = int(dynamics.kwargs.get("members", 1)) if dynamics.name == "ensemble" else 1
        if members != ensemble:
            raise InputError(f"--ensemble {ensemble}: the pretrained model in {folder} has {members} dynamics "
                             "member(s)")


#: options added after the demo's results were first recorded: written into results.json only when set, so a
#: run with the earlier options records (and regenerates) the same file
LATER_OPTIONS = {"decision": 0.0}


def recorded_options(options: ToyOptions) -> dict[str, object]:
    """``options`` as results.json records them (:data:`LATER_OPTIONS` left out at their defaults)."""
    return {k: v for k, v in asdict(options).items() if not (k in LATER_OPTIONS and v == LATER_OPTIONS[k])}


def check_sim_mix(pretrained: str | Path | None, options: ToyOptions) -> None:
    """``sim_mix`` with a ``--pretrained`` model reads the simulation data its demo run left beside it
    (``<run>/sim-data``): InputError naming the folder when it is not there."""
    from simdist.errors import InputError

    if options.sim_mix and pretrained is not None and not (Path(pretrained).parent / "sim-data" /
                                                          "dataset.json").is_file():
        raise InputError(f"--sim-mix: no simulation dataset at {Path(pretrained).parent / 'sim-data'} (the "
                         "folder an earlier demo run leaves beside its toy-sim model)")


def _log(msg: str, started: float) -> None:
    print(f"[{time.perf_counter() - started:6.1f}s] {msg}", flush=True)


class ToyDemo(DemoHook):
    """The toy's hook into the demo pipeline (:mod:`simdist.workflows.demo_pipeline`): its defaults (the ``lag``
    profile, :class:`ToyScale`'s budgets), its own pretraining (stages 1-2), its loop's parts
    (:func:`.loop.toy_parts`), its settings (``--option KEY=VALUE``: :class:`ToyOptions`) and its results (returns
    and final distances in simulation, zero-shot and adapted on the profile, and the held-out consistency).
    ``scale``: the scale whose pretraining budget (and whose defaults) the run takes (None: :class:`ToyScale`'s,
    ``--quick``: :data:`QUICK`'s)."""

    DEFAULTS = scale_defaults(ToyScale())
    QUICK = scale_defaults(QUICK)
    options_class = ToyOptions
    resume = False  # a rerun into the same folder needs --overwrite and starts afresh
    can_pretrain = True
    markers = DEMO_MARKERS

    def __init__(self, task_cls: type | None = None, scale: ToyScale | None = None) -> None:
        from simdist.components.tasks.toy_reach.task import ToyReachTask

        super().__init__(task_cls or ToyReachTask)
        self.base_scale = scale
        self.timing: dict[str, float] = {}
        self.sim_data: dict[str, Any] = {}
        self.pretrained_here = False

    def defaults(self, quick: bool) -> DemoDefaults:
        if self.base_scale is not None:
            return scale_defaults(self.base_scale)
        return super().defaults(quick)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        from simdist.components.tasks.toy_reach.profiles import builtin_profiles

        super().add_arguments(parser)
        parser.epilog = (f"built-in profiles: {', '.join(builtin_profiles())}; the lever settings of "
                         "docs/plan-ranking.md are --option KEY=VALUE (e.g. --option ensemble=4 --option "
                         "disagreement=1.0)")

    def check(self, args: argparse.Namespace) -> None:
        from simdist.components.tasks.toy_reach.profiles import load_profile

        if args.minutes is not None and args.options.explore:
            raise ValueError("--minutes: the toy demo logs --minutes of real data with the loop's own collection, "
                             "without the explore noise; give --real-episodes")
        if args.planner_overrides.get("temporal_ensemble") is not None:
            raise ValueError("--planner.temporal_ensemble: the toy demo's planner replans every step without it")
        self.real = load_profile(args.real)  # a bad profile stops here, before any work
        self.scale, self.options, self.seed = self.scale_of(args), args.options, args.seed
        if args.model is not None:
            from simdist.agents import check_model_for_task
            from simdist.hub.files import CONFIG_NAME
            from simdist.model.config import WorldModelConfig
            from simdist.tasks import make_task

            folder = Path(args.model)
            if not (folder / CONFIG_NAME).is_file():
                raise ValueError(f"--pretrained {folder}: no {CONFIG_NAME} there (a saved world-model folder)")
            config = WorldModelConfig.from_file(folder / CONFIG_NAME)
            check_model_for_task(config, make_task("toy-reach"), "--pretrained")
        check_pretrained(args.model, args.options.ensemble)
        check_sim_mix(args.model, args.options)

    def scale_of(self, args: argparse.Namespace) -> ToyScale:
        """The run's :class:`ToyScale`: the pretraining budget of the base scale, the rest from the options."""
        base = self.base_scale or (QUICK if args.quick else ToyScale())
        return replace(base, real_episodes=args.real_episodes, finetune_epochs=args.epochs,
                       finetune_windows_per_epoch=args.windows_per_epoch, eval_episodes=args.trials,
                       num_envs=args.envs, samples=args.planner_overrides["num_samples"],
                       iterations=args.planner_overrides["iterations"],
                       heldout_episodes=args.heldout_episodes)

    def log(self, msg: str) -> None:
        _log(msg, self.started)

    # -- stages 1-2 -------------------------------------------------------------------------------
    def pretrain(self, args: argparse.Namespace, out: Path) -> str:
        """Generate simulation data and pretrain the world model (``OUT/toy-sim``); returns its folder."""
        import lightning as L
        import torch

        from simdist.components.tasks.toy_reach.data import generate_toy_dataset
        from simdist.data import TrajectoryDataModule
        from simdist.fsutil import atomic_write_text
        from simdist.training import PretrainModule
        from simdist.training.module import epoch_trainer

        scale, options, seed, progress = self.scale, args.options, args.seed, args.progress
        torch.manual_seed(seed)
        L.seed_everything(seed, verbose=False)
        self.pretrained_here = True
        self.log(f"1/6 generating {scale.sim_transitions:,} simulated transitions (expert + sub-optimal mixture)")
        gen = generate_toy_dataset(str(out / "sim-data"), transitions=scale.sim_transitions, seed=seed,
                                   num_envs=scale.num_envs, progress=progress, perturbation=options.perturbation())
        self.sim_data = {k: gen[k] for k in ("episodes", "transitions", "expert_fraction", "noised_fraction")}

        self.log("2/6 pretraining the world model on simulation data (all components)")
        pre = PretrainModule(preset="toy", lr=1e-3, end_lr=3e-4, warmup_steps=100, decay_steps=4_000,
                             preset_overrides=options.model_overrides(), history_dropout=options.history_dropout,
                             consistency_decay=options.consistency_decay)
        cfg = pre.world_model.config
        dm = TrajectoryDataModule(str(out / "sim-data"), history=cfg.history, horizon=cfg.horizon, batch_size=128,
                                  windows_per_epoch=scale.windows_per_epoch, heldout_fraction=0.0, seed=seed,
                                  perturbed_repeat=options.perturbed_repeat)
        wall, cpu = time.perf_counter(), time.process_time()
        epoch_trainer(out / "pretrain", scale.pretrain_epochs, progress).fit(pre, dm)
        self.timing["pretrain_seconds"] = time.perf_counter() - wall
        self.timing["pretrain_cpu_seconds"] = time.process_time() - cpu
        sim_model = pre.world_model.save_pretrained(out / "toy-sim", metrics={"sim_transitions": gen["transitions"]})
        if args.pretrain_only:
            seconds = time.perf_counter() - self.started
            atomic_write_text(out / "timing.json", json.dumps({"seconds": seconds, **self.timing}, indent=2))
            self.log(f"pretrained in {seconds:.0f}s; the model is in {sim_model}")
        return str(sim_model)

    def load_base(self, model: str) -> Any:
        import lightning as L
        import torch

        from simdist.agents import load_agent

        if not self.pretrained_here:
            torch.manual_seed(self.seed)
            L.seed_everything(self.seed, verbose=False)
            self.log(f"1-2/6 starting from the pretrained model {model}")
            self.sim_data = {"pretrained": str(model)}
        return load_agent(model)

    def make_task(self, args: argparse.Namespace) -> Any:
        return self.task_cls(profile=self.real)

    def make_loop(self, model: str, task: Any, out: Path, cfg: AdaptConfig, **kwargs: Any) -> AdaptationLoop:
        """The plain loop with the toy's parts (:func:`~simdist.components.tasks.toy_reach.loop.toy_parts`); the
        adapted model is ``OUT/toy-real``."""
        from simdist.components.tasks.toy_reach.loop import toy_parts

        self.parts = toy_parts(cfg, self.real, self.scale.samples, self.scale.iterations, self.options, self.log)
        return AdaptationLoop(model, task, out, cfg, parts=self.parts, stage_folders={1: "toy-real"}, **kwargs)

    # -- outputs ----------------------------------------------------------------------------------
    def results(self, args: argparse.Namespace, loop: AdaptationLoop, curve: dict[str, Any]) -> dict[str, Any]:
        from simdist.components.tasks.toy_reach.loop import ToyEvaluator, ToyFinetuner
        from simdist.components.tasks.toy_reach.task import final_distances
        from simdist.evaluation import bootstrap_ci, compare
        from simdist.workflows.adaptation import world_model_of

        finetuner, evaluator = loop.parts.finetuner, loop.parts.evaluator
        assert isinstance(finetuner, ToyFinetuner) and isinstance(evaluator, ToyEvaluator)
        model = world_model_of(loop.base)
        assert model is not None and finetuner.adapted is not None
        zero, adapted = loop.state["stages"][:2]
        minutes = int(loop.dataset_info(loop.data_dir)["num_steps"]) * model.config.dt / 60
        evals = [(name, evaluator.rollouts[name]) for name in ("sim", "real_zero_shot", "real_adapted")]
        returns = {name: bootstrap_ci(r.returns) for name, r in evals}
        distances = {name: bootstrap_ci(final_distances(r)) for name, r in evals}
        results = {
            "profile": self.real.to_dict(),
            "scale": asdict(self.scale),
            "options": recorded_options(args.options),
            "dynamics": model.config.to_dict()["dynamics"],
            "sim_data": self.sim_data,
            "real_minutes": minutes,
            "return": {name: e.mean for name, e in returns.items()},
            "return_ci95": {name: [e.low, e.high] for name, e in returns.items()},
            "final_distance": {name: e.mean for name, e in distances.items()},
            "final_distance_ci95": {name: [e.low, e.high] for name, e in distances.items()},
            "trials": {name: e.n for name, e in returns.items()},
            "comparison": compare(returns["real_zero_shot"], returns["real_adapted"],
                                  "real return, adapted vs zero-shot", ".3f"),
            "heldout_consistency": {"pretrained": zero["consistency"]["after"],
                                    "adapted": adapted["consistency"]["after"]},
        }
        if args.freeze != FINETUNE_FREEZE:  # an ablation (the paper's dynamics-only runs leave it out)
            results["freeze"] = args.freeze
        if args.options.ranking:
            self.log("diagnostics: plan ranking on the profile and in simulation, action information")
            results["diagnostics"] = _diagnostics(model, finetuner.adapted, self.real, self.scale, args.options,
                                                  args.seed, Path(args.out))
        return results

    def results_text(self, results: dict[str, Any]) -> str:
        return json.dumps(results, indent=2)  # numbers only: rewritten byte for byte

    def table(self, results: dict[str, Any]) -> str:
        return results_table(results)

    def markdown(self, results: dict[str, Any]) -> str:
        return results_table(results)

    def panels(self, results: dict[str, Any]) -> list[Panel]:
        """Return and final distance of each evaluation, each bar with its 95 % bootstrap interval."""
        name = results.get("profile", {}).get("name", "real")
        sides = (("sim", "sim", "reference"), ("real_zero_shot", f"{name}\nzero-shot", "zero_shot"),
                 ("real_adapted", f"{name}\nadapted", "adapted"))
        cons = results["heldout_consistency"]
        note = f"held-out consistency {cons['pretrained']:.4f} -> {cons['adapted']:.4f}"
        return [Panel(ylabel, tuple(Bar(label, results[key][k], results[f"{key}_ci95"][k][0],
                                        results[f"{key}_ci95"][k][1], side=side, n=results["trials"][k])
                                    for k, label, side in sides), note if key == "final_distance" else "")
                for key, ylabel in (("return", "mean episode return"),
                                    ("final_distance", "final distance to goal (m)"))]

    def title(self, results: dict[str, Any]) -> str:
        return "simdist toy-reach: zero-shot vs dynamics-only adaptation"


def run_toy_pipeline(out: str | Path, scale: ToyScale | None = None, seed: int = 0,
                     progress: bool = True, real: Any = "lag", pretrained: str | Path | None = None,
                     options: ToyOptions | None = None, pretrain_only: bool = False) -> dict[str, Any]:
    """Run the toy demo end to end in ``out`` on the proxy-real profile ``real`` (a built-in name, a YAML path, a
    dict or a profile) through the demo pipeline, as ``simdist demo --task toy-reach`` does; returns the results
    dict (also written to disk). ``scale``: the budgets (None: :class:`ToyScale`'s). ``pretrained``: a world-model
    folder to start from instead of generating data and pretraining (stages 1-2 are skipped). ``pretrain_only``:
    stop after stage 2 (``toy-sim`` saved, ``timing.json`` written; the returned dict holds the model's folder),
    so that several profiles can reuse one pretrained model with ``pretrained``."""
    from simdist.workflows.demo_pipeline import demo_parser, resolve, run_demo

    hook = ToyDemo(scale=scale or ToyScale())
    args = demo_parser(hook.task_cls, hook).parse_args(["--out", str(out), "--seed", str(seed)])
    args.progress = progress
    args.real = real
    args.model = None if pretrained is None else str(pretrained)
    args.pretrain_only = pretrain_only
    args.option = asdict(options or ToyOptions())
    resolve(hook, args)
    r = run_demo(hook, args)
    if pretrain_only:
        return {**r, "sim_data": hook.sim_data, **hook.timing}
    return r

def _diagnostics(model: Any, adapted: Any, real: Any, scale: ToyScale, options: ToyOptions, seed: int,
                 out: Path) -> dict[str, Any]:
    """Plan ranking (Spearman ρ, regret) of both models on the profile's states visited by the pretrained model's
    planner, and of the pretrained model in simulation; action information of both on fresh simulation windows."""
    from simdist.components.tasks.toy_reach.data import generate_toy_dataset
    from simdist.components.tasks.toy_reach.loop import SCORE_CHUNK
    from simdist.components.tasks.toy_reach.task import ToyReachTask
    from simdist.diagnostics.action_information import action_information, dataset_windows
    from simdist.diagnostics.mechanism import MechanismConfig, run_mechanism
    from simdist.registry import create

    def agent(m: Any) -> Any:
        return create("agent", "simdist", world_model=m).with_settings(
            planner="mppi", num_samples=scale.samples, iterations=scale.iterations, num_elites=16, seed=seed,
            score_chunk=SCORE_CHUNK,
            disagreement=options.disagreement)

    cfg = MechanismConfig(states=options.ranking_states, candidates=32, num_envs=scale.num_envs, seed=seed + 5)
    agents = {"zero_shot": agent(model), "adapted": agent(adapted)}
    on_profile = run_mechanism(ToyReachTask(profile=real), agents["zero_shot"], agents, cfg)
    in_sim = run_mechanism(ToyReachTask(profile="sim"), agents["zero_shot"], {"zero_shot": agents["zero_shot"]},
                           cfg)
    ranking = {f"{where}/{name}": {k: r[k] for k in ("spearman", "regret", "relative_regret", "predicted_spread")}
               for where, report in (("profile", on_profile), ("sim", in_sim))
               for name, r in report["models"].items()}
    generate_toy_dataset(str(out / "diag-data"), transitions=max(1_000, scale.sim_transitions // 20),
                         seed=seed + 1_000, num_envs=scale.num_envs)
    batch = dataset_windows(out / "diag-data", model, windows=512, seed=seed)
    info = {name: action_information(m, batch, seed=seed).to_dict() for name, m in
            (("zero_shot", model), ("adapted", adapted))}
    return {"ranking": ranking, "action_information": info}


def results_table(r: dict[str, Any]) -> str:
    """Mean [95 % bootstrap CI] and the trial count of each evaluation, the comparison, the consistency."""
    ret, dist, cons = r["return"], r["final_distance"], r["heldout_consistency"]
    ret_ci, dist_ci, trials = r["return_ci95"], r["final_distance_ci95"], r["trials"]

    def cell(means: dict[str, float], cis: dict[str, list[float]], key: str) -> str:
        return f"{means[key]:.3f} [{cis[key][0]:.3f}, {cis[key][1]:.3f}]"

    name = r.get("profile", {}).get("name", "real")
    settings = (("sim", "sim (nominal physics)"), ("real_zero_shot", f"{name}, zero-shot (pretrained model)"),
                ("real_adapted", f"{name}, adapted ({r['real_minutes']:.1f} min of real data)"))
    rows = ["| setting | return, mean [95 % CI] | final distance to goal (m), mean [95 % CI] | trials |",
            "|---|---|---|---|"]
    rows += [f"| {title} | {cell(ret, ret_ci, key)} | {cell(dist, dist_ci, key)} | {trials[key]} |"
             for key, title in settings]
    rows += [
        "",
        r["comparison"],
        "",
        "| held-out real consistency loss | value |",
        "|---|---|",
        f"| pretrained | {cons['pretrained']:.4f} |",
        f"| adapted ({r.get('freeze', 'dynamics only')}) | {cons['adapted']:.4f} |",
        f"| reduction | {cons['pretrained'] / max(cons['adapted'], 1e-12):.2f}x |",
    ]
    if "diagnostics" in r:
        diag = r["diagnostics"]
        rows += ["", "| diagnostic | Spearman ρ [95 % CI] | regret | predicted spread |", "|---|---|---|---|"]
        rows += [f"| plan ranking, {name.replace('/', ', ')} | {_ci(v['spearman'])} | {_ci(v['regret'])} | "
                 f"{_ci(v['predicted_spread'])} |" for name, v in diag["ranking"].items()]
        rows += ["", "| action information (fresh sim windows) | consistency, true / swapped actions | "
                 "latent shift | return shift | return-label r, true / swapped |", "|---|---|---|---|---|"]
        rows += [f"| {name} | {v['consistency_true_mean']:.4f} / {v['consistency_permuted_mean']:.4f} | "
                 f"{v['latent_shift']:.3f} | {v['return_shift']:.3f} | {v['return_label_corr_true']:.3f} / "
                 f"{v['return_label_corr_permuted']:.3f} |" for name, v in diag["action_information"].items()]
    return "\n".join(rows) + "\n"


def _ci(e: dict[str, float]) -> str:
    return f"{e['mean']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"
