"""``simdist demo``: the whole SimDist loop on the toy point-mass task, before/after table included.

The default ``simdist demo``: by default on the ``lag`` profile (actions act 0.4 s late through a 4x stronger
actuator), with the dynamics reading the four actions in flight, 96 logged real episodes and 12 finetuning
epochs, where dynamics-only adaptation beats zero-shot (docs/plan-ranking.md).

generate sim data (expert + sub-optimal mixture + perturbation windows) → pretrain the world model →
plan with MPPI in sim and on a proxy-real profile (``--real``: a built-in name or a YAML file) → log real
episodes → finetune the dynamics only → plan again. Writes ``results.json``, ``results.md`` and ``progress.png``;
with ``ranking`` the plan-ranking diagnostic (:mod:`simdist.mechanism`) of both models on the profile and of the
pretrained one in simulation, and the action-information diagnostic (:mod:`simdist.diagnostics`) on fresh
simulation windows, go into ``results.json`` too.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from simdist.arguments import positive_int, tool_parser
from simdist.fsutil import check_output_path

#: entries that make a folder a toy demo's output (``--out``; rerunning into one overwrites what it writes)
DEMO_MARKERS = ("results.json", "sim-data", "pretrain", "toy-sim", "real-data", "finetune")


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
    widths (None: the preset's 128, 128); ``history`` the model's history length (None: the preset's 8).
    Pretraining data and training: ``perturb_sigma`` the largest noise σ and ``perturb_steps`` the longest
    noised window of the data's perturbation windows (1.0 and 5: the toy's manipulation windows);
    ``perturbed_repeat`` oversamples windows holding a perturbed action that many times; ``history_dropout``
    zeroes a window's past actions with that probability; ``consistency_decay`` weights consistency step k by
    ρ^k. Adaptation: ``explore`` the largest noise σ of the data engine's manipulation perturbation windows
    added to the planner's actions while logging real episodes (0: on-policy planner data), so the finetuned
    dynamics see actions like those MPPI samples; ``anchor`` an L2 pull towards the pretrained weights;
    ``sim_mix`` the share of simulation transitions mixed into the finetuning data (0: real data only).
    ``ranking``: run both diagnostics (module docstring); ``ranking_states``: cloned states per ranking.
    ``ensemble``: 1 a single dynamics; K >= 2 wraps the demo's dynamics spec (``action_context`` included) in a
    ``dynamics/ensemble`` of K members. ``disagreement``: MPPI's penalty λ on the members' disagreement (needs
    ``ensemble`` >= 2), used by every planner of the loop and of the diagnostics. Both go beyond the paper."""

    dynamics_context: int = 4
    dynamics_hidden: tuple[int, ...] | None = None
    history: int | None = None
    perturb_sigma: float = 1.0
    perturb_steps: int = 5
    perturbed_repeat: int = 1
    history_dropout: float = 0.0
    consistency_decay: float = 1.0
    explore: float = 0.0
    anchor: float = 0.0
    sim_mix: float = 0.0
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
            from simdist.presets import preset_config

            spec = preset_config("toy").to_dict()["dynamics"]
        return {"name": "ensemble", "kwargs": {"members": self.ensemble, "member": spec}}

    def perturbation(self) -> Any:
        """The pretraining data's perturbation windows (the toy's manipulation ones by default)."""
        from simdist.data.engine import PerturbationConfig

        default = PerturbationConfig.manipulation(max_noise=self.perturb_sigma)
        return replace(default, noise_window=(1, self.perturb_steps + 1))


#: MPPI sequences per ``imagine`` call: the toy's tiny model is bound by per-call overhead at the CPU default of
#: 128, so 1,024 plans the same actions 1.85x faster (16 envs x 128 samples x 4 iterations, one thread)
SCORE_CHUNK = 1024

QUICK = ToyScale(sim_transitions=6_000, pretrain_epochs=2, windows_per_epoch=4_000, real_episodes=8,
                 finetune_epochs=3, finetune_windows_per_epoch=1_500, eval_episodes=8, num_envs=8,
                 samples=48, iterations=2)
#: the end-to-end test's scale: every stage runs, on real components, in well under a minute
TEST = ToyScale(sim_transitions=3_000, pretrain_epochs=1, windows_per_epoch=2_000, real_episodes=2,
                finetune_epochs=2, finetune_windows_per_epoch=600, eval_episodes=2, num_envs=2,
                samples=32, iterations=2, heldout_episodes=2)


def check_pretrained(folder: str | Path | None, ensemble: int | None = None) -> None:
    """A ``--pretrained`` folder must hold a saved world model (InputError naming it otherwise); None passes.
    ``ensemble``: the number of dynamics members the model must have (1: a single dynamics)."""
    from simdist.config import WorldModelConfig
    from simdist.errors import InputError
    from simdist.fsutil import read_json_object

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


def check_sim_mix(pretrained: str | Path | None, options: ToyOptions) -> None:
    """``sim_mix`` with a ``--pretrained`` model reads the simulation data its demo run left beside it
    (``<run>/sim-data``): InputError naming the folder when it is not there."""
    from simdist.errors import InputError

    if options.sim_mix and pretrained is not None and not (Path(pretrained).parent / "sim-data" /
                                                          "dataset.json").is_file():
        raise InputError(f"--sim-mix: no simulation dataset at {Path(pretrained).parent / 'sim-data'} (the "
                         "folder an earlier demo run leaves beside its toy-sim model)")


#: held-out rounds collected at most when the planner's episodes end too early to hold one consistency window
HELDOUT_ROUNDS = 4


def _heldout_episodes(collect: Any, model: Any, seed: int) -> list[Any]:
    """The held-out real episodes: ``collect(seed)``'s; when none of them is long enough for a consistency window
    (a zero-shot planner that throws the puck out early), further rounds with seeds ``seed + 1000·k`` until one
    is, at most :data:`HELDOUT_ROUNDS` (a clear error then)."""
    from simdist.training.evaluate import episode_batch

    episodes: list[Any] = []
    for k in range(HELDOUT_ROUNDS):
        episodes += collect(seed + 1_000 * k)
        if any(episode_batch(model, ep, model.config.history) is not None for ep in episodes):
            return episodes
    raise RuntimeError(f"none of {len(episodes)} held-out real episodes is long enough for one consistency window "
                       f"(the longest has {max(len(ep) for ep in episodes)} steps)")


def _log(msg: str, started: float) -> None:
    print(f"[{time.perf_counter() - started:6.1f}s] {msg}", flush=True)


def _evaluate(planner: Any, variant: Any, episodes: int, num_envs: int, seed: int,
              record: bool = False, explore: float = 0.0) -> Any:
    from simdist.components.tasks.toy_reach.pointmass import ToyReachEnv
    from simdist.data.engine import PerturbationConfig
    from simdist.data.schema import DatasetSpec
    from simdist.rollout import rollout

    env = ToyReachEnv(num_envs, variant=variant, seed=seed)
    spec = DatasetSpec.from_env(env) if record else None
    noise = PerturbationConfig.manipulation(max_noise=explore) if explore > 0 else None
    try:
        return rollout(env, planner, episodes=episodes, seed=seed, record_spec=spec, perturbation=noise,
                       meta={"source": "sim" if env.variant == "sim" else "real", "task": "toy-reach"})
    finally:
        env.close()


def run_toy_pipeline(out: str | Path, scale: ToyScale | None = None, seed: int = 0,
                     progress: bool = True, real: Any = "lag", pretrained: str | Path | None = None,
                     options: ToyOptions | None = None, pretrain_only: bool = False) -> dict[str, Any]:
    """Run the toy loop end to end in ``out`` on the proxy-real profile ``real`` (a built-in name, a YAML path, a
    dict or a profile); returns the results dict (also written to disk). ``pretrained``: a world-model folder to
    start from instead of generating data and pretraining (stages 1-2 are skipped). ``pretrain_only``: stop after
    stage 2 (``toy-sim`` saved, ``timing.json`` written; the returned dict holds the model's folder), so that
    several profiles can reuse one pretrained model with ``pretrained``."""
    import lightning as L
    import torch

    from simdist import create
    from simdist.components.tasks.toy_reach.data import generate_toy_dataset
    from simdist.components.tasks.toy_reach.profiles import load_profile
    from simdist.components.tasks.toy_reach.task import final_distances
    from simdist.data import DatasetSpec, EpisodeWriter, TrajectoryDataModule
    from simdist.evaluation import bootstrap_ci, compare
    from simdist.fsutil import atomic_write_text
    from simdist.training import FinetuneModule, PretrainModule
    from simdist.training.evaluate import consistency_loss
    from simdist.training.module import epoch_trainer

    warnings.filterwarnings("ignore", ".*(eval mode|does not have many workers|__len__).*")
    scale = scale or ToyScale()
    options = options or ToyOptions()
    real = load_profile(real)  # a bad profile stops here, before any work
    check_pretrained(pretrained, options.ensemble)
    check_sim_mix(pretrained, options)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    timing: dict[str, float] = {}
    torch.manual_seed(seed)
    L.seed_everything(seed, verbose=False)

    if pretrained is None:
        _log(f"1/6 generating {scale.sim_transitions:,} simulated transitions (expert + sub-optimal mixture)",
             started)
        gen = generate_toy_dataset(str(out / "sim-data"), transitions=scale.sim_transitions, seed=seed,
                                   num_envs=scale.num_envs, progress=progress, perturbation=options.perturbation())
        sim_data = {k: gen[k] for k in ("episodes", "transitions", "expert_fraction", "noised_fraction")}
        sim_source = out / "sim-data"

        _log("2/6 pretraining the world model on simulation data (all components)", started)
        pre = PretrainModule(preset="toy", lr=1e-3, end_lr=3e-4, warmup_steps=100, decay_steps=4_000,
                             preset_overrides=options.model_overrides(), history_dropout=options.history_dropout,
                             consistency_decay=options.consistency_decay)
        cfg = pre.world_model.config
        dm = TrajectoryDataModule(str(out / "sim-data"), history=cfg.history, horizon=cfg.horizon, batch_size=128,
                                  windows_per_epoch=scale.windows_per_epoch, heldout_fraction=0.0, seed=seed,
                                  perturbed_repeat=options.perturbed_repeat)
        wall, cpu = time.perf_counter(), time.process_time()
        epoch_trainer(out / "pretrain", scale.pretrain_epochs, progress).fit(pre, dm)
        timing["pretrain_seconds"] = time.perf_counter() - wall
        timing["pretrain_cpu_seconds"] = time.process_time() - cpu
        sim_model = pre.world_model.save_pretrained(out / "toy-sim", metrics={"sim_transitions": gen["transitions"]})
        model = pre.world_model.eval()
        if pretrain_only:
            seconds = time.perf_counter() - started
            atomic_write_text(out / "timing.json", json.dumps({"seconds": seconds, **timing}, indent=2))
            _log(f"pretrained in {seconds:.0f}s; the model is in {sim_model}", started)
            return {"pretrained": str(sim_model), "sim_data": sim_data, **timing}
    else:
        _log(f"1-2/6 starting from the pretrained model {pretrained}", started)
        from simdist.world_model import WorldModel

        sim_model, sim_data = Path(pretrained), {"pretrained": str(pretrained)}
        sim_source = sim_model.parent / "sim-data"  # where an earlier demo run left its simulation data
        model = WorldModel.from_pretrained(sim_model).eval()
        cfg = model.config

    def planner_for(model: Any) -> Any:
        return create("planner", "mppi", world_model=model, num_samples=scale.samples,
                      iterations=scale.iterations, num_elites=16, seed=seed, disagreement=options.disagreement,
                      score_chunk=SCORE_CHUNK)

    _log(f"3/6 planning with MPPI in simulation and zero-shot on {real.name!r}", started)
    sim_eval = _evaluate(planner_for(model), "sim", scale.eval_episodes, scale.num_envs, seed + 1)
    real_before = _evaluate(planner_for(model), real, scale.eval_episodes, scale.num_envs, seed + 2)

    _log(f"4/6 logging {scale.real_episodes} {real.name!r} episodes with the planner (finetuning data"
         f"{f', exploration noise up to {options.explore}' if options.explore else ''})", started)
    heldout = _heldout_episodes(lambda s: _evaluate(planner_for(model), real, scale.heldout_episodes,
                                                    scale.num_envs, s, record=True).episodes, model, seed + 4)
    train_eps = _evaluate(planner_for(model), real, scale.real_episodes, scale.num_envs, seed + 3,
                          record=True, explore=options.explore).episodes
    spec = DatasetSpec.from_episode(train_eps[0])
    with EpisodeWriter(out / "real-data", spec, max_episodes_per_shard=8) as writer:
        for ep in train_eps:
            writer.write(ep)
    real_steps = sum(len(ep) for ep in train_eps)
    minutes = real_steps * cfg.dt / 60
    pad = cfg.history
    before_loss = consistency_loss(model, heldout, front_padding=pad)

    _log(f"5/6 finetuning only the dynamics on {minutes:.1f} min of 'real' data", started)
    ft = FinetuneModule(init_from=str(sim_model), lr=2e-4, end_lr=1e-4, warmup_steps=50, decay_steps=2_000,
                        anchor=options.anchor)
    finetune_data = [str(out / "real-data")]
    if options.sim_mix:
        finetune_data.append(_sim_mix(sim_source, out / "sim-mix", options.sim_mix, real_steps))
    real_dm = TrajectoryDataModule(finetune_data, history=cfg.history, horizon=cfg.horizon,
                                   batch_size=32, windows_per_epoch=scale.finetune_windows_per_epoch,
                                   heldout_fraction=0.0, front_pad=pad, seed=seed)
    epoch_trainer(out / "finetune", scale.finetune_epochs, progress).fit(ft, real_dm)
    adapted = ft.world_model.eval()
    adapted.save_pretrained(out / "toy-real", base_model=str(sim_model))
    after_loss = consistency_loss(adapted, heldout, front_padding=pad)

    _log(f"6/6 planning on {real.name!r} with the adapted model", started)
    real_after = _evaluate(planner_for(adapted), real, scale.eval_episodes, scale.num_envs, seed + 2)

    evals = (("sim", sim_eval), ("real_zero_shot", real_before), ("real_adapted", real_after))
    returns = {name: bootstrap_ci(r.returns) for name, r in evals}
    distances = {name: bootstrap_ci(final_distances(r)) for name, r in evals}
    results = {
        "profile": real.to_dict(),
        "scale": asdict(scale),
        "options": asdict(options),
        "dynamics": cfg.to_dict()["dynamics"],
        "sim_data": sim_data,
        "real_minutes": minutes,
        "return": {name: e.mean for name, e in returns.items()},
        "return_ci95": {name: [e.low, e.high] for name, e in returns.items()},
        "final_distance": {name: e.mean for name, e in distances.items()},
        "final_distance_ci95": {name: [e.low, e.high] for name, e in distances.items()},
        "trials": {name: e.n for name, e in returns.items()},
        "comparison": compare(returns["real_zero_shot"], returns["real_adapted"], "real return, adapted vs zero-shot",
                              ".3f"),
        "heldout_consistency": {"pretrained": before_loss, "adapted": after_loss},
    }
    if options.ranking:
        _log("diagnostics: plan ranking on the profile and in simulation, action information", started)
        results["diagnostics"] = _diagnostics(model, adapted, real, scale, options, seed, out)
    seconds = time.perf_counter() - started
    atomic_write_text(out / "results.json", json.dumps(results, indent=2))  # numbers only: rewritten byte for byte
    atomic_write_text(out / "timing.json", json.dumps({"seconds": seconds, **timing}, indent=2))
    atomic_write_text(out / "results.md", results_table(results))
    _plot(results, out / "progress.png")
    _log(f"done in {seconds:.0f}s; results in {out}", started)
    print(results_table(results))
    return results


def _diagnostics(model: Any, adapted: Any, real: Any, scale: ToyScale, options: ToyOptions, seed: int,
                 out: Path) -> dict[str, Any]:
    """Plan ranking (Spearman ρ, regret) of both models on the profile's states visited by the pretrained model's
    planner, and of the pretrained model in simulation; action information of both on fresh simulation windows."""
    from simdist.components.tasks.toy_reach.data import generate_toy_dataset
    from simdist.components.tasks.toy_reach.task import ToyReachTask
    from simdist.diagnostics import action_information, dataset_windows
    from simdist.mechanism import MechanismConfig, run_mechanism
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


def _sim_mix(source: Path, out: Path, share: float, real_transitions: int) -> str:
    """Copy the first simulation episodes of ``source`` into ``out`` until they hold ``share`` of the
    finetuning transitions (real + simulation); returns ``out``. An earlier copy is replaced."""
    import shutil

    from simdist.data import DatasetSpec, EpisodeWriter
    from simdist.data.shards import iter_episodes

    wanted = share / (1.0 - share) * real_transitions
    episodes, taken = [], 0
    for ep in iter_episodes(str(source), shuffle_shards=False, split_by_node=False, split_by_worker=False):
        if taken >= wanted:
            break
        episodes.append(ep)
        taken += len(ep)
    shutil.rmtree(out, ignore_errors=True)
    with EpisodeWriter(out, DatasetSpec.from_episode(episodes[0]), max_episodes_per_shard=8) as writer:
        for ep in episodes:
            writer.write(ep)
    return str(out)


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
        f"| adapted (dynamics only) | {cons['adapted']:.4f} |",
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


def _plot(r: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    labels = ["sim", "real\nzero-shot", "real\nadapted"]
    axes[0].bar(labels, [r["return"]["sim"], r["return"]["real_zero_shot"], r["return"]["real_adapted"]],
                color=["#777", "#c44", "#48c"])
    axes[0].set_ylabel("mean episode return")
    cons = r["heldout_consistency"]
    axes[1].bar(["pretrained", "adapted"], [cons["pretrained"], cons["adapted"]], color=["#c44", "#48c"])
    axes[1].set_ylabel("held-out consistency loss")
    fig.suptitle("simdist toy-reach: zero-shot vs dynamics-only adaptation")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _widths(text: str) -> tuple[int, ...]:
    """``256,256`` → (256, 256) for ``--dynamics-hidden``."""
    import argparse

    try:
        return tuple(int(w) for w in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integer widths, got {text!r}") from None


def main(argv: list[str]) -> int:
    from simdist.components.tasks.toy_reach.profiles import builtin_profiles, load_profile
    from simdist.profiles import ProfileError

    parser = tool_parser("demo", "toy task end to end: generate, pretrain, plan, adapt the dynamics, plan again")
    parser.add_argument("--out", default="outputs/toy-demo")
    parser.add_argument("--real", default="lag",
                        help=f"the proxy-real profile: {', '.join(builtin_profiles())}, or a YAML file "
                             "(default: lag)")
    parser.add_argument("--pretrained", default=None,
                        help="a saved world-model folder (e.g. an earlier run's toy-sim): skip data and pretraining")
    parser.add_argument("--dynamics-context", type=int, default=4,
                        help="past actions the mlp dynamics reads each step (default 4; 0: z_{k+1} = f(z_k, a_k))")
    parser.add_argument("--dynamics-hidden", type=_widths, default=None,
                        help="hidden widths of the mlp dynamics, e.g. 256,256 (default: the preset's 128,128)")
    parser.add_argument("--history", type=positive_int, default=None,
                        help="the model's history length (default: the preset's 8; at least --dynamics-context)")
    parser.add_argument("--perturb-sigma", type=float, default=1.0,
                        help="largest noise std of the pretraining data's perturbation windows (default 1.0)")
    parser.add_argument("--perturb-steps", type=positive_int, default=5,
                        help="longest noised window of the pretraining data, in steps (default 5)")
    parser.add_argument("--perturbed-repeat", type=positive_int, default=1,
                        help="oversample pretraining windows that hold a perturbed action this many times")
    parser.add_argument("--history-dropout", type=float, default=0.0,
                        help="probability of zeroing a pretraining window's past actions (default 0)")
    parser.add_argument("--consistency-decay", type=float, default=1.0,
                        help="weight consistency step k by RHO^k (default 1.0: uniform)")
    parser.add_argument("--sim-mix", type=float, default=0.0,
                        help="share of simulation transitions mixed into the finetuning data (default 0)")
    parser.add_argument("--explore", type=float, default=0.0,
                        help="largest exploration noise std on the planner's actions while logging real data")
    parser.add_argument("--real-episodes", type=positive_int, default=None,
                        help="real episodes logged for finetuning (default: the scale's, 96)")
    parser.add_argument("--finetune-epochs", type=positive_int, default=None,
                        help="finetuning epochs of 6,000 windows (default: the scale's, 12)")
    parser.add_argument("--anchor", type=float, default=0.0,
                        help="L2 pull of the finetuned weights towards the pretrained ones (0: none)")
    parser.add_argument("--ensemble", type=int, default=1, metavar="K",
                        help="dynamics members: K >= 2 trains an ensemble of K dynamics (beyond the paper; "
                             "default 1: a single dynamics)")
    parser.add_argument("--disagreement", type=float, default=0.0, metavar="LAMBDA",
                        help="MPPI's penalty on the ensemble members' discounted disagreement, subtracted from "
                             "each sequence's return (needs --ensemble >= 2; default 0: none)")
    parser.add_argument("--ranking", action="store_true",
                        help="also measure plan ranking (Spearman rho) and action information, before and after")
    parser.add_argument("--pretrain-only", action="store_true",
                        help="stop after pretraining (OUT/toy-sim), for several --pretrained runs to reuse")
    parser.add_argument("--quick", action="store_true", help="tiny scale (seconds), as the tests run it")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    check_output_path(args.out, kind="toy demo", markers=DEMO_MARKERS)  # before any work
    if args.pretrained is not None:
        from simdist.agents import check_model_for_task
        from simdist.hub.files import CONFIG_NAME
        from simdist.hub.load import read_config
        from simdist.tasks import make_task

        folder = Path(args.pretrained)
        if not (folder / CONFIG_NAME).is_file():
            parser.error(f"--pretrained {folder}: no {CONFIG_NAME} there (a saved world-model folder)")
        check_model_for_task(read_config(folder / CONFIG_NAME), make_task("toy-reach"), "--pretrained")
    try:
        real = load_profile(args.real)
        options = ToyOptions(
            dynamics_context=args.dynamics_context, dynamics_hidden=args.dynamics_hidden, history=args.history,
            perturb_sigma=args.perturb_sigma, perturb_steps=args.perturb_steps,
            perturbed_repeat=args.perturbed_repeat, history_dropout=args.history_dropout,
            consistency_decay=args.consistency_decay, explore=args.explore, anchor=args.anchor,
            sim_mix=args.sim_mix, ranking=args.ranking, ensemble=args.ensemble, disagreement=args.disagreement)
        check_pretrained(args.pretrained, options.ensemble)
        check_sim_mix(args.pretrained, options)
        if args.pretrain_only and args.pretrained:
            raise ValueError("--pretrain-only pretrains a model: it cannot start from --pretrained")
    except (ProfileError, ValueError) as err:
        parser.error(f"{err}")
    scale = QUICK if args.quick else ToyScale()
    if args.real_episodes is not None:
        scale = replace(scale, real_episodes=args.real_episodes)
    if args.finetune_epochs is not None:
        scale = replace(scale, finetune_epochs=args.finetune_epochs)
    run_toy_pipeline(args.out, scale, seed=args.seed, progress=not args.no_progress,
                     real=real, pretrained=args.pretrained, options=options, pretrain_only=args.pretrain_only)
    return 0
