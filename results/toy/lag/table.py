"""The lever tables of docs/plan-ranking.md from the committed runs: ``python -m results.toy.lag.table``.

Each run folder holds the ``results.json`` that ``bash results/toy/lag/run.sh loop SEED [options]`` wrote (copied
from ``outputs/toy-lag/``). One row per run: the lever, the seed, the nominal closed loop, zero-shot and adapted on
``lag`` (mean [95 % CI], 32 episodes each) and whether the intervals are apart, the plan ranking in simulation and
on the profile before and after, the held-out real consistency before and after, and the action information of
the pretrained model on fresh simulation windows. The runs of the lever sweep (folders named ``ROW-sSEED``, run by
``bash results/toy/lag/run.sh levers SEED ROW...``, one torch thread per run) form a second table, their lever
read from the recorded options, with the pretraining's CPU seconds (``timing.json``) beside them. The plan ranking
of the ``base`` models at three MPPI initial stds (``run.sh ranking-spread SEED``: ``spread-sSEED/stdS.json``, the
reports of ``simdist mechanism``) forms a third.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def lever(name: str, r: dict) -> str:
    """What the run changed against the demo's loop; the folder's ``ctxN`` prefix names the pretrained model's
    ``action_context`` (a run that starts from ``--pretrained`` does not record it in its options)."""
    o, parts = r["options"], [f"`action_context` {name.split('-')[0].removeprefix('ctx')}"]
    if o["explore"]:
        parts.append(f"exploration σ ≤ {o['explore']}")
    if o.get("anchor"):
        parts.append(f"L2 pull {o['anchor']}")
    parts.append(f"{r['scale']['real_episodes']} real episodes ({r['real_minutes']:.1f} min)")
    parts.append(f"{r['scale']['finetune_epochs']} finetuning epochs")
    return ", ".join(parts)


#: the options of the lever sweep that differ from its reference row, as the table names them
SWEEP_OPTIONS = {
    "perturb_sigma": (1.0, "perturbation σ ≤ {}"), "perturb_steps": (5, "noised windows ≤ {} steps"),
    "perturbed_repeat": (1, "perturbed windows ×{}"), "history_dropout": (0.0, "past actions dropped p={}"),
    "consistency_decay": (1.0, "consistency weight ρ^k, ρ={}"), "dynamics_hidden": (None, "dynamics width {}"),
    "history": (None, "history {}"), "sim_mix": (0.0, "{} simulation transitions in finetuning"),
    "ensemble": (1, "ensemble of {}"), "disagreement": (0.0, "disagreement penalty λ={}"),
}


def sweep_lever(r: dict) -> str:
    """The sweep row's lever: its options that differ from the reference, else its finetuning budget."""
    o = r["options"]
    parts = [text.format(o[k]) for k, (default, text) in SWEEP_OPTIONS.items() if o.get(k, default) != default]
    if r["scale"]["finetune_epochs"] != 12:
        parts.append(f"{r['scale']['finetune_epochs']} finetuning epochs")
    if not parts:
        return "reference: 96 real episodes, 12 finetuning epochs"
    return ", ".join(parts) + (" (the reference's pretrained model)" if "pretrained" in r["sim_data"] else "")


def cell(r: dict, key: str) -> str:
    low, high = r["return_ci95"][key]
    return f"{r['return'][key]:.2f} [{low:.2f}, {high:.2f}]"


def rho(r: dict, key: str) -> str:
    e = r["diagnostics"]["ranking"][key]["spearman"]
    return f"{e['mean']:.2f} [{e['low']:.2f}, {e['high']:.2f}]"


def verdict(r: dict) -> str:
    (zl, zh), (al, ah) = r["return_ci95"]["real_zero_shot"], r["return_ci95"]["real_adapted"]
    return "**higher**" if al > zh else "lower" if ah < zl else "no difference"


def row(name: str, r: dict, what: str | None = None, extra: str = "") -> str:
    seed = name.rsplit("-s", 1)[1]
    info = r["diagnostics"]["action_information"]["zero_shot"]
    cons = r["heldout_consistency"]
    return (f"| {what or lever(name, r)} | {seed} |{extra} {cell(r, 'sim')} | {cell(r, 'real_zero_shot')} | "
            f"{cell(r, 'real_adapted')} | "
            f"{verdict(r)} | {rho(r, 'sim/zero_shot')} | {rho(r, 'profile/zero_shot')} | "
            f"{rho(r, 'profile/adapted')} | {cons['pretrained']:.3f} → {cons['adapted']:.3f} | "
            f"{info['consistency_true_mean']:.4f} / {info['consistency_permuted_mean']:.4f}, "
            f"{info['latent_shift']:.2f} |")


HEADER = ("sim | `lag` zero-shot | `lag` adapted | adapted vs zero-shot | ρ sim | ρ `lag` zero-shot | "
          "ρ `lag` adapted | held-out real consistency | action information (pretrained): consistency true / "
          "swapped, latent shift |")


def main() -> None:
    lever_tables()
    spread_table()


def lever_tables() -> None:
    runs = [p for p in HERE.iterdir() if (p / "results.json").is_file()]
    earlier = [p for p in runs if p.name.startswith("ctx")]
    sweep = [p for p in runs if not p.name.startswith("ctx")]
    print(f"| lever | seed | {HEADER}")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for folder in sorted(earlier, key=lambda p: (p.name.count("-"), p.name)):
        print(row(folder.name, json.loads((folder / "results.json").read_text())))
    if not sweep:
        return
    print(f"\n| lever (`run.sh levers` row) | seed | pretraining CPU s | {HEADER}")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    order = {"base": 0}
    for folder in sorted(sweep, key=lambda p: (order.get(p.name.rsplit("-s", 1)[0], 1), p.name)):
        r = json.loads((folder / "results.json").read_text())
        timing = json.loads((folder / "timing.json").read_text()) if (folder / "timing.json").is_file() else {}
        cpu = f" {timing['pretrain_cpu_seconds']:.0f} |" if "pretrain_cpu_seconds" in timing else " — |"
        print(row(folder.name, r, f"{sweep_lever(r)} (`{folder.name.rsplit('-s', 1)[0]}`)", cpu))


def spread_table() -> None:
    """ρ and the top choice's regret of the pretrained and adapted ``base`` models at each initial std."""
    folders = sorted(HERE.glob("spread-s*"))
    if not folders:
        return
    print("\n| seed | MPPI initial std | true return spread per state | ρ zero-shot | ρ adapted | regret zero-shot | "
          "regret adapted |")
    print("|---|---|---|---|---|---|---|")
    for folder in folders:
        for path in sorted(folder.glob("std*.json"), key=lambda p: float(p.stem.removeprefix("std"))):
            r = json.loads(path.read_text())
            m, spread = r["models"], r["true_spread"]
            print(f"| {folder.name.removeprefix('spread-s')} | {path.stem.removeprefix('std')} | "
                  f"{spread['mean']:.2f} [{spread['low']:.2f}, {spread['high']:.2f}] | "
                  f"{_ci(m['zero_shot']['spearman'])} | {_ci(m['adapted']['spearman'])} | "
                  f"{_ci(m['zero_shot']['regret'])} | {_ci(m['adapted']['regret'])} |")


def _ci(e: dict) -> str:
    return f"{e['mean']:.2f} [{e['low']:.2f}, {e['high']:.2f}]"


if __name__ == "__main__":
    main()
