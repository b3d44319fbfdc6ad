"""``simdist export --ckpt last.ckpt --out folder``: a Lightning checkpoint → a Hub-ready model folder.

``--ckpt`` may name the fit's run folder (its newest checkpoint is exported); a ``last.ckpt`` with a newer
``last-vN.ckpt`` beside it is refused, never exported stale.

A folder that holds a model already is replaced only with ``--overwrite``, and then only the files an export
writes (``MODEL_FILES``: config, weights, card, training config, planner settings); any other file stays, and the
folder and the files it replaces keep their permissions. A non-empty folder that is not a model is refused.
"""

from __future__ import annotations

from pathlib import Path

from simdist.arguments import tool_parser
from simdist.errors import InputError
from simdist.fsutil import check_output_path, output_lock, read_json_object, remove_stale_temporaries
from simdist.hub.files import CONFIG_NAME, MODEL_FILES, PLANNER_NAME


def _read_text(path: str, option: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"{option} {path}: cannot read the file ({err})") from err


def check_overwrite(out: Path, overwrite: bool) -> None:
    """Refuse an ``out`` that holds an earlier export unless ``overwrite``, naming the files it would replace."""
    mine = [name for name in MODEL_FILES if (out / name).exists()]
    if mine and not overwrite:
        raise InputError(f"--out {out}: holds a model already ({', '.join(mine)}); pass --overwrite to replace the "
                         f"files an export writes ({', '.join(MODEL_FILES)}; other files are kept), or another --out")


def main(argv: list[str]) -> int:
    parser = tool_parser("export", __doc__.split(":", 1)[1].strip())
    parser.add_argument("--ckpt", required=True, help="Lightning checkpoint written by `simdist fit`, or the fit's "
                                                      "run folder (its newest checkpoint)")
    parser.add_argument("--out", required=True, help="output folder (config.json, model.safetensors, README.md)")
    parser.add_argument("--base-model", default=None, help="Hub id of the model this one was finetuned from")
    parser.add_argument("--metrics", default=None, help="JSON file of metrics for the model card")
    parser.add_argument("--train-config", default=None, help="resolved training config (YAML) to ship along")
    parser.add_argument("--tag", action="append", default=[], help="extra model-card tag (repeatable)")
    parser.add_argument("--repo-id", default=None, help="the Hub id the card's usage snippet loads")
    parser.add_argument("--description", default=None,
                        help="model-card description (Markdown): text, or @FILE to read it from a file")
    parser.add_argument("--planner", default=None, help="JSON file of recommended planner settings (planner.json)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the model files of an earlier export in --out (its other files are kept)")
    parser.add_argument("--current-weights", action="store_true",
                        help="a run with weight averaging (EMA): export the raw training weights, not the average")
    args = parser.parse_args(argv)
    metrics = read_json_object(args.metrics, InputError) if args.metrics else None
    planner = read_json_object(args.planner, InputError) if args.planner else None
    train_config = _read_text(args.train_config, "--train-config") if args.train_config else None
    description = args.description
    if description and description.startswith("@"):
        description = _read_text(description[1:], "--description")
    card = {k: v for k, v in (("repo_id", args.repo_id), ("description", description)) if v}
    check_output_path(args.out, kind="model folder", markers=(CONFIG_NAME,))
    check_overwrite(Path(args.out), args.overwrite)
    from simdist.training.module import world_model_from_checkpoint
    from simdist.training.run_state import run_checkpoint

    ckpt = run_checkpoint(args.ckpt)
    model, base = world_model_from_checkpoint(str(ckpt), current_weights=args.current_weights)
    with output_lock(args.out, kind="model folder", markers=(CONFIG_NAME,)):
        out_path = Path(args.out).resolve()  # what a killed export left beside its folder
        remove_stale_temporaries(out_path.parent, target=out_path.name)

        out = model.save_pretrained(
            args.out, base_model=args.base_model or base, metrics=metrics, train_config=train_config,
            tags=args.tag or None, model_card_kwargs=card, extra_files={PLANNER_NAME: planner},
        )
    print(f"exported {ckpt} → {out}")
    return 0
