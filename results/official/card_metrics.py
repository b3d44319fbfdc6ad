"""The measured rows of the go2-official model card: ``python -m results.official.card_metrics`` writes
``results/official/card_metrics.json`` from the committed diagnostics and ranking results; the card is then
rebuilt with ``simdist convert official ... --metrics results/official/card_metrics.json``
(results/official/README.md)."""

from __future__ import annotations

import json

from results.runner import ROOT, write_json

OUT = ROOT / "results" / "official"


def main() -> None:
    metrics: dict[str, str] = {}
    diag = OUT / "diagnostics" / "go2-official.json"
    if diag.is_file():
        d = json.loads(diag.read_text())
        where = f"{d['windows']} fresh simulation windows, `simdist diagnose`"
        metrics[f"action information: consistency with true / swapped future actions ({where})"] = \
            f"{d['consistency_true_mean']:.4f} / {d['consistency_permuted_mean']:.4f}"
        metrics["action information: latent shift under swapped actions"] = f"{d['latent_shift']:.3f}"
        metrics["action information: predicted return's correlation with the label return, true / swapped"] = \
            f"{d['return_label_corr_true']:.3f} / {d['return_label_corr_permuted']:.3f}"
    for path in sorted((OUT / "ranking").glob("*.json")):
        r = json.loads(path.read_text())["models"]["official"]["spearman"]
        profile, std = path.stem.rsplit("_std", 1)
        metrics[f"plan ranking on `{profile}`, candidates at std {std} (`simdist mechanism`, results/official/"
                f"ranking): Spearman ρ"] = f"{r['mean']:.2f} [{r['low']:.2f}, {r['high']:.2f}]"
    write_json(OUT / "card_metrics.json", metrics)
    print(json.dumps(metrics, indent=1))


if __name__ == "__main__":
    main()
