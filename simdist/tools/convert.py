"""``simdist convert official --checkpoint DIR --out FOLDER``: import a released official SimDist world model.

Reads the orbax checkpoint (a run folder with ``model_config.yaml``, or one of its step folders) without JAX,
through the optional ``tensorstore`` (``pip install 'simdist[official]'``), maps every tensor onto the simdist
model (:mod:`simdist.official.mapping`) and writes a model folder: ``config.json``, ``model.safetensors`` (the
scaler as the normaliser), ``README.md`` (credits, the MIT notice, source and step) and ``planner.json``.
"""

from __future__ import annotations

from simdist.arguments import positive_int, tool_parser

FORMATS = ("official", "official-experts")
#: the observation group the official experts read: the privileged vector in the official conventions
OFFICIAL_OBS_KEY = "privileged_official"


EXPERTS_CARD = """# The SimDist authors' PPO experts (converted)

The expert (iteration {expert}) and its critic, and the sub-optimal policies ({subs}), of the official release
({source}), converted from TorchScript with `simdist convert official-experts`. They read the observation group
`{obs_key}` (the privileged vector in the official conventions; docs/official.md). Policies by the authors of
*Simulation Distillation* (Levy et al., 2026), under the MIT licence:

```
{notice}
```
"""


def convert_experts(parser, args) -> int:
    """``official-experts``: ``<run>/policies/policy_<it>.pt`` and ``<run>/critics/critic_<it>.pt`` (TorchScript)
    → an expert set (the newest policy with its critic; ``--suboptimal`` adds the other policies)."""
    from pathlib import Path

    from simdist.experts import export_torchscript_set

    run = Path(args.checkpoint)
    policies = sorted((run / "policies").glob("policy_*.pt"))
    if not policies:
        parser.error(f"--checkpoint {run}: no policies/policy_<it>.pt there (an official rl run folder)")
    newest = max(policies, key=lambda p: int(p.stem.split("_")[1]))
    critic = run / "critics" / newest.name.replace("policy_", "critic_")
    if not critic.is_file():
        parser.error(f"--checkpoint {run}: no critics/{critic.name} for the expert {newest.name}")
    chosen = policies if args.suboptimal else [newest]
    manifest = export_torchscript_set(chosen, critic, args.out, obs_key=args.obs_key, source=args.source)
    from simdist.fsutil import atomic_write_text
    from simdist.official.convert import LICENSE_NOTICE

    atomic_write_text(Path(args.out) / "README.md", EXPERTS_CARD.format(
        source=args.source, expert=manifest["expert"]["iteration"], obs_key=args.obs_key,
        subs=", ".join(str(s["iteration"]) for s in manifest["suboptimal"]) or "none", notice=LICENSE_NOTICE.strip()))
    print(f"expert {manifest['expert']['iteration']} (+{len(manifest['suboptimal'])} sub-optimal) to {args.out}")
    return 0


def main(argv: list[str]) -> int:
    parser = tool_parser("convert", "import a world model from another format into a simdist model folder")
    parser.add_argument("format", choices=FORMATS, help="official: the SimDist authors' Flax/orbax world model; "
                        "official-experts: their TorchScript PPO policies and critic (an expert set)")
    parser.add_argument("--checkpoint", required=True, help="official: run folder (with model_config.yaml) or step "
                        "folder; official-experts: the rl run folder (policies/, critics/)")
    parser.add_argument("--step", type=positive_int, default=None, help="step to convert (default: the newest)")
    parser.add_argument("--out", required=True, help="the model folder to write (new, empty or a saved model)")
    parser.add_argument("--repo-id", default=None, help="the Hub id the card names (e.g. owner/name)")
    parser.add_argument("--source", default="CLeARoboticsLab/simdist",
                        help="where the checkpoint came from, for the card (e.g. the repository and commit)")
    parser.add_argument("--metrics", default=None,
                        help="official: a JSON object of measured rows for the card (name -> value)")
    parser.add_argument("--suboptimal", action="store_true", help="official-experts: also the sub-optimal policies")
    parser.add_argument("--obs-key", default=OFFICIAL_OBS_KEY,
                        help="official-experts: the observation group the policies read")
    args = parser.parse_args(argv)
    if args.format == "official-experts":
        return convert_experts(parser, args)
    from simdist.hub.folder import save_target
    from simdist.official.convert import convert
    from simdist.official.reader import read_checkpoint

    try:
        save_target(args.out)
    except (FileExistsError, NotADirectoryError) as err:
        parser.error(f"--out: {err}")
    metrics = None
    if args.metrics:
        from simdist.errors import InputError
        from simdist.fsutil import read_json_object

        metrics = read_json_object(args.metrics, InputError)
    checkpoint = read_checkpoint(args.checkpoint, args.step)
    folder = convert(checkpoint, args.out, repo_id=args.repo_id, source=args.source, metrics=metrics)
    print(f"converted step {checkpoint.step} ({len(checkpoint.arrays)} tensors) to {folder}")
    return 0
