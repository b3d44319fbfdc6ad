"""The paper's baseline comparison (Fig. 4 / Table IX protocol, BASELINES.md 1 and 8) as one resumable command.

    python -m results.baselines.compare --task toy-reach [--seeds 0,1,2] [--agents simdist,iql,...] [--jobs 2]
    python -m results.baselines.compare --task ur5e-peg --model PATH   # a pretrained UR5e world model
    python -m results.baselines.compare --task toy-reach --dry-run      # the plan, with what is done

Every method starts from the same simulation data and SimDist's frozen encoder:

1. shared: the simulation data (``simdist generate``), SimDist's world model (``simdist fit`` + ``export``, or
   ``--model``), 20 and 100 "teleoperated" demos of the task's expert on the proxy-real profile (``simdist
   demos``, successful episodes only);
2. per seed: the single-step BC start (MLP head on the frozen encoder, the simulation's expert-flagged steps
   plus the 20 demos), then each agent's run on the proxy-real profile, evaluated every 20 real episodes:

   - ``simdist`` (dynamics-only finetuning every 20 episodes) and ``simdist_bc`` (plus its policy head cloned
     on the 20 demos);
   - ``iql`` (offline IQL on simulation data and demos, then online), ``rlpd`` (BC actor, fresh critics, prior =
     simulation data and demos), ``sgft`` (V_sim regressed on the simulation values, then SGFT-SAC): sparse
     success rewards, updated after every real episode, exploring collection;
   - flat lines, trained once: ``bc`` (single-step BC on 100 demos) and ``diffusion_policy`` (100 demos, real
     only) / ``diffusion_policy_cotrain`` (100 demos co-trained with the simulation's expert steps).

The quadruped (``go2-slope``, ``go2-foam``: Table IX) has no demos: SimDist (the zoo model), IQL (value pretrained
in simulation) and RLPD from the single-step BC start, all learning from SimDist's reward model R_θ, and the
single-step BC itself; real data counted in minutes, the RL methods updated after every episode.

Everything resumes: a step whose output exists is skipped, adaptation runs resume themselves (per-episode
updates from ``live/``). Work goes to ``outputs/baselines/<task>/``; results (each run's ``curve.json``, the
flat lines' evaluations, ``table.md``, ``summary.json`` and ``success.png``) to ``results/baselines/<task>/``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from results.runner import atomic_path, pretrain_and_export, run_command, simdist_command, write_json, write_text

ROOT = Path(__file__).resolve().parents[2]

ADAPTING = ("simdist", "simdist_bc", "iql", "rlpd", "sgft")
FLAT = ("bc", "diffusion_policy", "diffusion_policy_cotrain")
AGENTS = ADAPTING + FLAT

#: Per task: data, world model, protocol budgets and the CPU scale of the baselines (BASELINES.md values where
#: they fit; the changes are listed in ``scaled``).
TASKS: dict[str, dict[str, Any]] = {
    "toy-reach": {
        "task": {"name": "toy-reach", "profile": "real"},
        "agents": AGENTS,
        "demos": True,
        "rewards": "sparse",
        "schedule_unit": "episodes",
        "plot": "success",
        "model": None,
        "generate": ["--envs", "16", "--transitions", "20000"],
        "recipes": ["recipes/toy/base.yaml", "recipes/toy/pretrain.yaml"],
        "demo_agent": "expert",
        "schedule": [0, 20, 40, 60, 80, 100, 120],
        "eval": {"episodes_per_eval": 32, "num_envs": 8, "planner_preset": "paper",
                 "planner_overrides": {"num_samples": 128, "iterations": 4}},
        "simdist": {"epochs": 3, "windows_per_epoch": 6000, "batch_size": 32, "lr": 2e-4, "warmup_steps": 50},
        "bc": {"hidden": [256, 256], "steps": 2000, "batch_size": 256, "lr": 1e-3},
        "rl": {"hidden": [64, 64], "batch_size": 256},
        "iql": {"pretrain_updates": 5000},
        "rlpd": {"utd": 2},
        "sgft": {"utd": 2, "pretrain_updates": 3000},
        "dp": {"steps": 2000, "batch_size": 64},
        "scaled": "RL critics (64, 64) instead of (256, 256); RLPD/SGFT UTD 2 instead of 20 (torchrl's REDQ "
                  "update takes about 35 ms here: UTD 20 over 120 episodes would be 84 min a seed); IQL 5,000 "
                  "offline steps instead of 1M; Diffusion Policy U-Net [64, 128, 256], 2,000 steps at batch 64",
    },
}
#: the UR5e tasks: the Wide grid, one pass over its 20-cell lattice per evaluation and the paper's manipulation
#: MPPI (as recipes/ur5e-*/adapt.yaml); the "teleoperator" is the expert retuned for the proxy-real cell
for _name, _profile in (("ur5e-peg", "peg-real"), ("ur5e-table-leg", "table-leg-real")):
    TASKS[_name] = {
        **TASKS["toy-reach"],
        "task": {"name": _name, "profile": _profile, "kwargs": {"grid": "wide"}},
        "generate": ["--preset", "cpu"],
        "recipes": [f"recipes/{_name}/base.yaml", f"recipes/{_name}/pretrain.yaml"],
        "demo_agent": "scripted:retuned",
        "eval": {"episodes_per_eval": 1, "num_envs": 10, "planner_preset": "manipulation",
                 "planner_overrides": {"num_samples": 256, "iterations": 3}},
    }
#: the quadruped (Table IX) at a reduced, equal budget: 4 minutes of proxy-real data at 50 Hz (the paper: 36), the
#: zoo model, 5 trials per protocol speed, the real-time planner as ``simdist adapt`` runs it on the Go2
for _name, _profile, _model in (("go2-slope", "ptfe-slope-5.7deg", "hub/models/go2-slope"),
                                ("go2-foam", "foam", "hub/models/go2-foam")):
    TASKS[_name] = {
        "task": {"name": "go2", "profile": _profile},
        "agents": ("simdist", "iql", "rlpd", "bc"),
        "demos": False,
        "rewards": "model",
        "schedule_unit": "minutes",
        "plot": "metric",
        "model": _model,
        "generate": ["--experts", "go2", "--envs", "64", "--transitions", "100000"],
        "schedule": [0, 4],
        "eval": {"episodes_per_eval": 5, "num_envs": 16, "planner_preset": "paper",
                 "planner_overrides": {"num_samples": 16, "iterations": 1, "init_std": 0.1, "warm_start": "policy",
                                       "temporal_ensemble": 0.8}},  # the real-time planner (docs/go2.md)
        "simdist": {"epochs": 3, "windows_per_epoch": 12000, "batch_size": 32, "lr": 2e-4, "warmup_steps": 50},
        "bc": {"hidden": [256, 256], "steps": 1000, "batch_size": 256, "lr": 1e-3},
        "rl": {"hidden": [64, 64], "batch_size": 256},
        "iql": {"pretrain_updates": 3000, "expectile": 0.7, "temperature": 3.0},
        "rlpd": {"utd": 2},
        "scaled": "4 minutes of proxy-real data instead of 36 (the demo's budget); 100k simulation transitions as "
                  "the prior; RL critics (64, 64); RLPD UTD 2 instead of 20; IQL 3,000 offline steps; BC 1,000 steps",
    }


#: Gymnasium's HalfCheetah-v5 on the `lag` profile (docs/gym.md): SimDist's model from results/gym/run.sh (pass it with
#: --model), the simulation prior generated with that run's PPO expert set, no demos, the real data counted in minutes
TASKS["gym-halfcheetah-lag"] = {
    **TASKS["go2-slope"],
    "task": {"name": "gym:HalfCheetah-v5", "profile": "lag"},
    "agents": ("simdist", "iql", "bc"),
    "model": "outputs/gym/HalfCheetah-v5/model-s0",
    "generate": ["--experts", "outputs/gym/HalfCheetah-v5/experts-sim-s0", "--envs", "16", "--transitions", "100000"],
    "recipes": ["recipes/gym/base.yaml", "recipes/gym/pretrain.yaml"],
    "schedule": [0, 2, 5],
    "eval": {"episodes_per_eval": 30, "num_envs": 10, "planner_overrides": {"num_samples": 256, "iterations": 2}},
    "simdist": {"epochs": 3, "windows_per_epoch": 10000, "batch_size": 64, "lr": 2e-4, "warmup_steps": 50},
    "scaled": "5 minutes of proxy-real data (6,000 steps at 20 Hz); 100k simulation transitions as the prior; RL "
              "critics (64, 64); IQL 3,000 offline steps; BC 1,000 steps",
}
#: the same on `lag1` (one step of latency), the profile the calibration picked (docs/gym.md)
TASKS["gym-halfcheetah-lag1"] = {**TASKS["gym-halfcheetah-lag"],
                                 "task": {"name": "gym:HalfCheetah-v5", "profile": "lag1"}}


# ---------------------------------------------------------------------------------------------- shared steps
def shared(task: str, spec: dict[str, Any], work: Path, model: str | None, seed: int, dry: bool) -> dict[str, str]:
    """Simulation data, world model and demos (skipped when present); returns their paths."""
    model = model or spec["model"]
    sim, wm = work / "sim", (ROOT / model if not Path(model).is_absolute() else Path(model)) if model else \
        work / "simdist"
    t = spec["task"]
    if not (sim / "dataset.json").exists():
        run_command(simdist_command("generate", "--task", t["name"], *spec["generate"], "--seed", str(seed),
                                    "--out", str(sim), "--no-progress"), work / "generate.log", dry)
    if model is None and not (wm / "config.json").exists():
        configs = [a for r in spec["recipes"] for a in ("--config", r)]
        pretrain_and_export(configs, sim, work / "pretrain", wm, seed, dry)
    demos: dict[int, str | None] = {20: None, 100: None}
    for n, demo_seed in ((20, 1_000), (100, 2_000)) if spec["demos"] else ():
        folder = work / f"demos-{n}"
        demos[n] = str(folder)
        run_command(simdist_command("demos", "--task", t["name"], "--profile", t["profile"], "--agent",
                                    spec["demo_agent"], "--episodes", str(n), "--seed", str(demo_seed), "--out",
                                    str(folder)), work / "demos.log", dry)
    return {"sim": str(sim), "model": str(wm), "demos20": demos[20], "demos100": demos[100]}


# ---------------------------------------------------------------------------------------------- per seed
def make_task(spec: dict[str, Any]) -> Any:
    from simdist import make_task as build

    return build(spec["task"]["name"], profile=spec["task"]["profile"], **spec["task"].get("kwargs", {}))


def prior(paths: dict[str, str | None]) -> list[str]:
    """The offline data of every method: the simulation data and, where the task has them, the 20 demos."""
    return [p for p in (paths["sim"], paths["demos20"]) if p]


def bc_start(spec: dict[str, Any], paths: dict[str, str], work: Path, seed: int) -> str:
    """The single-step BC policy on the frozen encoder: the simulation's expert steps (and the 20 demos)."""
    from simdist import get, load_agent

    folder = work / f"seed-{seed}" / "bc-start"
    if not (folder / "config.json").exists():
        b = spec["bc"]
        agent = get("agent", "bc").train_on_encoder(prior(paths), load_agent(paths["model"]).world_model,
                                         hidden=b["hidden"], steps=b["steps"], batch_size=b["batch_size"], lr=b["lr"],
                                         seed=seed, out=work / f"seed-{seed}" / "lightning-bc-start")
        agent.save_pretrained(folder)
    return str(folder)


def initial_agent(name: str, spec: dict[str, Any], paths: dict[str, str], work: Path, seed: int) -> str:
    """The agent an adaptation run starts from (built and saved once); returns its folder."""
    from simdist import get, load_agent

    if name == "simdist":
        return paths["model"]
    folder = work / f"seed-{seed}" / f"{name}-init"
    if (folder / "config.json").exists():
        return str(folder)
    if name == "simdist_bc":
        agent = get("agent", "simdist_bc").from_simdist(load_agent(paths["model"]), demos=paths["demos20"])
    else:
        start = load_agent(bc_start(spec, paths, work, seed))
        cls = get("agent", name)
        settings = {**spec["rl"], **{k: v for k, v in spec.get(name, {}).items() if k != "pretrain_updates"}}
        if spec["rewards"] == "model":
            settings["reward_model"] = paths["model"]
        agent = cls.from_bc(start, rewards=spec["rewards"], **settings)
        updates = spec.get(name, {}).get("pretrain_updates", 0)
        if updates:
            agent = agent.pretrain([paths["sim"]] if name == "sgft" else prior(paths), updates=updates, seed=seed)
    agent.save_pretrained(folder)
    return str(folder)


def adapt(name: str, task_name: str, paths: dict[str, str], work: Path, results: Path, seed: int) -> str:
    """One agent's adaptation run for ``seed`` (resumes); returns its curve file."""
    import torch

    from simdist import AdaptationLoop, AdaptConfig

    torch.set_num_threads(1)
    spec = TASKS[task_name]
    start = initial_agent(name, spec, paths, work, seed)
    world_model = name in ("simdist", "simdist_bc")
    loop = {key: value for key, value in spec["eval"].items() if key != "episodes_per_eval"}
    finetune = {**(spec["simdist"] if world_model else {}), "freeze": "dynamics_only" if world_model else "heads_only"}
    cfg = AdaptConfig(schedule=spec["schedule"], schedule_unit=spec["schedule_unit"], seed=seed, heldout_episodes=2,
                      update_every=None if world_model else 1, prior=[] if world_model else prior(paths), **loop,
                      finetune=finetune, evaluation={"trials": spec["eval"]["episodes_per_eval"]})
    out = work / f"seed-{seed}" / name
    started = time.perf_counter()
    AdaptationLoop(start, make_task(spec), out, cfg, log=lambda m: print(f"[{name} seed {seed}] {m}", flush=True)
                   ).run()
    dest = results / "runs" / f"{name}-seed{seed}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    state = json.loads((out / "state.json").read_text())
    keys = ("episodes", "minutes", "value", "ci95", "trials", "eval", "seconds")
    record = {"agent": name, "seed": seed, "stages": [{k: s[k] for k in keys} for s in state["stages"]]}
    write_json(dest, record)
    print(f"[{name} seed {seed}] done in {time.perf_counter() - started:.0f}s", flush=True)
    return str(dest)


def flat(name: str, task_name: str, paths: dict[str, str], work: Path, results: Path, seed: int) -> str:
    """A baseline trained once on the 100 demos and evaluated on the proxy-real profile."""
    import torch

    from simdist import get, load_agent

    torch.set_num_threads(1)
    spec = TASKS[task_name]
    dest = results / "runs" / f"{name}-seed{seed}.json"
    if dest.exists():
        return str(dest)
    folder = work / f"seed-{seed}" / name
    if name == "bc" and not spec["demos"]:  # no demos (the quadruped): the single-step BC start is the baseline
        folder = Path(bc_start(spec, paths, work, seed))
    if not (folder / "config.json").exists():
        wm = load_agent(paths["model"]).world_model
        if name == "bc":
            b = spec["bc"]
            agent = get("agent", "bc").train_on_encoder([paths["demos100"]], wm, hidden=b["hidden"], steps=b["steps"],
                                             batch_size=b["batch_size"], lr=b["lr"], seed=seed,
                                             out=work / f"seed-{seed}" / "lightning-bc")
        else:
            d = spec["dp"]
            prior = [paths["sim"]] if name == "diffusion_policy_cotrain" else None
            settings = {k: v for k, v in d.items() if k not in ("steps", "batch_size")}
            agent = get("agent", "diffusion_policy").train([paths["demos100"]], wm, prior=prior, steps=d["steps"],
                                               batch_size=d["batch_size"], seed=seed,
                                               out=work / f"seed-{seed}" / f"lightning-{name}", **settings)
        agent.save_pretrained(folder)
    e = spec["eval"]
    result = make_task(spec).evaluate(load_agent(folder).with_settings(seed=seed + 1), e["episodes_per_eval"],
                                      seed + 1, num_envs=e["num_envs"])
    dest.parent.mkdir(parents=True, exist_ok=True)
    record = {"agent": name, "seed": seed, "stages": [{"episodes": 0, "eval": result.to_dict()}]}
    write_json(dest, record)
    return str(dest)


# ---------------------------------------------------------------------------------------------- report
def budget(name: str, spec: dict[str, Any], work: Path, seed: int) -> dict[str, Any]:
    """What a run used, counted from its folders: real episodes and transitions it collected, demos, and the
    gradient updates of its adaptation (BASELINES.md 8.3-8.4)."""
    from simdist.data import read_dataset_info

    out = work / f"seed-{seed}" / name
    demos = {"simdist": 0, "simdist_bc": 20, "iql": 20, "rlpd": 20, "sgft": 20}.get(name, 100) if spec["demos"] \
        else 0
    if name in FLAT:
        return {"seed": seed, "real_episodes": 0, "real_steps": 0, "demos": demos, "updates": None}
    info = read_dataset_info(out / "real-data")
    stages = json.loads((out / "state.json").read_text())["stages"]
    if name in ("simdist", "simdist_bc"):  # dynamics finetuning per stage (SimDist+BC adds its policy-head cloning)
        cfg = spec["simdist"]
        updates = (len(stages) - 1) * cfg["epochs"] * (cfg["windows_per_epoch"] // cfg["batch_size"])
    else:
        updates = json.loads((Path(stages[-1]["model"]) / "config.json").read_text())["counters"]["updates"]
        init = json.loads((work / f"seed-{seed}" / f"{name}-init" / "config.json").read_text())["counters"]["updates"]
        updates -= init  # the offline phase is not adaptation
    return {"seed": seed, "real_episodes": int(info["num_episodes"]), "real_steps": int(info["num_steps"]),
            "demos": demos, "updates": int(updates)}


def summarize(task_name: str, results: Path, agents: list[str], seeds: list[int]) -> dict[str, Any]:
    """Success (and the task's metric) per agent and amount of real data: mean over seeds, seeds-and-trials
    bootstrap 95 % interval; ``table.md``, ``summary.json`` and ``success.png``."""
    from simdist import EvaluationResult, seeds_bootstrap_ci

    spec = TASKS[task_name]
    work = ROOT / "outputs" / "baselines" / task_name
    summary: dict[str, Any] = {"task": spec["task"], "seeds": seeds, "schedule": spec["schedule"],
                               "unit": spec["schedule_unit"], "plot": spec["plot"], "metric": None,
                               "scaled": spec["scaled"], "agents": {}}
    for name in agents:
        runs = [json.loads(p.read_text()) for s in seeds if (p := results / "runs" / f"{name}-seed{s}.json").exists()]
        if not runs:
            continue
        points = []
        for i, stage in enumerate(runs[0]["stages"]):
            evals = [EvaluationResult.from_dict(r["stages"][i]["eval"]) for r in runs if len(r["stages"]) > i]
            summary["metric"] = evals[0].metric
            succ = seeds_bootstrap_ci([[float(x) for x in e.success] for e in evals])
            value = seeds_bootstrap_ci([e.values for e in evals])
            points.append({"x": spec["schedule"][i], "episodes": stage["episodes"],
                           "minutes": stage.get("minutes"), "seeds": len(evals), "trials": succ.n,
                           "success": [succ.mean, succ.low, succ.high], "metric": [value.mean, value.low, value.high]})
        summary["agents"][name] = {"flat": name in FLAT, "points": points,
                                   "budget": [budget(name, spec, work, s) for s in seeds
                                              if (results / "runs" / f"{name}-seed{s}.json").exists()]}
    results.mkdir(parents=True, exist_ok=True)
    write_json(results / "summary.json", summary)
    write_text(results / "table.md", table(summary) + "\n")
    plot(summary, results / f"{spec['plot']}.png")
    return summary


def table(summary: dict[str, Any]) -> str:
    """The plotted quantity per agent and amount of real data (then the task's metric, when that is success),
    mean [95 % CI] over the seeds; then each run's budget."""
    agents, xs = summary["agents"], summary["schedule"]
    unit = "ep." if summary.get("unit", "episodes") == "episodes" else "min"
    key = summary.get("plot", "success")
    lines: list[str] = []
    for k in [key, *(["metric"] if key == "success" else [])]:
        name_of = {"success": "success rate", "metric": f"{summary.get('metric', 'metric')}"}[k]
        lines += [f"{name_of}, mean [95 % CI] over seeds", "",
                  "| agent | " + " | ".join(f"{x} {unit}" for x in xs) + " | seeds |", "|---|" + "---|" * (len(xs) + 1)]
        for name, a in agents.items():
            by_x = {p.get("x", p["episodes"]): p for p in a["points"]}
            cells = []
            for x in xs:
                p = a["points"][0] if a["flat"] else by_x.get(x)
                cells.append("—" if p is None else "{:.2f} [{:.2f}, {:.2f}]".format(*p[k]))
            lines.append(f"| {name}{' (flat)' if a['flat'] else ''} | " + " | ".join(cells)
                         + f" | {a['points'][0]['seeds']} |")
        lines.append("")
    lines += ["Budgets (per seed, counted from the run folders): real episodes / real transitions / demos / "
              "gradient updates of the adaptation", "", "| agent | per seed |", "|---|---|"]
    for name, a in agents.items():
        per = "; ".join(f"{b['real_episodes']} / {b['real_steps']} / {b['demos']} / {b['updates']}"
                        for b in a.get("budget", []))
        lines.append(f"| {name} | {per} |")
    return "\n".join(lines)


def plot(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    xs, key = summary["schedule"], summary.get("plot", "success")
    for name, a in summary["agents"].items():
        pts = a["points"]
        if a["flat"]:
            m, lo, hi = pts[0][key]
            line = ax.plot([xs[0], xs[-1]], [m, m], "--", label=name)[0]
            ax.fill_between([xs[0], xs[-1]], [lo, lo], [hi, hi], color=line.get_color(), alpha=0.08)
            continue
        x = [p.get("x", p["episodes"]) for p in pts]
        m = [p[key][0] for p in pts]
        line = ax.plot(x, m, "o-", label=name)[0]
        ax.fill_between(x, [p[key][1] for p in pts], [p[key][2] for p in pts], color=line.get_color(),
                        alpha=0.15)
    ax.set_xlabel("real episodes" if summary.get("unit", "episodes") == "episodes" else "real data (min)")
    ax.set_ylabel("success rate" if key == "success" else str(summary.get("metric") or "metric"))
    if key == "success":
        ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"{summary['task']['name']} on {summary['task']['profile']}: mean over {len(summary['seeds'])} "
                 "seeds, 95 % CI")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=sorted(TASKS), required=True)
    parser.add_argument("--model", default=None, help="a pretrained SimDist world model (default: pretrain one)")
    parser.add_argument("--seeds", default="0,1,2", help="training seeds (comma list)")
    parser.add_argument("--agents", default=None, help=f"comma list of {', '.join(AGENTS)} (default: the task's)")
    parser.add_argument("--jobs", type=int, default=2, help="runs in parallel (one torch thread each)")
    parser.add_argument("--dry-run", action="store_true", help="print the plan only")
    parser.add_argument("--report-only", action="store_true", help="only rebuild the table and plot")
    args = parser.parse_args()
    spec = TASKS[args.task]
    agents = list(spec["agents"]) if args.agents is None else [a.strip() for a in args.agents.split(",") if a.strip()]
    unknown = sorted(set(agents) - set(spec["agents"]))
    if unknown:
        parser.error(f"--agents: {unknown} not run on {args.task}; its agents: {', '.join(spec['agents'])}")
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--seeds must be a comma list of integers, got {args.seeds!r}")
    if args.jobs < 1:
        parser.error("--jobs must be >= 1")
    if args.model is not None and not (Path(args.model) / "config.json").is_file():
        parser.error(f"--model {args.model}: no config.json (not a saved model folder)")
    work, results = ROOT / "outputs" / "baselines" / args.task, ROOT / "results" / "baselines" / args.task
    if not args.report_only:
        paths = shared(args.task, spec, work, args.model, 0, args.dry_run)
        units = [(a, s) for s in seeds for a in agents]
        print(f"{len(units)} runs: " + ", ".join(f"{a}/{s}" for a, s in units), flush=True)
        if args.dry_run:
            return
        for s in seeds:  # shared by iql, rlpd and sgft: built once, before the parallel runs
            if {"iql", "rlpd", "sgft"} & set(agents):
                bc_start(spec, paths, work, s)
        started, done = time.perf_counter(), 0
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(adapt if a in ADAPTING else flat, a, args.task, paths, work, results, s)
                       for a, s in units]
            for f in futures:
                f.result()
                done += 1
                rate = (time.perf_counter() - started) / done
                print(f"[{done}/{len(units)}] runs done, ETA {rate * (len(units) - done):.0f}s", flush=True)
    summary = summarize(args.task, results, agents, seeds)
    print(table(summary))
    shutil.rmtree(results / "__pycache__", ignore_errors=True)


if __name__ == "__main__":
    main()
