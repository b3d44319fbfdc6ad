"""The measured tables and the figure of docs/gym.md from the committed result files: ``python -m results.gym.table``.

Reads every ``results/gym/s<SEED>/`` that ``bash results/gym/run.sh`` filled: the zero-shot planner rows
(``planner-on-*.json``), the adaptation curve (``adapt-curve-PROFILE.json``: stage 0 is the pretrained model on the
profile, the later stages the dynamics-only finetuned ones), the plan ranking before and after
(``ranking-PROFILE.json``, the report of ``simdist mechanism``) and the behaviour-cloned policy head
(``bc-policy-on-*.json``). Prints one table per kind, in markdown, and writes ``results/gym/adapt.png``: zero-shot
against each adapted stage per seed, with 95 % intervals. ``--profile`` picks the shift (default ``lag1``);
``--prior-std S`` reads the runs of ``PRIOR_STD=S`` (MPPI around the policy prior: files ``...-priorS``, figure
``adapt-priorS.png``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def seeds() -> list[Path]:
    """The seed folders, in seed order."""
    return sorted((p for p in HERE.glob("s[0-9]*") if p.is_dir()), key=lambda p: int(p.name[1:]))


def load(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def cell(mean: float, ci: list[float], n: int) -> str:
    return f"{mean:.1f} [{ci[0]:.1f}, {ci[1]:.1f}] ({n})"


def evaluation(path: Path) -> str:
    """An evaluation file's return as mean [95 % CI] (trials), or that it is not measured yet."""
    r = load(path)
    if r is None:
        return "not measured yet"
    s = r["summary"]
    return cell(s["mean"], s["ci95"], s["trials"])


def verdict(zero: list[float], adapted: list[float]) -> str:
    """Adapted against zero-shot by their 95 % intervals."""
    return "**higher**" if adapted[0] > zero[1] else "lower" if adapted[1] < zero[0] else "no difference"


def estimate(e: dict[str, float]) -> str:
    return f"{e['mean']:.2f} [{e['low']:.2f}, {e['high']:.2f}]"


def adaptation_rows(profile: str, tag: str = "") -> list[str]:
    rows = []
    for folder in seeds():
        curve = load(folder / f"adapt-curve-{profile}{tag}.json")
        if curve is None:
            continue
        zero = curve["ci95"][0]
        for k in range(1, len(curve["value"])):
            rows.append(f"| {folder.name[1:]} | {curve['minutes'][k]:.1f} ({curve['episodes'][k]} episodes) | "
                        f"{cell(curve['value'][0], zero, curve['trials'][0])} | "
                        f"{cell(curve['value'][k], curve['ci95'][k], curve['trials'][k])} | "
                        f"{verdict(zero, curve['ci95'][k])} | "
                        f"{curve['consistency_before'][k]:.4f} → {curve['consistency_after'][k]:.4f} |")
    return rows


def ranking_rows(profile: str, tag: str = "") -> list[str]:
    rows = []
    for folder in seeds():
        r = load(folder / f"ranking-{profile}{tag}.json")
        if r is None:
            continue
        m, spread = r["models"], r["true_spread"]
        rows.append(f"| {folder.name[1:]} | {estimate(spread)} | {estimate(m['pretrained']['spearman'])} | "
                    f"{estimate(m['adapted']['spearman'])} | {estimate(m['pretrained']['regret'])} | "
                    f"{estimate(m['adapted']['regret'])} | {estimate(m['pretrained']['predicted_spread'])} | "
                    f"{estimate(m['adapted']['predicted_spread'])} |")
    return rows


def plot(profile: str, out: Path, tag: str = "") -> bool:
    """Zero-shot and every adapted stage per seed, with their intervals; False when no curve exists."""
    curves = [(f.name, c) for f in seeds() if (c := load(f / f"adapt-curve-{profile}{tag}.json")) is not None]
    if not curves:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for i, (name, c) in enumerate(curves):
        x = [m + 0.15 * i for m in c["minutes"]]
        low = [v - ci[0] for v, ci in zip(c["value"], c["ci95"])]
        high = [ci[1] - v for v, ci in zip(c["value"], c["ci95"])]
        ax.errorbar(x, c["value"], yerr=[low, high], fmt="o-", capsize=3, label=f"seed {name[1:]}")
    ax.set_xlabel(f"real data on `{profile}` (minutes)")
    ax.set_ylabel("return (mean, 95 % CI)")
    planner = f", MPPI around the prior (std {tag.removeprefix('-prior')})" if tag else ""
    ax.set_title(f"HalfCheetah-v5 on {profile}: dynamics-only adaptation{planner}", fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--profile", default="lag1", help="the shift's profile name (default lag1)")
    p.add_argument("--prior-std", type=float, default=None,
                   help="read the PRIOR_STD runs (MPPI around the policy prior) instead of the paper planner's")
    args = p.parse_args()
    profile, tag = args.profile, "" if args.prior_std is None else f"-prior{args.prior_std:g}"
    print(f"| seed | planner on sim | planner on `{profile}` (zero-shot) | BC head on sim | BC head on `{profile}` |")
    print("|---|---|---|---|---|")
    for folder in seeds():
        print(f"| {folder.name[1:]} | {evaluation(folder / f'planner-on-sim{tag}.json')} | "
              f"{evaluation(folder / f'planner-on-{profile}{tag}.json')} | "
              f"{evaluation(folder / 'bc-policy-on-sim.json')} | "
              f"{evaluation(folder / f'bc-policy-on-{profile}.json')} |")
    print(f"\n| seed | real data, minutes | zero-shot on `{profile}` | adapted | adapted vs zero-shot | "
          "held-out real consistency before → after |")
    print("|---|---|---|---|---|---|")
    print("\n".join(adaptation_rows(profile, tag)))
    print("\n| seed | true return spread per state | ρ pretrained | ρ adapted | regret pretrained | regret adapted | "
          "predicted spread pretrained | predicted spread adapted |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(ranking_rows(profile, tag)))
    figure = HERE / f"adapt{tag}.png"
    if plot(profile, figure, tag):
        print(f"\nwrote {figure.relative_to(HERE.parents[1])}")


if __name__ == "__main__":
    main()
